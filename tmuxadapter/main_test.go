package tmuxadapter

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

var socketSeq atomic.Int64

// TestMain isolates tmux: no inherited $TMUX, a private TMUX_TMPDIR, and a
// check that every server a test started is gone afterwards.
func TestMain(m *testing.M) {
	os.Exit(runIsolated(m))
}

func runIsolated(m *testing.M) int {
	os.Unsetenv("TMUX")
	os.Unsetenv("TMUX_PANE")
	dir, err := os.MkdirTemp("/tmp", "wt")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	os.Setenv("TMUX_TMPDIR", dir)
	code := m.Run()
	if leaked := liveServers(dir); len(leaked) > 0 {
		fmt.Fprintln(os.Stderr, "tmux servers left running:", leaked)
		code = 1
	}
	return code
}

// liveServers kills and returns every server still answering under dir.
func liveServers(dir string) []string {
	socks, _ := filepath.Glob(filepath.Join(dir, "tmux-*", "*"))
	var live []string
	for _, s := range socks {
		if exec.Command("tmux", "-S", s, "list-sessions").Run() == nil {
			live = append(live, filepath.Base(s))
			exec.Command("tmux", "-S", s, "kill-server").Run()
		}
	}
	return live
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
