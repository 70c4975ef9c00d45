package tmuxadapter

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestErrorShowsBatchesShort(t *testing.T) {
	batch := []string{"start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";", "set-option", "-g", "history-limit", "50000",
		";", "new-session", "-d", "-s", "w0-A1", "-c", "/a/very/long/path/" + strings.Repeat("x", 300), "/bin/wave-orchestrator", "agent-run",
		";", "new-session", "-d", "-s", "w0-A2"}
	e := &Error{Args: batch, Stderr: "error creating /tmp/x (Permission denied)\n"}
	want := "tmux start-server ; set-option ×2 ; new-session ×2: error creating /tmp/x (Permission denied)"
	if e.Error() != want {
		t.Fatalf("got  %q\nwant %q", e.Error(), want)
	}
	one := &Error{Args: []string{"kill-session", "-t", "=w0-A1", "extra", "words"}, Stderr: "boom"}
	if got := one.Error(); got != "tmux kill-session -t =w0-A1 extra …: boom" {
		t.Fatalf("single command: %q", got)
	}
}

func TestMissingBinaryErrorNamesNoCommand(t *testing.T) {
	err := New("x", WithBinary("/nonexistent/tmux")).NewSessions(context.Background(),
		[]SessionSpec{{Name: "s1", Argv: []string{"/bin/true", "a"}}})
	if !errors.Is(err, ErrBinaryMissing) {
		t.Fatalf("err %v", err)
	}
	if s := err.Error(); strings.Contains(s, "new-session") || strings.Count(s, "binary not found") != 1 {
		t.Fatalf("message %q: want only the missing binary, once", s)
	}
}
