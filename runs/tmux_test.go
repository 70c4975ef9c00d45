package runs

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// tmuxLane is a tmux lane in a scratch repository, its server killed at
// the end of the test, and this test binary as the runner.
func tmuxLane(t *testing.T) (*config.Lane, lanes.Layout, string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	lane := &config.Lane{Name: "main", RepoRoot: root,
		Runtime: config.Runtime{HeartbeatIntervalMs: 100, TerminateGraceMs: 2000, TimeoutMinutes: 30}}
	layout := lanes.New(root, "", "", "main")
	t.Cleanup(func() { _ = tmuxadapter.New(layout.Socket()).KillServer(context.Background()) })
	return lane, layout, self
}

// openTmuxRuns is tmuxLane with the lane's Runs open (closed at cleanup).
func openTmuxRuns(t *testing.T) (*config.Lane, lanes.Layout, string, *Runs) {
	t.Helper()
	lane, layout, self := tmuxLane(t)
	r, err := Open(t.Context(), lane, layout, self, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return lane, layout, self, r
}

// localSpec is a run of the local executor (this binary's `local`, which
// waits until it is stopped) as agent A1 of wave 1.
func localSpec(lane *config.Lane, layout lanes.Layout, self string) Spec {
	agent := &wave.Agent{ID: "A1"}
	return Spec{What: "wave 1 agent A1", Lane: lane, Layout: layout, RunID: lanes.RunID(1, "A1", 1),
		RunDir: layout.RunDir(1, "A1", 1), Cwd: lane.RepoRoot, Session: lanes.SessionName(1, "A1"), Prompt: "do the thing\n",
		Build:   executor.BuildInput{Agent: agent, Wave: &wave.Wave{}, Resolved: executor.Resolved{ID: executor.Local}, Attempt: 1, Self: self},
		Minutes: lane.Runtime.TimeoutMinutes, WaveNumber: 1, OrchestratorID: "test"}
}

// observeUntil observes the run each time it changes (and at least every
// 100 ms) until cond holds, for at most 20 s.
func observeUntil(t *testing.T, r *Runs, dir, what string, cond func(runtime.Observation) bool) runtime.Observation {
	t.Helper()
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		obs := r.Observe(t.Context(), dir, time.Now())
		if cond(obs) {
			return obs
		}
		select {
		case <-r.Changed():
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%s: not within 20s; last verdict %+v (err %v)", what, obs.Verdict, obs.Err)
		}
	}
}

// TestARunStartsIsObservedAndTerminates: through runs alone, a payload
// built for a tmux lane starts in its session, is seen running, and ends
// terminated once Terminate returns, its session gone.
func TestARunStartsIsObservedAndTerminates(t *testing.T) {
	lane, layout, self, r := openTmuxRuns(t)
	p, _, err := Payload(localSpec(lane, layout, self))
	if err != nil {
		t.Fatal(err)
	}
	r.Watch(p.RunDir)
	if err := r.Start(t.Context(), []*runtime.Payload{p}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Terminate(context.Background(), p.RunDir, 0, false) })
	observeUntil(t, r, p.RunDir, "the run running", func(o runtime.Observation) bool {
		return o.Verdict.State == runtime.StateRunning
	})
	if err := r.Terminate(t.Context(), p.RunDir, 2*time.Second, false); err != nil {
		t.Fatal(err)
	}
	obs := observeUntil(t, r, p.RunDir, "the run over", func(o runtime.Observation) bool { return o.Verdict.Done })
	if obs.Verdict.State != runtime.StateTerminated {
		t.Errorf("verdict after Terminate: %+v, want %s", obs.Verdict, runtime.StateTerminated)
	}
	if ok, _ := tmuxadapter.New(layout.Socket()).HasSession(t.Context(), p.SessionName); ok {
		t.Errorf("session %s still there after Terminate without keep", p.SessionName)
	}
}

// TestDiscardClearsALeftoverSession: the session an ended run left for
// inspection goes when the next run under its name is to start; one
// already gone is no error.
func TestDiscardClearsALeftoverSession(t *testing.T) {
	lane, layout, self, r := openTmuxRuns(t)
	tm := tmuxadapter.New(layout.Socket())
	p := &runtime.Payload{RunID: "w1-A1-a2", SessionName: lanes.SessionName(1, "A1")}
	if err := tm.NewSession(t.Context(), tmuxadapter.SessionSpec{Name: p.SessionName, Argv: []string{self, "local"}, Cwd: lane.RepoRoot}); err != nil {
		t.Fatal(err)
	}
	if err := r.Discard(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if ok, _ := tm.HasSession(t.Context(), p.SessionName); ok {
		t.Fatalf("session %s survived Discard", p.SessionName)
	}
	if err := r.Discard(t.Context(), p); err != nil {
		t.Fatalf("Discard of a gone session: %v", err)
	}
}

// TestTerminateAllStopsEachRunOnce: `stop`'s path terminates every live
// run given, all at once, through the backend each record names.
func TestTerminateAllStopsEachRunOnce(t *testing.T) {
	lane, layout, self, r := openTmuxRuns(t)
	var ps []*runtime.Payload
	for _, id := range []string{"A1", "A2"} {
		s := localSpec(lane, layout, self)
		s.What, s.RunID, s.RunDir, s.Session = "wave 1 agent "+id, lanes.RunID(1, id, 1), layout.RunDir(1, id, 1), lanes.SessionName(1, id)
		s.Build.Agent = &wave.Agent{ID: id}
		p, _, err := Payload(s)
		if err != nil {
			t.Fatal(err)
		}
		r.Watch(p.RunDir)
		ps = append(ps, p)
	}
	if err := r.Start(t.Context(), ps); err != nil {
		t.Fatal(err)
	}
	var recs []*runtime.Record
	for _, p := range ps {
		obs := observeUntil(t, r, p.RunDir, p.AgentID+" running", func(o runtime.Observation) bool {
			return o.Verdict.State == runtime.StateRunning
		})
		recs = append(recs, obs.Record)
	}
	for i, err := range TerminateAll(t.Context(), lane, layout, recs, 2*time.Second) {
		if err != nil {
			t.Errorf("terminate %s: %v", recs[i].RunID, err)
		}
	}
	for _, p := range ps {
		obs := observeUntil(t, r, p.RunDir, p.AgentID+" over", func(o runtime.Observation) bool { return o.Verdict.Done })
		if obs.Verdict.State != runtime.StateTerminated {
			t.Errorf("%s: verdict %+v, want %s", p.AgentID, obs.Verdict, runtime.StateTerminated)
		}
	}
	if _, err := os.Stat(filepath.Join(ps[0].RunDir, lanes.StatusFile)); err != nil {
		t.Errorf("a terminated run leaves its status: %v", err)
	}
}

// TestDiscardAllClearsOnlyTheLeftoverSessionsNamed: a batch of runs about
// to start clears the sessions earlier runs left under their names, in
// one go, and leaves every other session alone.
func TestDiscardAllClearsOnlyTheLeftoverSessionsNamed(t *testing.T) {
	lane, layout, _, r := openTmuxRuns(t)
	var ps []*runtime.Payload
	for _, id := range []string{"A1", "A2", "A3"} {
		ps = append(ps, &runtime.Payload{RunID: "w1-" + id + "-a2", SessionName: lanes.SessionName(1, id)})
	}
	if err := r.DiscardAll(t.Context(), ps); err != nil {
		t.Fatalf("DiscardAll without a server: %v", err)
	}
	tm := tmuxadapter.New(layout.Socket())
	for _, name := range []string{ps[0].SessionName, ps[2].SessionName, "dashboard"} {
		if err := tm.NewSession(t.Context(), tmuxadapter.SessionSpec{Name: name, Argv: []string{"sleep 60"}, Cwd: lane.RepoRoot}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.DiscardAll(t.Context(), append(ps, ps[0])); err != nil {
		t.Fatal(err)
	}
	ss, err := tm.ListSessions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 1 || ss[0].Name != "dashboard" {
		t.Fatalf("sessions after DiscardAll: %+v, want only dashboard", ss)
	}
}
