package tmuxadapter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"regexp"
)

// ErrNoClient is returned by DetachClient when no client shows the session.
var ErrNoClient = errors.New("tmux: no client attached")

var paneIDRe = regexp.MustCompile(`^%[0-9]+$`)

// PaneSession returns the name of the session holding pane, a pane id
// such as "%3" (what tmux puts in $TMUX_PANE).
func (c *Client) PaneSession(ctx context.Context, pane string) (string, error) {
	if !paneIDRe.MatchString(pane) {
		return "", fmt.Errorf("tmux pane id %q: want %%N", pane)
	}
	out, err := c.run(ctx, false, nil, "display-message", "-p", "-t", pane, "#{session_name}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// clientFormat lists a client's name (its tty) and last activity.
var clientFormat = "#{client_name}" + sep + "#{client_activity}"

// DetachClient detaches the most recently active client showing session
// — the one whose user just pressed a key, when several are attached —
// and returns its name. The session and its pane keep running.
func (c *Client) DetachClient(ctx context.Context, session string) (string, error) {
	if err := ValidateName(session); err != nil {
		return "", err
	}
	out, err := c.run(ctx, false, nil, "list-clients", "-t", "="+session, "-F", clientFormat)
	if err != nil {
		return "", err
	}
	name := activeClient(out)
	if name == "" {
		return "", fmt.Errorf("session %s: %w", session, ErrNoClient)
	}
	if _, err := c.run(ctx, true, nil, "detach-client", "-t", name); err != nil {
		return "", err
	}
	return name, nil
}

// activeClient picks the client with the latest activity from
// list-clients output in clientFormat; "" when there is none.
func activeClient(out string) string {
	best, bestAt := "", int64(-1)
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		name, at, ok := strings.Cut(line, sep)
		if !ok || name == "" {
			continue
		}
		n, _ := strconv.ParseInt(at, 10, 64)
		if n > bestAt {
			best, bestAt = name, n
		}
	}
	return best
}

// RespawnPane replaces the command running in session's pane with
// s.Argv (in s.Cwd, with s.Env), killing the old one. Unlike killing and
// recreating the session, clients attached to it stay attached and see
// the new command at once.
func (c *Client) RespawnPane(ctx context.Context, s SessionSpec) error {
	if err := ValidateName(s.Name); err != nil {
		return err
	}
	if len(s.Argv) == 0 {
		return fmt.Errorf("tmux session %s: empty command", s.Name)
	}
	args := []string{"respawn-pane", "-k", "-t", paneTarget(s.Name)}
	if s.Cwd != "" {
		args = append(args, "-c", escapeArg(strings.ReplaceAll(s.Cwd, "#", "##")))
	}
	shown := append([]string(nil), args...)
	for k, v := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("tmux session %s: bad env name %q", s.Name, k)
		}
		args = append(args, "-e", escapeArg(k+"="+v))
		shown = append(shown, "-e", k+"=…")
	}
	for _, w := range s.Argv {
		args = append(args, escapeArg(w))
		shown = append(shown, escapeArg(w))
	}
	if s.Window != "" {
		w := windowName(s.Window)
		for _, a := range []string{";", "rename-window", "-t", paneTarget(s.Name), w} {
			args = append(args, a)
			shown = append(shown, a)
		}
	}
	_, err := c.run(ctx, true, shown, args...)
	return err
}
