package main

import (
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

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
	for _, tc := range []struct{ phase, agent, stage string }{
		{"cont-qa-closure", "A0", "cont-qa-closure"},
		{"implementation", "A1", "cont-qa-closure"},
		{"integrating", "A8", "integrating"},
	} {
		t.Run(tc.phase, func(t *testing.T) { restartedResume(t, tc.phase, tc.agent, tc.stage) })
	}
}

func restartedResume(t *testing.T, phase, slow, stage string) {
	r := newRepo(t)
	agents := append([]agentSpec{implAgent("A1")}, closureAgents()...)
	for i := range agents {
		if agents[i].id == slow {
			agents[i].knobs = append(agents[i].knobs, "local.delay: 3s")
		}
	}
	r.writeWave(0, agents...)
	if res := launch(t, r); res.code != 0 {
		t.Fatalf("launch: %d %s", res.code, res.stderr)
	}
	s := submitFromShell(t, r, "--wave", "0", "--phase", phase)
	var pid int
	waitFor(t, slow+"'s resume run running under the submitted launcher", 60*time.Second, func() bool {
		pid = runState(t, s.StatePath).Pid
		b, err := os.ReadFile(r.layout().RunDir(0, slow, 2) + "/runtime.json")
		return pid > 0 && err == nil && strings.Contains(string(b), `"running"`)
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w := r.run(ctxFor(t), "wait", "--run-id", s.RunID, "--json")
	var rec submittedRun
	if err := json.Unmarshal([]byte(w.stdout), &rec); err != nil || w.code != 0 || rec.Restarts != 1 {
		t.Fatalf("restarted resume: exit %d %v restarts %d\n%s%s", w.code, err, rec.Restarts, w.stdout, w.stderr)
	}
	last := eventsSinceLastStart(r.events(), 0)
	if got := stageActions(last, stage); len(got) < 2 || got[0] != state.StageRunning || got[len(got)-1] != state.StagePassed {
		t.Fatalf("%s in the restarted run: %v, want running then passed", stage, got)
	}
	launched, adopted := agentStarts(last)
	if launched[slow]+adopted[slow] != 1 {
		t.Fatalf("%s in the restarted run: launched %d adopted %d, want it run once", slow, launched[slow], adopted[slow])
	}
}
