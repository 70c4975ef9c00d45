package spend

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

func tokens(n int64) *usage.Usage { return &usage.Usage{InputTokens: &n} }

func writeRecord(t *testing.T, dir, agent string, attempt int, u *usage.Usage, started time.Time) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rec := runtime.Record{RunID: agent, AgentID: agent, Attempt: attempt, ExecutorID: "codex", StartedAt: started, Usage: u}
	if err := runtime.WriteJSON(filepath.Join(dir, lanes.RuntimeFile), rec); err != nil {
		t.Fatal(err)
	}
}

// Each run directory counts once: an adopted run (a second started event
// for the same directory) once, a retry on its own, and a directory
// pruned since from the usage its finished event carried.
func TestWaveRunsCountEachRunDirectoryOnce(t *testing.T) {
	root := t.TempDir()
	l := lanes.New(root, ".wave", "", "main")
	now := time.Now()
	a1, a2, pruned := l.RunDir(0, "A1", 1), l.RunDir(0, "A1", 2), l.RunDir(0, "A2", 1)
	writeRecord(t, a1, "A1", 1, tokens(100), now)
	writeRecord(t, a2, "A1", 2, tokens(40), now)
	for _, ev := range []state.Event{
		state.NewEvent("main", 0, state.EntityAgentRun, "x", "started", 1, map[string]any{"agentId": "A1", "runDir": a1}),
		state.NewEvent("main", 0, state.EntityAgentRun, "x", "started", 1, map[string]any{"agentId": "A1", "runDir": a1, "adopted": true}),
		state.NewEvent("main", 0, state.EntityAgentRun, "x", "started", 1, map[string]any{"agentId": "A2", "runDir": pruned}),
		state.NewEvent("main", 0, state.EntityAgentRun, "x", "completed", 1, state.Data(state.AgentRunData{AgentID: "A2", RunDir: pruned, Usage: tokens(7)})),
	} {
		if err := state.Append(l.EventsPath(), ev); err != nil {
			t.Fatal(err)
		}
	}
	runs := WaveRuns(l)
	if len(runs) != 3 || Total(runs).Tokens() != 147 {
		t.Fatalf("%d runs, %d tokens; want 3 runs, 147 tokens: %+v", len(runs), Total(runs).Tokens(), runs)
	}
	rows, err := Group(runs, "agent")
	if err != nil || len(rows) != 2 || rows[0].Key != "wave 0 A1" || rows[0].Runs != 2 || rows[0].Usage.Tokens() != 140 || rows[1].Usage.Tokens() != 7 {
		t.Fatalf("by agent %+v %v", rows, err)
	}
}

func TestBacklogRunsByIssueIncludeReviews(t *testing.T) {
	dir := t.TempDir()
	writeRecord(t, filepath.Join(dir, "runs", "i3-a1"), "w3", 1, tokens(10), time.Now())
	writeRecord(t, filepath.Join(dir, "runs", "i3-a2"), "w3", 2, tokens(20), time.Now())
	writeRecord(t, filepath.Join(dir, "reviews", "i3-r1"), "r3", 1, tokens(5), time.Now())
	writeRecord(t, filepath.Join(dir, "runs", "i12-a1"), "w12", 1, nil, time.Now())
	os.MkdirAll(filepath.Join(dir, "runs", "junk"), 0o755)
	runs := BacklogRuns("main", dir)
	by := ByIssue(runs)
	if len(runs) != 4 || by[3].Tokens() != 35 || by[12].Known() {
		t.Fatalf("runs %d, by issue %+v", len(runs), by)
	}
	rows, _ := Group(runs, "issue")
	if len(rows) != 2 || rows[0].Key != "#3" || rows[1].Key != "#12" || rows[1].Usage.Known() {
		t.Fatalf("rows %+v", rows)
	}
}

func TestGroupFilterAndSince(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	w0, w2, w10 := 0, 2, 10
	old, recent := now.Add(-10*24*time.Hour), now.Add(-time.Hour)
	model := "gpt-5"
	runs := []Run{
		{Kind: KindWave, Wave: &w10, Agent: "A1", Executor: "codex", StartedAt: &recent, Usage: &usage.Usage{InputTokens: ptr(1), Model: &model}},
		{Kind: KindWave, Wave: &w2, Agent: "A1", Executor: "claude", StartedAt: &old, Usage: tokens(2)},
		{Kind: KindWave, Wave: &w0, Agent: "A2", Executor: "", StartedAt: &recent},
	}
	cases := []struct {
		by   string
		keys []string
	}{
		{"wave", []string{"wave 0", "wave 2", "wave 10"}},
		{"executor", []string{"(unknown)", "claude", "codex"}},
		{"model", []string{"(unknown)", "gpt-5"}},
		{"issue", []string{"(wave runs)"}},
	}
	for _, c := range cases {
		rows, err := Group(runs, c.by)
		if err != nil || len(rows) != len(c.keys) {
			t.Fatalf("%s: %+v %v", c.by, rows, err)
		}
		for i, k := range c.keys {
			if rows[i].Key != k {
				t.Errorf("%s: row %d is %q, want %q", c.by, i, rows[i].Key, k)
			}
		}
	}
	if _, err := Group(runs, "colour"); err == nil {
		t.Error("--by colour accepted")
	}
	since, err := ParseSince("7d", now)
	if err != nil || len(Filter(runs, nil, since)) != 2 || len(Filter(runs, &w2, time.Time{})) != 1 {
		t.Fatalf("filter: since %v %v", since, err)
	}
	if d, err := ParseSince("36h", now); err != nil || !d.Equal(now.Add(-36*time.Hour)) {
		t.Errorf("36h: %v %v", d, err)
	}
	for _, bad := range []string{"7x", "-1d", "d"} {
		if _, err := ParseSince(bad, now); err == nil {
			t.Errorf("--since %q accepted", bad)
		}
	}
}

func ptr(n int64) *int64 { return &n }
