package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// submittedRuns reads the lane's submitted-run records, oldest first.
func submittedRuns(t *testing.T, r *testRepo) []submittedRun {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(r.layout().StateDir, "submitted", "*.json"))
	slices.Sort(names)
	var out []submittedRun
	for _, n := range names {
		out = append(out, runState(t, n))
	}
	return out
}

func autonomousJSON(t *testing.T, r *testRepo, args ...string) (autoResult, result) {
	t.Helper()
	res := r.run(ctxFor(t), append([]string{"autonomous", "--json"}, args...)...)
	var out autoResult
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		t.Fatalf("autonomous %v: exit %d, not JSON: %v\n%s%s", args, res.code, err, res.stdout, res.stderr)
	}
	return out, res
}

// autonomous runs each wave not yet completed as its own submitted run,
// lowest first, leaves completed waves alone, and says the lane completed.
func TestAutonomousRunsTheRemainingWavesOneSubmittedRunEach(t *testing.T) {
	r := newRepo(t)
	for n := 0; n <= 2; n++ {
		r.writeWave(n, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	}
	if res := launch(t, r, "--end-wave", "0"); res.code != 0 {
		t.Fatalf("launch: %d %s", res.code, res.stderr)
	}
	out, res := autonomousJSON(t, r)
	if res.code != 0 || out.Result != laneCompleted || len(out.Waves) != 2 || out.Waves[0].Wave != 1 || out.Waves[1].Wave != 2 {
		t.Fatalf("autonomous: exit %d %+v\n%s", res.code, out, res.stderr)
	}
	runs := submittedRuns(t, r)
	if len(runs) != 2 {
		t.Fatalf("%d submitted runs, want one per remaining wave: %+v", len(runs), runs)
	}
	for i, want := range []string{"--start-wave=1", "--start-wave=2"} {
		if !slices.Contains(runs[i].Args, want) || !slices.Contains(runs[i].Args, "--no-dashboard=true") || runs[i].State != runCompleted {
			t.Fatalf("run %d: %s %v, want %s with no dashboard, completed", i, runs[i].State, runs[i].Args, want)
		}
	}
	again := r.run(ctxFor(t), "autonomous")
	if again.code != 0 || !strings.Contains(again.stdout, "lane main: completed (no wave run)") || len(submittedRuns(t, r)) != 2 {
		t.Fatalf("autonomous on a completed lane: exit %d %s%s", again.code, again.stdout, again.stderr)
	}
}

// autonomous stops with 43 before a wave while a question waits for a
// person, and while an open blocking record holds the wave, naming it;
// once answered and resolved it goes on.
func TestAutonomousStopsForAQuestionAndForABlockingRecord(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	r.writeWave(1, append([]agentSpec{implAgent("B1")}, closureAgents()...)...)
	if res := launch(t, r, "--end-wave", "0"); res.code != 0 {
		t.Fatalf("launch: %d %s", res.code, res.stderr)
	}
	q := postRecord(t, r, "-a", "A1", "--kind", "human-feedback", "--summary", "ship the migration in wave 1?")
	out, res := autonomousJSON(t, r)
	if res.code != exitNeedsHuman || out.Result != laneNeedsHuman || out.StoppedAt == nil || *out.StoppedAt != 1 || !strings.Contains(out.Why, q) || len(submittedRuns(t, r)) != 0 {
		t.Fatalf("autonomous with a pending question: exit %d %+v", res.code, out)
	}
	if res := r.run(ctxFor(t), "coord", "act", "answer-human", q, "--response", "yes"); res.code != 0 {
		t.Fatalf("answer: %d %s", res.code, res.stderr)
	}
	b := r.run(ctxFor(t), "coord", "post", "-w", "1", "-a", "B1", "--kind", "blocker", "--summary", "waiting on the schema", "--json")
	var blocker struct {
		ID string `json:"id"`
	}
	if b.code != 0 || json.Unmarshal([]byte(b.stdout), &blocker) != nil {
		t.Fatalf("post blocker: %d %s", b.code, b.stderr)
	}
	text := r.run(ctxFor(t), "autonomous")
	if text.code != exitNeedsHuman || !strings.Contains(text.stdout, "open blocking record") || !strings.Contains(text.stdout, blocker.ID) {
		t.Fatalf("autonomous with an open blocker: exit %d %s%s", text.code, text.stdout, text.stderr)
	}
	if res := r.run(ctxFor(t), "coord", "act", "resolve", blocker.ID); res.code != 0 {
		t.Fatalf("resolve: %d %s", res.code, res.stderr)
	}
	if out, res := autonomousJSON(t, r); res.code != 0 || out.Result != laneCompleted {
		t.Fatalf("autonomous after answer and resolve: exit %d %+v %s", res.code, out, res.stderr)
	}
}

// A wave that keeps failing is submitted --max-attempts-per-wave times,
// then autonomous stops with the wave's exit code; later waves never run.
func TestAutonomousStopsOnAWaveFailingAfterItsAttempts(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.fail-attempts: 9")}, closureAgents()...)...)
	r.writeWave(1, append([]agentSpec{implAgent("B1")}, closureAgents()...)...)
	out, res := autonomousJSON(t, r, "--max-attempts-per-wave", "2", "--max-retries-per-wave", "0")
	if res.code != exitFailed || out.Result != laneFailed || len(out.Waves) != 1 || len(out.Waves[0].RunIDs) != 2 || !strings.Contains(out.Why, "after 2 attempt(s)") {
		t.Fatalf("autonomous over a failing wave: exit %d %+v", res.code, out)
	}
	for _, run := range submittedRuns(t, r) {
		if slices.Contains(run.Args, "--start-wave=1") {
			t.Fatalf("wave 1 ran after wave 0 failed: %+v", run)
		}
	}
}

// The reference's autonomous flags parse; ignored ones say so once;
// range flags are refused since autonomous picks the waves.
func TestAutonomousAcceptsTheReferenceFlags(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	if res := launch(t, r); res.code != 0 {
		t.Fatalf("launch: %d %s", res.code, res.stderr)
	}
	res := r.run(ctxFor(t), "autonomous", "--timeout-minutes", "30", "--max-retries-per-wave", "2", "--max-attempts-per-wave", "3",
		"--agent-rate-limit-retries", "1", "--agent-rate-limit-base-delay-seconds", "5", "--agent-rate-limit-max-delay-seconds", "60",
		"--agent-launch-stagger-ms", "100", "--orchestrator-id", "ci-autonomous", "--resident-orchestrator", "--executor", "local",
		"--codex-sandbox", "workspace-write", "--dashboard", "--keep-sessions", "--keep-terminals", "--no-telemetry", "--project", filepath.Base(r.root))
	if res.code != 0 || !strings.Contains(res.stdout, "completed") {
		t.Fatalf("autonomous with the reference's flags: exit %d %s%s", res.code, res.stdout, res.stderr)
	}
	for _, flag := range []string{"--orchestrator-id", "--resident-orchestrator", "--keep-terminals", "--no-telemetry"} {
		if n := strings.Count(res.stderr, "ignored: "+flag+" "); n != 1 {
			t.Errorf("%d `ignored: %s` lines, want 1:\n%s", n, flag, res.stderr)
		}
	}
	if res := r.run(ctxFor(t), "autonomous", "--start-wave", "1"); res.code != exitUsage || !strings.Contains(res.stderr, "--start-wave") {
		t.Fatalf("autonomous --start-wave: exit %d %s", res.code, res.stderr)
	}
	if res := r.run(ctxFor(t), "autonomous", "--max-attempts-per-wave", "0"); res.code != exitUsage {
		t.Fatalf("autonomous --max-attempts-per-wave 0: exit %d %s", res.code, res.stderr)
	}
}
