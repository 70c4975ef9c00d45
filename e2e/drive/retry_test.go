package drive

import (
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// eventsSinceLastStart returns the events of wave n's last wave run.
func eventsSinceLastStart(evs []state.Event, n int) []state.Event {
	start := 0
	for i, ev := range evs {
		if ev.Wave == n && ev.EntityType == state.EntityWaveRun && ev.Action == "started" {
			start = i
		}
	}
	return evs[start:]
}

// stageActions lists what happened to closure stage phase in evs.
func stageActions(evs []state.Event, phase string) []string {
	var out []string
	for _, ev := range evs {
		if ev.EntityType == state.EntityClosure && ev.Data["phase"] == phase {
			out = append(out, ev.Action)
		}
	}
	return out
}

// A submitted `resume --phase P` whose launcher is killed with SIGKILL
// while P's agent runs is restarted by the watcher, and the restarted
// launcher runs phase P (adopting the live run), not skipping it as done.
func TestRestartedSubmittedResumeRerunsTheAskedPhase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ phase, agent, stage string }{
		{"cont-qa-closure", "A0", "cont-qa-closure"},
		{"implementation", "A1", "cont-qa-closure"},
		{"integrating", "A8", "integrating"},
	} {
		t.Run(tc.phase, func(t *testing.T) { restartedResume(t, tc.phase, tc.agent, tc.stage) })
	}
}

func restartedResume(t *testing.T, phase, slow, stage string) {
	r := e2etest.NewRepo(t)
	agents := append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)
	for i := range agents {
		if agents[i].Id == slow {
			agents[i].Knobs = append(agents[i].Knobs, "local.delay: 3s")
		}
	}
	r.WriteWave(0, agents...)
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("launch: %d %s", res.Code, res.Stderr)
	}
	s := submitFromShell(t, r, "--wave", "0", "--phase", phase)
	var pid int
	e2etest.WaitFor(t, slow+"'s resume run running under the submitted launcher", 60*time.Second, func() bool {
		pid = runState(t, s.StatePath).Pid
		b, err := os.ReadFile(r.Layout().RunDir(0, slow, 2) + "/runtime.json")
		return pid > 0 && err == nil && strings.Contains(string(b), `"running"`)
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w := r.Run(e2etest.Context(t), "wait", "--run-id", s.RunID, "--json")
	var rec e2etest.SubmittedRun
	if err := json.Unmarshal([]byte(w.Stdout), &rec); err != nil || w.Code != 0 || rec.Restarts != 1 {
		t.Fatalf("restarted resume: exit %d %v restarts %d\n%s%s", w.Code, err, rec.Restarts, w.Stdout, w.Stderr)
	}
	last := eventsSinceLastStart(r.Events(), 0)
	if got := stageActions(last, stage); len(got) < 2 || got[0] != state.StageRunning || got[len(got)-1] != state.StagePassed {
		t.Fatalf("%s in the restarted run: %v, want running then passed", stage, got)
	}
	launched, adopted := e2etest.AgentStarts(last)
	if launched[slow]+adopted[slow] != 1 {
		t.Fatalf("%s in the restarted run: launched %d adopted %d, want it run once", slow, launched[slow], adopted[slow])
	}
}

// `retry apply --resume-phase` is followed by the next launch of the wave
// (closure before the phase is skipped, proven agents reused) and only
// that one: the launch after it selects as usual.
func TestRetryApplyIsFollowedOnceByTheNextLaunch(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("launch: %d %s", res.Code, res.Stderr)
	}
	apply := r.Run(e2etest.Context(t), "retry", "apply", "--wave", "0", "--resume-phase", "cont-qa-closure", "--requested-by", "ops-bot", "--reason", "verdict went stale")
	if apply.Code != 0 {
		t.Fatalf("retry apply: %d %s", apply.Code, apply.Stderr)
	}
	if show := r.Run(e2etest.Context(t), "retry", "show", "--wave", "0"); !strings.Contains(show.Stdout, "phase=cont-qa-closure") || !strings.Contains(show.Stdout, "requested_by=ops-bot") {
		t.Fatalf("retry show: %q", show.Stdout)
	}
	res := e2etest.Launch(t, r)
	if res.Code != 0 || !strings.Contains(res.Stdout, "following the retry override") {
		t.Fatalf("launch with an override: %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	last := eventsSinceLastStart(r.Events(), 0)
	if got := stageActions(last, "integrating"); len(got) != 1 || got[0] != state.StageSkipped {
		t.Fatalf("integrating under the override: %v, want skipped", got)
	}
	if got := stageActions(last, "cont-qa-closure"); len(got) == 0 || got[len(got)-1] != state.StagePassed {
		t.Fatalf("cont-qa-closure under the override: %v, want passed", got)
	}
	if show := r.Run(e2etest.Context(t), "retry", "show", "--wave", "0", "--json"); strings.TrimSpace(show.Stdout) != "null" {
		t.Fatalf("override still pending after its launch: %q", show.Stdout)
	}
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("launch after: %d %s", res.Code, res.Stderr)
	}
	if got := stageActions(eventsSinceLastStart(r.Events(), 0), "integrating"); len(got) == 0 || got[len(got)-1] != state.StagePassed {
		t.Fatalf("integrating in the launch after the override's: %v, want it run", got)
	}
}

// Bad `retry apply` input is a usage error naming what is wrong, and
// records nothing; `retry clear` removes a pending override.
func TestRetryApplyRefusesBadInputAndClearRemovesIt(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--wave", "0"}, "--resume-phase"},
		{[]string{"--wave", "0", "--agent", "Q7"}, `no agent "Q7"`},
		{[]string{"--wave", "0", "--resume-phase", "polishing"}, `unknown phase "polishing"`},
		{[]string{"--wave", "4", "--agent", "A1"}, "no wave 4"},
	} {
		res := r.Run(e2etest.Context(t), append([]string{"retry", "apply"}, tc.args...)...)
		if res.Code != e2etest.ExitUsage || !strings.Contains(res.Stderr, tc.want) {
			t.Errorf("retry apply %v: exit %d %q, want 2 naming %q", tc.args, res.Code, res.Stderr, tc.want)
		}
	}
	if _, err := os.Stat(r.Layout().WaveDir(0) + "/retry-override.json"); !os.IsNotExist(err) {
		t.Fatalf("a refused apply left an override: %v", err)
	}
	if res := r.Run(e2etest.Context(t), "retry", "apply", "-w", "0", "--agent", "A1,A8"); res.Code != 0 {
		t.Fatalf("retry apply: %d %s", res.Code, res.Stderr)
	}
	if res := r.Run(e2etest.Context(t), "retry", "clear", "-w", "0"); res.Code != 0 || !strings.Contains(res.Stdout, "cleared") {
		t.Fatalf("retry clear: %d %s %s", res.Code, res.Stdout, res.Stderr)
	}
	if show := r.Run(e2etest.Context(t), "retry", "show", "-w", "0"); !strings.Contains(show.Stdout, "no retry override pending") {
		t.Fatalf("retry show after clear: %q", show.Stdout)
	}
}

// A submitted launch following a retry override whose launcher is killed
// with SIGKILL mid-phase is restarted by the watcher and still follows
// the override: the restart does not fall back to a plain launch.
func TestRestartedSubmittedLaunchStillFollowsTheRetryOverride(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	agents := append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)
	agents[3].Knobs = []string{"local.delay: 3s"} // A0, cont-QA
	r.WriteWave(0, agents...)
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("launch: %d %s", res.Code, res.Stderr)
	}
	if res := r.Run(e2etest.Context(t), "retry", "apply", "-w", "0", "--resume-phase", "cont-qa-closure"); res.Code != 0 {
		t.Fatalf("retry apply: %d %s", res.Code, res.Stderr)
	}
	s := submitFromShell(t, r)
	var pid int
	e2etest.WaitFor(t, "A0's run under the submitted launcher", 60*time.Second, func() bool {
		pid = runState(t, s.StatePath).Pid
		b, err := os.ReadFile(r.Layout().RunDir(0, "A0", 2) + "/runtime.json")
		return pid > 0 && err == nil && strings.Contains(string(b), `"running"`)
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if w := r.Run(e2etest.Context(t), "wait", "--run-id", s.RunID); w.Code != 0 {
		t.Fatalf("restarted launch: exit %d\n%s%s", w.Code, w.Stdout, w.Stderr)
	}
	last := eventsSinceLastStart(r.Events(), 0)
	if got := stageActions(last, "integrating"); len(got) != 1 || got[0] != state.StageSkipped {
		t.Fatalf("integrating in the restarted launch: %v, want skipped (the override's phase is cont-qa-closure)", got)
	}
	launched, adopted := e2etest.AgentStarts(last)
	if launched["A0"]+adopted["A0"] != 1 || launched["A8"] != 0 {
		t.Fatalf("restarted launch ran A0 %d+%d times and A8 %d times, want A0 once and A8 never", launched["A0"], adopted["A0"], launched["A8"])
	}
	if _, err := os.Stat(r.Layout().WaveDir(0) + "/retry-override.json"); !os.IsNotExist(err) {
		t.Fatalf("override left after the run that followed it: %v", err)
	}
}
