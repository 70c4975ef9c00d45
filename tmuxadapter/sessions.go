package tmuxadapter

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

// ServerOptions are set on every session-creating invocation, BEFORE its
// first new-session: a separate call races with panes that exit at once
// (measured: the session and server were gone 3/3 times).
var serverOptions = [][]string{
	{"set-option", "-g", "remain-on-exit", "on"},
	{"set-option", "-g", "history-limit", "50000"},
	{"set-option", "-g", "window-size", "latest"},
}

// SessionSpec describes one session to create.
type SessionSpec struct {
	Name string
	// Argv is the pane command. One word runs through sh -c; several are
	// executed directly by tmux (execvp), without a shell.
	Argv    []string
	Cwd     string
	Env     map[string]string // new-session -e: reaches the pane's process
	Width   int
	Height  int
	Options map[string]string // session user options, e.g. @wave_run
	// Window names the session's window (new-session -n), so a status
	// line or choose-tree shows the agent rather than the binary; tmux
	// turns automatic-rename off for a window named this way.
	Window string
}

var nameRe = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ValidateName rejects session names tmux would rewrite or misparse.
func ValidateName(name string) error {
	if !nameRe.MatchString(name) {
		return fmt.Errorf("tmux session name %q: must match %s", name, nameRe)
	}
	return nil
}

// escapeArg protects a word from tmux's command-line parser: a trailing ';'
// would end the command, so it is written as "\;".
func escapeArg(s string) string {
	if strings.HasSuffix(s, ";") {
		return s[:len(s)-1] + `\;`
	}
	return s
}

// windowName makes untrusted text a literal window name: -n is
// format-expanded, and "#(cmd)" in a format runs a shell command, so '#'
// is doubled; what termtext would escape (controls, bidi and invisible
// characters) is dropped, as tmux shows the name in its status line.
func windowName(s string) string {
	s = strings.Map(func(r rune) rune {
		if termtext.Unsafe(r) {
			return -1
		}
		return r
	}, s)
	return escapeArg(strings.ReplaceAll(s, "#", "##"))
}

// target is an exact-match session target for commands taking a pane or
// window ("=name:"), which a bare "=name" does not satisfy.
func paneTarget(name string) string { return "=" + name + ":" }

// newSessionArgs builds one new-session command plus its option tags, and
// the same with env values elided for error messages.
func newSessionArgs(s SessionSpec) (args, shown []string, err error) {
	if err := ValidateName(s.Name); err != nil {
		return nil, nil, err
	}
	if len(s.Argv) == 0 {
		return nil, nil, fmt.Errorf("tmux session %s: empty command", s.Name)
	}
	add := func(a, sh string) { args = append(args, a); shown = append(shown, sh) }
	add("new-session", "new-session")
	add("-d", "-d")
	add("-s", "-s")
	add(s.Name, s.Name)
	if s.Cwd != "" {
		// -c is format-expanded; '#' must be doubled to stay literal.
		add("-c", "-c")
		c := escapeArg(strings.ReplaceAll(s.Cwd, "#", "##"))
		add(c, c)
	}
	if s.Window != "" {
		w := windowName(s.Window)
		add("-n", "-n")
		add(w, w)
	}
	if s.Width > 0 && s.Height > 0 {
		add("-x", "-x")
		add(strconv.Itoa(s.Width), strconv.Itoa(s.Width))
		add("-y", "-y")
		add(strconv.Itoa(s.Height), strconv.Itoa(s.Height))
	}
	for _, k := range slices.Sorted(mapsKeys(s.Env)) {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, nil, fmt.Errorf("tmux session %s: bad env name %q", s.Name, k)
		}
		add("-e", "-e")
		add(escapeArg(k+"="+s.Env[k]), k+"=…")
	}
	for _, w := range s.Argv {
		add(escapeArg(w), escapeArg(w))
	}
	for _, k := range slices.Sorted(mapsKeys(s.Options)) {
		if !strings.HasPrefix(k, "@") || strings.ContainsAny(k, " \t;") {
			return nil, nil, fmt.Errorf("tmux session %s: option %q is not a user option", s.Name, k)
		}
		v := escapeArg(s.Options[k])
		for _, a := range []string{";", "set-option", "-t", paneTarget(s.Name), k, v} {
			add(a, a)
		}
	}
	return args, shown, nil
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// NewSession creates one detached session.
func (c *Client) NewSession(ctx context.Context, s SessionSpec) error {
	return c.NewSessions(ctx, []SessionSpec{s})
}

// NewSessions creates many sessions in ONE tmux invocation (measured: 50
// sessions 0.9 s versus 1.7 s one per call), preceded by the server options.
// tmux stops at the first failing command, so on error some sessions may
// exist; the error names the failing one when tmux does.
func (c *Client) NewSessions(ctx context.Context, specs []SessionSpec) error {
	if len(specs) == 0 {
		return nil
	}
	prefix := []string{"start-server"}
	for _, o := range serverOptions {
		prefix = append(append(prefix, ";"), o...)
	}
	args, shown := slices.Clone(prefix), slices.Clone(prefix)
	size, pending := argsSize(prefix), 0
	seen := map[string]bool{}
	for _, s := range specs {
		if seen[s.Name] {
			return fmt.Errorf("tmux session %s: %w (twice in one batch)", s.Name, ErrSessionExists)
		}
		seen[s.Name] = true
		a, sh, err := newSessionArgs(s)
		if err != nil {
			return err
		}
		// tmux refuses a command line over its message size (16 KiB):
		// flush the batch before it would grow past maxBatch.
		if pending > 0 && size+argsSize(a) > maxBatch {
			if err := c.startBatch(ctx, shown, args); err != nil {
				return err
			}
			args, shown = slices.Clone(prefix), slices.Clone(prefix)
			size, pending = argsSize(prefix), 0
		}
		args = append(append(args, ";"), a...)
		shown = append(append(shown, ";"), sh...)
		size += argsSize(a) + 2
		pending++
	}
	return c.startBatch(ctx, shown, args)
}

// startBatch runs one start-server batch. A server whose last session just
// closed is exiting; a client that reaches it then fails with "server
// exited unexpectedly". Whatever part of the batch ran went with that
// server, and the batch begins with start-server, so it is run again.
func (c *Client) startBatch(ctx context.Context, shown, args []string) error {
	for attempt := 0; ; attempt++ {
		_, err := c.run(ctx, true, shown, args...)
		if err == nil || attempt >= 4 || !errors.Is(err, ErrNoServer) || ctx.Err() != nil {
			return err
		}
		c.logger.Debug("tmux_server_exiting", "socket", c.socket, "attempt", attempt+1)
	}
}

// maxBatch is the byte budget of one batched invocation, under tmux's
// 16 KiB message limit with room for framing.
const maxBatch = 12 * 1024

func argsSize(args []string) int {
	n := 0
	for _, a := range args {
		n += len(a) + 1
	}
	return n
}

// HasSession reports whether the session exists; no server means false.
func (c *Client) HasSession(ctx context.Context, name string) (bool, error) {
	if err := ValidateName(name); err != nil {
		return false, err
	}
	_, err := c.run(ctx, false, nil, "has-session", "-t", "="+name)
	if IsGone(err) {
		return false, nil
	}
	return err == nil, err
}

// optionRe is a user option name (tmux's own options are not ours to set).
var optionRe = regexp.MustCompile(`^@[A-Za-z0-9_-]+$`)

// SetSessionOption sets user option name (e.g. "@wave_exit") on a session.
func (c *Client) SetSessionOption(ctx context.Context, session, name, value string) error {
	if err := ValidateName(session); err != nil {
		return err
	}
	if !optionRe.MatchString(name) {
		return fmt.Errorf("tmux option name %q: must match %s", name, optionRe)
	}
	_, err := c.run(ctx, true, nil, "set-option", "-t", paneTarget(session), name, escapeArg(value))
	return err
}

// KillSession kills a session. A session or server already gone is success.
func (c *Client) KillSession(ctx context.Context, name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	_, err := c.run(ctx, true, nil, "kill-session", "-t", "="+name)
	if IsGone(err) {
		return nil
	}
	return err
}

// idRe is a session id as tmux prints #{session_id}.
var idRe = regexp.MustCompile(`^\$[0-9]+$`)

// KillListed kills the session s of a listing, if it still exists. A
// name passes to the next session made under it the moment its session
// is gone, so a kill by name decided on a listing may reach that one;
// an id is never reused while its server lives. The kill is one tmux
// command that checks the server is still the one listed (a new server
// numbers its sessions from $0 again) and kills by id.
func (c *Client) KillListed(ctx context.Context, s Session) error {
	if !idRe.MatchString(s.ID) || s.Server <= 0 {
		return fmt.Errorf("tmux session %q: no id and server pid listed (%q, %d)", s.Name, s.ID, s.Server)
	}
	_, err := c.run(ctx, true, nil, "if-shell", "-F", "#{==:#{pid},"+strconv.Itoa(s.Server)+"}", "kill-session -t '"+s.ID+"'")
	if IsGone(err) {
		return nil
	}
	return err
}

// KillSessions kills every named session that exists: one list-sessions,
// then one tmux invocation (per maxBatch of arguments) killing the live
// ones. tmux skips the rest of a command list after a failing command, so
// a batch that fails because a session went away meanwhile is redone one
// session at a time. Sessions or a server already gone are success.
func (c *Client) KillSessions(ctx context.Context, names []string) error {
	want := map[string]bool{}
	for _, n := range names {
		if err := ValidateName(n); err != nil {
			return err
		}
		want[n] = true
	}
	if len(want) == 0 {
		return nil
	}
	live, err := c.ListSessions(ctx)
	if err != nil {
		return err
	}
	var batch []string
	for _, s := range live {
		if !want[s.Name] {
			continue
		}
		want[s.Name] = false // listed twice: killed once
		if len(batch) > 0 && argsSize(killArgs(batch)) > maxBatch {
			if err := c.killBatch(ctx, batch); err != nil {
				return err
			}
			batch = nil
		}
		batch = append(batch, s.Name)
	}
	return c.killBatch(ctx, batch)
}

func killArgs(names []string) []string {
	var args []string
	for i, n := range names {
		if i > 0 {
			args = append(args, ";")
		}
		args = append(args, "kill-session", "-t", "="+n)
	}
	return args
}

func (c *Client) killBatch(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	_, err := c.run(ctx, true, nil, killArgs(names)...)
	if err == nil || errors.Is(err, ErrNoServer) {
		return nil
	}
	if !IsGone(err) || len(names) == 1 {
		return err
	}
	for _, n := range names {
		if err := c.KillSession(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// KillServer kills the whole server. No server is success.
func (c *Client) KillServer(ctx context.Context) error {
	_, err := c.run(ctx, true, nil, "kill-server")
	if errors.Is(err, ErrNoServer) {
		return nil
	}
	return err
}

// Capture returns the last lines of the session's pane, history included.
func (c *Client) Capture(ctx context.Context, session string, lines int) (string, error) {
	if err := ValidateName(session); err != nil {
		return "", err
	}
	if lines <= 0 {
		lines = 100
	}
	return c.run(ctx, false, nil, "capture-pane", "-p", "-J", "-S", "-"+strconv.Itoa(lines), "-t", paneTarget(session))
}

// SendKeys sends key names (e.g. "Enter", "C-c") and text to the pane.
func (c *Client) SendKeys(ctx context.Context, session string, keys ...string) error {
	return c.send(ctx, session, false, keys)
}

// SendLiteral sends text to the pane verbatim (send-keys -l): no key-name
// lookup, so "Enter" is five characters.
func (c *Client) SendLiteral(ctx context.Context, session, text string) error {
	return c.send(ctx, session, true, []string{text})
}

func (c *Client) send(ctx context.Context, session string, literal bool, keys []string) error {
	if err := ValidateName(session); err != nil {
		return err
	}
	args := []string{"send-keys", "-t", paneTarget(session)}
	if literal {
		args = append(args, "-l")
	}
	shown := slices.Clone(args)
	for _, k := range keys {
		args = append(args, escapeArg(k))
		shown = append(shown, "…")
	}
	_, err := c.run(ctx, true, shown, args...)
	return err
}

// AttachArgv is the command that shows session to a user: attach-session
// from outside tmux, switch-client from inside a client of the same server.
// It never starts a server, so it needs no -f.
func (c *Client) AttachArgv(session string, insideTmux bool) []string {
	if insideTmux {
		return c.clientArgv("switch-client", "-t", "="+session)
	}
	return c.clientArgv("attach-session", "-t", "="+session)
}

// Version returns `tmux -V` (e.g. "tmux 3.3a").
func (c *Client) Version(ctx context.Context) (string, error) {
	out, err := c.run(ctx, false, nil, "-V")
	return strings.TrimSpace(out), err
}

// Command runs one tmux command as given on the client's server and
// returns its output: for test harnesses and diagnostics that need a verb
// this package has no method for (rename-session, list-clients …), so that
// they too go through the one place tmux is run, with its isolation from
// the user's config and its typed errors.
func (c *Client) Command(ctx context.Context, args ...string) (string, error) {
	return c.run(ctx, true, nil, args...)
}
