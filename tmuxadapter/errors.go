package tmuxadapter

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, classified from tmux's stderr (never from argv, which may
// hold a prompt or a path chosen by a user).
var (
	ErrNoServer        = errors.New("tmux: no server running")
	ErrSessionNotFound = errors.New("tmux: session not found")
	ErrSessionExists   = errors.New("tmux: session already exists")
	ErrBinaryMissing   = errors.New("tmux: binary not found")
	ErrTimeout         = errors.New("tmux: timed out")
	// errTransient marks resource exhaustion worth retrying.
	errTransient = errors.New("tmux: resource temporarily unavailable")
)

// Error is a failed tmux invocation. Args never include environment values.
type Error struct {
	Args   []string
	Stderr string
	Err    error // one of the sentinels, or the exec error
}

func (e *Error) Error() string {
	if errors.Is(e.Err, ErrBinaryMissing) {
		// Which command was about to run does not help: none can.
		return e.Err.Error()
	}
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("tmux %s: %s", shownCommand(e.Args), msg)
}

// shownCommand is the argv of a failed call as errors show it: one
// command with its first words, or a batch as its subcommands with
// counts ("start-server ; set-option ×3 ; new-session ×2"): a batch of
// new-sessions runs to kilobytes and may hold paths of no interest.
func shownCommand(args []string) string {
	var cmds [][]string
	cur := []string{}
	for _, a := range args {
		if a == ";" {
			cmds, cur = append(cmds, cur), []string{}
			continue
		}
		cur = append(cur, a)
	}
	cmds = append(cmds, cur)
	if len(cmds) == 1 {
		w := cmds[0]
		if len(w) > 4 {
			w = append(w[:4:4], "…")
		}
		return strings.Join(w, " ")
	}
	var parts []string
	for i := 0; i < len(cmds); {
		j := i
		for j+1 < len(cmds) && len(cmds[j+1]) > 0 && len(cmds[i]) > 0 && cmds[j+1][0] == cmds[i][0] {
			j++
		}
		name := ""
		if len(cmds[i]) > 0 {
			name = cmds[i][0]
		}
		if j > i {
			name += fmt.Sprintf(" ×%d", j-i+1)
		}
		parts = append(parts, name)
		i = j + 1
	}
	return strings.Join(parts, " ; ")
}

func (e *Error) Unwrap() error { return e.Err }

// classify maps tmux's stderr onto a sentinel, or nil when it names none.
func classify(stderr string) error {
	s := strings.ToLower(stderr)
	switch {
	case strings.Contains(s, "no server running"),
		strings.Contains(s, "error connecting to"),
		strings.Contains(s, "server exited unexpectedly"),
		strings.Contains(s, "lost server"):
		return ErrNoServer
	case strings.Contains(s, "duplicate session"):
		return ErrSessionExists
	case strings.Contains(s, "can't find session"),
		strings.Contains(s, "no such session"),
		strings.Contains(s, "can't find pane"),
		strings.Contains(s, "can't find window"),
		strings.Contains(s, "session not found"),
		// A server whose last session was just killed answers so for any
		// target until it has exited: no session of any name is there.
		strings.Contains(s, "no current target"):
		return ErrSessionNotFound
	case strings.Contains(s, "resource temporarily unavailable"),
		strings.Contains(s, "too many open files"),
		strings.Contains(s, "cannot allocate memory"):
		return errTransient
	}
	return nil
}

// IsGone reports whether err means the session (or its whole server) no
// longer exists: the definitive answers a kill path treats as success.
func IsGone(err error) bool {
	return errors.Is(err, ErrNoServer) || errors.Is(err, ErrSessionNotFound)
}
