package runs

import (
	"os"
	"slices"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// stop's sweep kills every session left on the lane's server but the
// ones it keeps (the dashboard on --keep-dashboard, a live watcher's
// launcher session); a lane with no tmux server has nothing to kill.
func TestKillSessionsLeavesOnlyTheKeptOnes(t *testing.T) {
	_, layout, _ := tmuxLane(t)
	if err := KillSessions(t.Context(), layout); err != nil {
		t.Fatalf("no server yet: %v", err)
	}
	tm := tmuxadapter.New(layout.Socket())
	var specs []tmuxadapter.SessionSpec
	for _, name := range []string{"w0-A1", "w0-A2", "w1-A1", lanes.DashboardSession, lanes.LauncherSession} {
		specs = append(specs, tmuxadapter.SessionSpec{Name: name, Argv: []string{"sleep", "600"}})
	}
	if err := tm.NewSessions(t.Context(), specs); err != nil {
		t.Fatal(err)
	}
	if err := KillSessions(t.Context(), layout, lanes.LauncherSession); err != nil {
		t.Fatal(err)
	}
	ss, err := tm.ListSessions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, s := range ss {
		left = append(left, s.Name)
	}
	if !slices.Equal(left, []string{lanes.LauncherSession}) {
		t.Fatalf("sessions left: %v, want only the launcher's", left)
	}
}

// Live finds the lane's runs still launching or running from their
// records, of one agent when asked, and skips the finished and the
// unreadable.
func TestLiveFindsTheRunsStillGoing(t *testing.T) {
	layout := lanes.New(t.TempDir(), ".wave", "", "main")
	write := func(n int, agent string, disp string) {
		dir := layout.RunDir(n, agent, 1)
		rec := runtime.Record{SchemaVersion: runtime.SchemaVersion, RunID: lanes.RunID(n, agent, 1), AgentID: agent, TerminalDisposition: disp}
		if err := runtime.WriteJSON(dir+"/"+lanes.RuntimeFile, rec); err != nil {
			t.Fatal(err)
		}
	}
	write(0, "A1", runtime.Completed)
	write(0, "A2", runtime.Running)
	write(1, "A1", runtime.Launching)
	write(1, "A3", runtime.Terminated)
	torn := layout.RunDir(1, "A4", 1)
	if err := os.MkdirAll(torn, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(torn+"/"+lanes.RuntimeFile, []byte("{torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	ids := func(recs []*runtime.Record) []string {
		var out []string
		for _, r := range recs {
			out = append(out, r.RunID)
		}
		slices.Sort(out)
		return out
	}
	if got := ids(Live(layout, "")); !slices.Equal(got, []string{lanes.RunID(0, "A2", 1), lanes.RunID(1, "A1", 1)}) {
		t.Fatalf("Live: %v", got)
	}
	if got := ids(Live(layout, "A1")); !slices.Equal(got, []string{lanes.RunID(1, "A1", 1)}) {
		t.Fatalf("Live A1: %v", got)
	}
}
