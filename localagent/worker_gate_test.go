package localagent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A worker held at a test's gate looks like an agent at work: its
// checkout keeps changing while it waits (so a wait longer than
// backlog.noProgressMinutes is not stopped as no progress), and nothing
// of that is left in the checkout once it goes on.
func TestAGatedWorkerKeepsItsCheckoutChangingAndLeavesNothingBehind(t *testing.T) {
	wt, gate := t.TempDir(), filepath.Join(t.TempDir(), "go")
	scratch := filepath.Join(wt, ".local-agent-at-work")
	done := make(chan struct{})
	go func() { defer close(done); waitForGate(gate, wt) }()
	seen := map[string]bool{}
	for deadline := time.Now().Add(time.Minute); len(seen) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the checkout took %d state(s) in a minute of waiting; want it changing", len(seen))
		}
		if b, err := os.ReadFile(scratch); err == nil && len(b) > 0 {
			seen[strings.TrimSpace(string(b))] = true
		}
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the worker did not go on once its gate opened")
	}
	if _, err := os.Stat(scratch); err == nil {
		t.Errorf("%s is left in the checkout after the wait", scratch)
	}
}
