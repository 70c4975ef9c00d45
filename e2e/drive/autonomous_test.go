package drive

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// submittedRuns reads the lane's submitted-run records, oldest first.
func submittedRuns(t *testing.T, r *e2etest.Repo) []e2etest.SubmittedRun {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(r.Layout().StateDir, "submitted", "*.json"))
	slices.Sort(names)
	var out []e2etest.SubmittedRun
	for _, n := range names {
		out = append(out, runState(t, n))
	}
	return out
}

func autonomousJSON(t *testing.T, r *e2etest.Repo, args ...string) (e2etest.AutoResult, e2etest.Result) {
	t.Helper()
	res := r.Run(e2etest.Context(t), append([]string{"autonomous", "--json"}, args...)...)
	var out e2etest.AutoResult
	if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil {
		t.Fatalf("autonomous %v: exit %d, not JSON: %v\n%s%s", args, res.Code, err, res.Stdout, res.Stderr)
	}
	return out, res
}

// autonomous runs each wave not yet completed as its own submitted run,
// lowest first, leaves completed waves alone, and says the lane completed.
func TestAutonomousRunsTheRemainingWavesOneSubmittedRunEach(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	for n := 0; n <= 2; n++ {
		r.WriteWave(n, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	}
	if res := e2etest.Launch(t, r, "--end-wave", "0"); res.Code != 0 {
		t.Fatalf("launch: %d %s", res.Code, res.Stderr)
	}
	out, res := autonomousJSON(t, r)
	if res.Code != 0 || out.Result != e2etest.LaneCompleted || len(out.Waves) != 2 || out.Waves[0].Wave != 1 || out.Waves[1].Wave != 2 {
		t.Fatalf("autonomous: exit %d %+v\n%s", res.Code, out, res.Stderr)
	}
	runs := submittedRuns(t, r)
	if len(runs) != 2 {
		t.Fatalf("%d submitted runs, want one per remaining wave: %+v", len(runs), runs)
	}
	for i, want := range []string{"--start-wave=1", "--start-wave=2"} {
		if !slices.Contains(runs[i].Args, want) || !slices.Contains(runs[i].Args, "--no-dashboard=true") || runs[i].State != e2etest.RunCompleted {
			t.Fatalf("run %d: %s %v, want %s with no dashboard, completed", i, runs[i].State, runs[i].Args, want)
		}
	}
	again := r.Run(e2etest.Context(t), "autonomous")
	if again.Code != 0 || !strings.Contains(again.Stdout, "lane main: completed (no wave run)") || len(submittedRuns(t, r)) != 2 {
		t.Fatalf("autonomous on a completed lane: exit %d %s%s", again.Code, again.Stdout, again.Stderr)
	}
}

// autonomous stops with 43 before a wave while a question waits for a
// person, and while an open blocking record holds the wave, naming it;
// once answered and resolved it goes on.
func TestAutonomousStopsForAQuestionAndForABlockingRecord(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	r.WriteWave(1, append([]e2etest.Agent{e2etest.ImplAgent("B1")}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r, "--end-wave", "0"); res.Code != 0 {
		t.Fatalf("launch: %d %s", res.Code, res.Stderr)
	}
	q := e2etest.PostRecord(t, r, "-a", "A1", "--kind", "human-feedback", "--summary", "ship the migration in wave 1?")
	out, res := autonomousJSON(t, r)
	if res.Code != e2etest.ExitNeedsHuman || out.Result != e2etest.LaneNeedsHuman || out.StoppedAt == nil || *out.StoppedAt != 1 || !strings.Contains(out.Why, q) || len(submittedRuns(t, r)) != 0 {
		t.Fatalf("autonomous with a pending question: exit %d %+v", res.Code, out)
	}
	if res := r.Run(e2etest.Context(t), "coord", "act", "answer-human", q, "--response", "yes"); res.Code != 0 {
		t.Fatalf("answer: %d %s", res.Code, res.Stderr)
	}
	b := r.Run(e2etest.Context(t), "coord", "post", "-w", "1", "-a", "B1", "--kind", "blocker", "--summary", "waiting on the schema", "--json")
	var blocker struct {
		ID string `json:"id"`
	}
	if b.Code != 0 || json.Unmarshal([]byte(b.Stdout), &blocker) != nil {
		t.Fatalf("post blocker: %d %s", b.Code, b.Stderr)
	}
	text := r.Run(e2etest.Context(t), "autonomous")
	if text.Code != e2etest.ExitNeedsHuman || !strings.Contains(text.Stdout, "open blocking record") || !strings.Contains(text.Stdout, blocker.ID) {
		t.Fatalf("autonomous with an open blocker: exit %d %s%s", text.Code, text.Stdout, text.Stderr)
	}
	if res := r.Run(e2etest.Context(t), "coord", "act", "resolve", blocker.ID); res.Code != 0 {
		t.Fatalf("resolve: %d %s", res.Code, res.Stderr)
	}
	if out, res := autonomousJSON(t, r); res.Code != 0 || out.Result != e2etest.LaneCompleted {
		t.Fatalf("autonomous after answer and resolve: exit %d %+v %s", res.Code, out, res.Stderr)
	}
}

// A wave that keeps failing is submitted --max-attempts-per-wave times,
// then autonomous stops with the wave's exit code; later waves never run.
func TestAutonomousStopsOnAWaveFailingAfterItsAttempts(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.fail-attempts: 9")}, e2etest.ClosureAgents()...)...)
	r.WriteWave(1, append([]e2etest.Agent{e2etest.ImplAgent("B1")}, e2etest.ClosureAgents()...)...)
	out, res := autonomousJSON(t, r, "--max-attempts-per-wave", "2", "--max-retries-per-wave", "0")
	if res.Code != e2etest.ExitFailed || out.Result != e2etest.LaneFailed || len(out.Waves) != 1 || len(out.Waves[0].RunIDs) != 2 || !strings.Contains(out.Why, "after 2 attempt(s)") {
		t.Fatalf("autonomous over a failing wave: exit %d %+v", res.Code, out)
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
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("launch: %d %s", res.Code, res.Stderr)
	}
	res := r.Run(e2etest.Context(t), "autonomous", "--timeout-minutes", "30", "--max-retries-per-wave", "2", "--max-attempts-per-wave", "3",
		"--agent-rate-limit-retries", "1", "--agent-rate-limit-base-delay-seconds", "5", "--agent-rate-limit-max-delay-seconds", "60",
		"--agent-launch-stagger-ms", "100", "--orchestrator-id", "ci-autonomous", "--resident-orchestrator", "--executor", "local",
		"--codex-sandbox", "workspace-write", "--dashboard", "--keep-sessions", "--keep-terminals", "--no-telemetry", "--project", filepath.Base(r.Root))
	if res.Code != 0 || !strings.Contains(res.Stdout, "completed") {
		t.Fatalf("autonomous with the reference's flags: exit %d %s%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, flag := range []string{"--orchestrator-id", "--resident-orchestrator", "--keep-terminals", "--no-telemetry"} {
		if n := strings.Count(res.Stderr, "ignored: "+flag+" "); n != 1 {
			t.Errorf("%d `ignored: %s` lines, want 1:\n%s", n, flag, res.Stderr)
		}
	}
	if res := r.Run(e2etest.Context(t), "autonomous", "--start-wave", "1"); res.Code != e2etest.ExitUsage || !strings.Contains(res.Stderr, "--start-wave") {
		t.Fatalf("autonomous --start-wave: exit %d %s", res.Code, res.Stderr)
	}
	if res := r.Run(e2etest.Context(t), "autonomous", "--max-attempts-per-wave", "0"); res.Code != e2etest.ExitUsage {
		t.Fatalf("autonomous --max-attempts-per-wave 0: exit %d %s", res.Code, res.Stderr)
	}
}
