package tmuxadapter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// sep separates -F fields. Printable, so it survives a server started
// without UTF-8 (where a TAB came back as '_'), and unlikely in names.
const sep = "~|w|~"

// Session is one row of list-sessions.
type Session struct {
	Name string
	// ID is the server's id of the session ($N) and Server the server's
	// pid: unlike the name, an id is never given to another session while
	// that server lives (KillListed).
	ID      string
	Server  int
	Created int64  // unix seconds
	Run     string // @wave_run
	Lane    string // @wave_lane
	Agent   string // @wave_agent
}

var sessionFormat = strings.Join([]string{"#{session_name}", "#{session_created}", "#{@wave_run}", "#{@wave_lane}", "#{@wave_agent}", "#{session_id}", "#{pid}"}, sep)

// ListSessions lists the server's sessions in one call; no server is an
// empty list.
func (c *Client) ListSessions(ctx context.Context) ([]Session, error) {
	out, err := c.run(ctx, false, nil, "list-sessions", "-F", sessionFormat)
	if errors.Is(err, ErrNoServer) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseSessions(out)
}

func parseSessions(out string) ([]Session, error) {
	var ss []Session
	for i, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, sep)
		if len(f) != 7 {
			return nil, fmt.Errorf("tmux list-sessions line %d: %d fields, want 7: %q", i+1, len(f), line)
		}
		created, _ := strconv.ParseInt(f[1], 10, 64)
		server, _ := strconv.Atoi(f[6])
		ss = append(ss, Session{Name: f[0], Created: created, Run: f[2], Lane: f[3], Agent: f[4], ID: f[5], Server: server})
	}
	return ss, nil
}

// Pane is the state of a session's first pane.
type Pane struct {
	Pid        int
	Dead       bool
	DeadStatus *int // nil when the pane died by a signal or is alive
	DeadSignal int  // 0 unless killed by a signal
	// ExitOption is the session's @wave_exit: the exit code a runner that
	// could not write it to disk left in tmux (nil when unset).
	ExitOption     *int
	CurrentCommand string
}

// ExitOptionName is the session option behind Pane.ExitOption.
const ExitOptionName = "@wave_exit"

var paneFormat = strings.Join([]string{"#{pane_pid}", "#{pane_dead}", "#{pane_dead_status}", "#{pane_dead_signal}",
	"#{" + ExitOptionName + "}", "#{pane_current_command}"}, sep)

// PaneInfo returns the session's active pane.
func (c *Client) PaneInfo(ctx context.Context, session string) (Pane, error) {
	if err := ValidateName(session); err != nil {
		return Pane{}, err
	}
	out, err := c.run(ctx, false, nil, "display-message", "-p", "-t", paneTarget(session), paneFormat)
	if err != nil {
		return Pane{}, err
	}
	// tmux 3.3a answers display-message for a session that does not exist
	// (on a live server) with empty fields and exit 0: every real pane has
	// a pid, so no pid means the session is gone.
	if pid, _, _ := strings.Cut(out, sep); strings.TrimSpace(pid) == "" {
		return Pane{}, fmt.Errorf("tmux pane info of %s: %w", session, ErrSessionNotFound)
	}
	return parsePane(out)
}

func parsePane(out string) (Pane, error) {
	f := strings.Split(strings.TrimRight(out, "\n"), sep)
	if len(f) != 6 {
		return Pane{}, fmt.Errorf("tmux pane info: %d fields, want 6: %q", len(f), out)
	}
	var p Pane
	var err error
	if p.Pid, err = strconv.Atoi(f[0]); err != nil {
		return Pane{}, fmt.Errorf("tmux pane info: pane_pid %q: %w", f[0], err)
	}
	p.Dead = f[1] == "1"
	if p.Dead && f[2] != "" {
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return Pane{}, fmt.Errorf("tmux pane info: pane_dead_status %q: %w", f[2], err)
		}
		p.DeadStatus = &n
	}
	if f[3] != "" {
		p.DeadSignal, _ = strconv.Atoi(f[3])
	}
	if f[4] != "" {
		n, err := strconv.Atoi(f[4])
		if err != nil {
			return Pane{}, fmt.Errorf("tmux pane info: %s %q: %w", ExitOptionName, f[4], err)
		}
		p.ExitOption = &n
	}
	p.CurrentCommand = f[5]
	return p, nil
}
