package tmuxadapter

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"
)

var socketSeq atomic.Int64

// TestMain isolates tmux and fails the run if a test leaves a server.
// (tmuxadapter/tmuxtest does this for other packages; it imports this one.)
func TestMain(m *testing.M) {
	os.Unsetenv("TMUX")
	os.Unsetenv("TMUX_PANE")
	dir, err := os.MkdirTemp("/tmp", "wt")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("TMUX_TMPDIR", dir)
	code := m.Run()
	if left := KillServers(context.Background(), dir); len(left) > 0 {
		fmt.Fprintln(os.Stderr, "tmux servers left running:", left)
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// newClient returns a client on a fresh socket whose server is killed when
// the test ends.
func newClient(t *testing.T, opts ...Option) *Client {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	c := New(fmt.Sprintf("t%d-%d", os.Getpid(), socketSeq.Add(1)), opts...)
	t.Cleanup(func() { c.KillServer(context.Background()) })
	return c
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
