package tmuxadapter

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/tmuxtest"
)

var socketSeq atomic.Int64

// TestMain isolates tmux and fails the run if a test leaves a server.
func TestMain(m *testing.M) { os.Exit(tmuxtest.Run(m, nil)) }

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
