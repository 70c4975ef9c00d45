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
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	cmd := strings.Join(e.Args, " ")
	if len(cmd) > 200 {
		cmd = cmd[:200] + "…"
	}
	return fmt.Sprintf("tmux %s: %s", cmd, msg)
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
		strings.Contains(s, "session not found"):
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
