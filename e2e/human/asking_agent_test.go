package human

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// The agent whose question holds the wave reads as waiting for input in
// status and status --json (not completed), and its relaunch with the
// answer is its second attempt there.
func TestTheAskingAgentWaitsForInputAndItsRelaunchIsItsSecondAttempt(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	e2etest.AskingWave(r)
	l := e2etest.StartLaunch(t, r)
	q := e2etest.PendingQuestion(t, r, l)
	ctx := e2etest.Context(t)
	a1 := func() state.Agent {
		t.Helper()
		st := r.Run(ctx, "status", "--json")
		var lane state.Lane
		if err := json.Unmarshal([]byte(st.Stdout), &lane); err != nil {
			t.Fatalf("status --json: %v\n%s", err, st.Stdout)
		}
		return e2etest.AgentOf(t, lane, 0, "A1")
	}
	if a := a1(); a.State != "waiting-for-input" || a.Attempt != 1 {
		t.Fatalf("A1 while its question waits: %s attempt %d, want waiting-for-input attempt 1", a.State, a.Attempt)
	}
	row := regexp.MustCompile(`(?m)^\s*A1\s+waiting-for-input\s+1\s`)
	if text := r.Run(ctx, "status"); !row.MatchString(text.Stdout) {
		t.Fatalf("status does not show A1 waiting for input:\n%s", text.Stdout)
	}
	if res := r.Run(ctx, "answer", q.ID, "PostgreSQL 16"); res.Code != 0 {
		t.Fatalf("answer: %d %s", res.Code, res.Stderr)
	}
	if code := l.Wait(t); code != 0 {
		t.Fatalf("launch exit %d\n%s", code, l.Console())
	}
	if a := a1(); a.State != state.AgentCompleted || a.Attempt != 2 {
		t.Fatalf("A1 after its relaunch with the answer: %s attempt %d, want completed attempt 2", a.State, a.Attempt)
	}
	att := regexp.MustCompile(`(?m)^\s*A1\s+completed\s+2\s`)
	if text := r.Run(ctx, "status"); !att.MatchString(text.Stdout) {
		t.Fatalf("status does not show A1's second attempt:\n%s", text.Stdout)
	}
}
