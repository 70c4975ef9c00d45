package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/coord"
)

// An agent that posts a blocking record holds closure: the wave stops with
// exit 43 before any closure agent runs; once the blocker is resolved,
// `resume` (following the resume plan) reuses the implementation agents
// and runs closure.
func TestBlockerHoldsClosureUntilResolved(t *testing.T) {
	r := newRepo(t)
	poster := agentSpec{id: "A3", title: "Schema owner", owns: []string{"src/schema.txt"},
		knobs: []string{"id: shell", "shell.command: " + binPath + " coord post --kind blocker --priority high --summary schema-undecided"}}
	agents := append([]agentSpec{implAgent("A1"), poster}, closureAgents()...)
	r.writeWave(0, agents...)
	res := launch(t, r)
	if res.code != 43 || !strings.Contains(res.stdout, "coordination-blocker-open") {
		t.Fatalf("exit %d, want 43 naming the open blocker\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	launched, _ := agentStarts(r.events())
	if launched["A8"]+launched["A9"]+launched["A0"] != 0 {
		t.Fatalf("closure ran while a blocker was open: %v", launched)
	}
	out := r.run(ctxFor(t), "coord", "list", "--lane", "main", "--wave", "0", "--open", "--json")
	var open []coord.Record
	if err := json.Unmarshal([]byte(out.stdout), &open); err != nil || len(open) != 1 || open[0].AgentID != "A3" {
		t.Fatalf("open records %q (%v)", out.stdout, err)
	}
	if res := r.run(ctxFor(t), "coord", "post", "--lane", "main", "--wave", "0", "--id", open[0].ID, "--status", "resolved"); res.code != 0 {
		t.Fatalf("resolve: %d %s", res.code, res.stderr)
	}
	before := len(r.events())
	res = r.run(ctxFor(t), "resume", "--lane", "main", "--wave", "0", "--no-dashboard")
	if res.code != 0 {
		t.Fatalf("resume exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if got := startOrder(r.events()[before:]); !slices.Equal(got, []string{"A8", "A9", "A0"}) {
		t.Fatalf("resume ran %v, want only closure A8 A9 A0 (A1, A3 reused)", got)
	}
}

// `resume --phase implementation` on a completed wave reruns every
// implementation agent, proven or not, and then all of closure: the phase
// name means what it says.
func TestResumeImplementationPhase(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1"), implAgent("A2")}, closureAgents()...)...)
	if res := launch(t, r); res.code != 0 {
		t.Fatalf("first run exit %d\n%s", res.code, res.stderr)
	}
	before := len(r.events())
	res := r.run(ctxFor(t), "resume", "--lane", "main", "--wave", "0", "--phase", "implementation", "--no-dashboard")
	if res.code != 0 {
		t.Fatalf("resume exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	got := startOrder(r.events()[before:])
	if len(got) != 5 || !slices.Equal(got[2:], []string{"A8", "A9", "A0"}) {
		t.Fatalf("resume ran %v, want A1 and A2, then closure A8 A9 A0", got)
	}
	if impl := got[:2]; !slices.Contains(impl, "A1") || !slices.Contains(impl, "A2") {
		t.Fatalf("resume ran %v, want A1 and A2 first", got)
	}
}

func TestResumeRejectsUnknownPhase(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	res := r.run(ctxFor(t), "resume", "--lane", "main", "--wave", "0", "--phase", "qa")
	if res.code != 2 || !strings.Contains(res.stderr, "security-review") {
		t.Fatalf("exit %d stderr %q: want usage error listing phases", res.code, res.stderr)
	}
}

// With autoClosure.allowAutoDocNoChange (the reference's starter setting)
// the documentation steward is not run when nobody reported a shared-plan
// doc delta — and is run when somebody did.
func TestDocsClosureAutoClosesWithoutSharedPlanDelta(t *testing.T) {
	for _, tc := range []struct {
		docImpact string
		wantA9    int
	}{{"owned", 0}, {"shared-plan", 1}} {
		t.Run(tc.docImpact, func(t *testing.T) {
			r := newRepo(t)
			r.write("wave.config.yaml", testConfig+"  autoClosure:\n    allowAutoDocNoChange: true\n")
			a1 := implAgent("A1")
			a1.docImpact = tc.docImpact
			r.writeWave(0, append([]agentSpec{a1}, closureAgents()...)...)
			if res := launch(t, r); res.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
			}
			launched, _ := agentStarts(r.events())
			if launched["A9"] != tc.wantA9 || launched["A0"] != 1 {
				t.Fatalf("launches %v: want A9 %d times, A0 once", launched, tc.wantA9)
			}
		})
	}
}

// A blocker posted by a closure agent holds the later stages too.
func TestBlockerPostedDuringClosureHoldsTheWave(t *testing.T) {
	r := newRepo(t)
	cl := closureAgents()
	cl[0].knobs = []string{"id: shell", `shell.command: sh -c "` + binPath +
		` coord post --kind blocker --summary contract-drift && echo '[wave-integration] state=ready-for-doc-closure claims=0 conflicts=0 blockers=0'" sh`}
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, cl...)...)
	res := launch(t, r, "--max-retries-per-wave", "0")
	if res.code != 43 || !strings.Contains(res.stdout, "contract-drift") {
		t.Fatalf("exit %d, want 43 naming the blocker\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	launched, _ := agentStarts(r.events())
	if launched["A8"] != 1 || launched["A9"]+launched["A0"] != 0 {
		t.Fatalf("launches %v: later stages ran past an open blocker", launched)
	}
}

// `resume` after the launcher died continues the interrupted run: the
// finished and live runs are adopted, nothing is relaunched.
func TestResumeContinuesAnInterruptedRun(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.delay: 2s"), implAgent("A2")}, closureAgents()...)...)
	killLauncherWhileRunning(t, r, "A1")
	res := r.run(ctxFor(t), "resume", "--lane", "main", "--wave", "0", "--no-dashboard")
	if res.code != 0 || !strings.Contains(res.stdout, "continuing the interrupted run") {
		t.Fatalf("resume exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	launched, adopted := agentStarts(r.events())
	if launched["A1"] != 1 || launched["A2"] != 1 || adopted["A1"] != 1 || adopted["A2"] != 1 {
		t.Fatalf("launched %v adopted %v: want A1 and A2 each launched once and adopted once", launched, adopted)
	}
}
