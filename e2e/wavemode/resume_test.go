package wavemode

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"

	"github.com/wave-orchestrator/wave-orchestrator/coord"
)

// An agent that posts a blocking record holds closure: the wave stops with
// exit 43 before any closure agent runs; once the blocker is resolved,
// `resume` (following the resume plan) reuses the implementation agents
// and runs closure.
func TestBlockerHoldsClosureUntilResolved(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	poster := e2etest.Agent{Id: "A3", Title: "Schema owner", Owns: []string{"src/schema.txt"},
		Knobs: []string{"id: shell", "shell.command: " + e2etest.Bin() + " coord post --kind blocker --priority high --summary schema-undecided"}}
	agents := append([]e2etest.Agent{e2etest.ImplAgent("A1"), poster}, e2etest.ClosureAgents()...)
	r.WriteWave(0, agents...)
	res := e2etest.Launch(t, r)
	if res.Code != 43 || !strings.Contains(res.Stdout, "coordination-blocker-open") {
		t.Fatalf("exit %d, want 43 naming the open blocker\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	launched, _ := e2etest.AgentStarts(r.Events())
	if launched["A8"]+launched["A9"]+launched["A0"] != 0 {
		t.Fatalf("closure ran while a blocker was open: %v", launched)
	}
	out := r.Run(e2etest.Context(t), "coord", "list", "--lane", "main", "--wave", "0", "--open", "--json")
	var open []coord.Record
	if err := json.Unmarshal([]byte(out.Stdout), &open); err != nil || len(open) != 1 || open[0].AgentID != "A3" {
		t.Fatalf("open records %q (%v)", out.Stdout, err)
	}
	if res := r.Run(e2etest.Context(t), "coord", "post", "--lane", "main", "--wave", "0", "--id", open[0].ID, "--status", "resolved"); res.Code != 0 {
		t.Fatalf("resolve: %d %s", res.Code, res.Stderr)
	}
	before := len(r.Events())
	res = r.Run(e2etest.Context(t), "resume", "--lane", "main", "--wave", "0", "--no-dashboard")
	if res.Code != 0 {
		t.Fatalf("resume exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if got := e2etest.StartOrder(r.Events()[before:]); !slices.Equal(got, []string{"A8", "A9", "A0"}) {
		t.Fatalf("resume ran %v, want only closure A8 A9 A0 (A1, A3 reused)", got)
	}
}

// `resume --phase implementation` on a completed wave reruns every
// implementation agent, proven or not, and then all of closure: the phase
// name means what it says.
func TestResumeImplementationPhase(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("first run exit %d\n%s", res.Code, res.Stderr)
	}
	before := len(r.Events())
	res := r.Run(e2etest.Context(t), "resume", "--lane", "main", "--wave", "0", "--phase", "implementation", "--no-dashboard")
	if res.Code != 0 {
		t.Fatalf("resume exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	got := e2etest.StartOrder(r.Events()[before:])
	if len(got) != 5 || !slices.Equal(got[2:], []string{"A8", "A9", "A0"}) {
		t.Fatalf("resume ran %v, want A1 and A2, then closure A8 A9 A0", got)
	}
	if impl := got[:2]; !slices.Contains(impl, "A1") || !slices.Contains(impl, "A2") {
		t.Fatalf("resume ran %v, want A1 and A2 first", got)
	}
}

func TestResumeRejectsUnknownPhase(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	res := r.Run(e2etest.Context(t), "resume", "--lane", "main", "--wave", "0", "--phase", "qa")
	if res.Code != 2 || !strings.Contains(res.Stderr, "security-review") {
		t.Fatalf("exit %d stderr %q: want usage error listing phases", res.Code, res.Stderr)
	}
}

// With autoClosure.allowAutoDocNoChange (the reference's starter setting)
// the documentation steward is not run when nobody reported a shared-plan
// doc delta — and is run when somebody did.
func TestDocsClosureAutoClosesWithoutSharedPlanDelta(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		docImpact string
		wantA9    int
	}{{"owned", 0}, {"shared-plan", 1}} {
		t.Run(tc.docImpact, func(t *testing.T) {
			r := e2etest.NewRepo(t)
			r.Write("wave.config.yaml", e2etest.Config+"  autoClosure:\n    allowAutoDocNoChange: true\n")
			a1 := e2etest.ImplAgent("A1")
			a1.DocImpact = tc.docImpact
			r.WriteWave(0, append([]e2etest.Agent{a1}, e2etest.ClosureAgents()...)...)
			if res := e2etest.Launch(t, r); res.Code != 0 {
				t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
			}
			launched, _ := e2etest.AgentStarts(r.Events())
			if launched["A9"] != tc.wantA9 || launched["A0"] != 1 {
				t.Fatalf("launches %v: want A9 %d times, A0 once", launched, tc.wantA9)
			}
		})
	}
}

// A blocker posted by a closure agent holds the later stages too.
func TestBlockerPostedDuringClosureHoldsTheWave(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	cl := e2etest.ClosureAgents()
	cl[0].Knobs = []string{"id: shell", `shell.command: sh -c "` + e2etest.Bin() +
		` coord post --kind blocker --summary contract-drift && echo '[wave-integration] state=ready-for-doc-closure claims=0 conflicts=0 blockers=0'" sh`}
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, cl...)...)
	res := e2etest.Launch(t, r, "--max-retries-per-wave", "0")
	if res.Code != 43 || !strings.Contains(res.Stdout, "contract-drift") {
		t.Fatalf("exit %d, want 43 naming the blocker\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	launched, _ := e2etest.AgentStarts(r.Events())
	if launched["A8"] != 1 || launched["A9"]+launched["A0"] != 0 {
		t.Fatalf("launches %v: later stages ran past an open blocker", launched)
	}
}

// `resume` after the launcher died continues the interrupted run: the
// finished and live runs are adopted, nothing is relaunched.
func TestResumeContinuesAnInterruptedRun(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 2s"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	e2etest.KillLauncherWhileRunning(t, r, "A1")
	res := r.Run(e2etest.Context(t), "resume", "--lane", "main", "--wave", "0", "--no-dashboard")
	if res.Code != 0 || !strings.Contains(res.Stdout, "continuing the interrupted run") {
		t.Fatalf("resume exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	launched, adopted := e2etest.AgentStarts(r.Events())
	if launched["A1"] != 1 || launched["A2"] != 1 || adopted["A1"] != 1 || adopted["A2"] != 1 {
		t.Fatalf("launched %v adopted %v: want A1 and A2 each launched once and adopted once", launched, adopted)
	}
}
