package launcher

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/dashboard"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// BenchmarkStatusOfAFinishedLane is `status --json`'s work in process
// (Status and the document written) on a finished lane of 200 and of 2,000
// runs: real event log, runtime records and logs. The budgets, for the
// whole process, are in bench/README.md (bench/budgets.sh checks them):
//
//	go test ./launcher -run '^$' -bench StatusOfAFinishedLane -cpuprofile cpu.out
func BenchmarkStatusOfAFinishedLane(b *testing.B) {
	for _, n := range []int{200, 2000} {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			layout := finishedLane(b, n)
			for b.Loop() {
				l, err := Status(context.Background(), layout)
				if err != nil {
					b.Fatal(err)
				}
				if err := dashboard.WriteStatusJSON(io.Discard, l, -1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// finishedLane writes a lane whose one wave ran n agents, each finished
// with its terminal record, log and events.
func finishedLane(b *testing.B, n int) lanes.Layout {
	b.Helper()
	layout := lanes.New(b.TempDir(), "", "p", "main")
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var evs []any
	event := func(entity, id, action string, data map[string]any) {
		ev := state.NewEvent("main", 0, entity, id, action, 1, data)
		at = at.Add(time.Second)
		ev.RecordedAt = at
		evs = append(evs, ev)
	}
	var agents []state.AgentInfo
	for i := range n {
		agents = append(agents, state.AgentInfo{ID: fmt.Sprintf("A%d", i), Title: "part", Role: "implementation", Executor: "local"})
	}
	event(state.EntityWaveRun, "wave-0", "started", state.Data(state.WaveStarted{File: "w0.md", MaxAttempts: 2, Agents: agents}))
	for _, a := range agents {
		dir := layout.RunDir(0, a.ID, 1)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		event(state.EntityAgentRun, a.ID, "started", state.Data(state.AgentRunData{AgentID: a.ID,
			SessionName: "w0-" + a.ID, RunDir: dir, LogPath: filepath.Join(dir, lanes.LogFile)}))
		code, end := 0, at.Add(time.Second)
		rec := runtime.Record{SchemaVersion: 1, RunID: "w0-" + a.ID + "-a1", Lane: "main", Attempt: 1, AgentID: a.ID,
			ExecutorID: "local", SessionBackend: runtime.BackendTmux, SessionName: "w0-" + a.ID, StartedAt: at,
			LastHeartbeatAt: end, TerminalDisposition: runtime.Completed, ExitCode: &code, FinishedAt: &end}
		if err := jsonfile.WriteVolatile(filepath.Join(dir, lanes.RuntimeFile), rec); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, lanes.LogFile), []byte("[wave-phase] done\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		event(state.EntityAgentRun, a.ID, state.AgentCompleted, state.Data(state.AgentRunData{AgentID: a.ID, RunDir: dir, ExitCode: &code}))
	}
	event(state.EntityWaveRun, "wave-0", state.WaveCompleted, nil)
	var log []byte
	for _, ev := range evs {
		line, err := json.Marshal(ev)
		if err != nil {
			b.Fatal(err)
		}
		log = append(append(log, line...), '\n')
	}
	if err := os.WriteFile(layout.EventsPath(), log, 0o644); err != nil {
		b.Fatal(err)
	}
	return layout
}
