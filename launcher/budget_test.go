package launcher

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/spend"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// budgetLane is a wave run of a lane whose runtime.budget.lane caps
// tokens, and spent, which records in the lane's log that agent's run
// (pruned since: its spend is the log's) used tokens.
func budgetLane(t *testing.T, tokens int64) (r *waveRun, spent func(agent string, tokens int64)) {
	t.Helper()
	layout := lanes.New(t.TempDir(), ".wave", "p", "main")
	lane := &config.Lane{Name: "main"}
	lane.Runtime.Budget.Lane = usage.Cap{Tokens: &tokens}
	r = &waveRun{l: New(Options{Layout: layout, Lane: lane}, nil), n: 0}
	return r, func(agent string, tokens int64) {
		t.Helper()
		dir := filepath.Join(layout.StateDir, "waves", "0", "runs", agent+"-a1")
		ev := state.NewEvent("main", 0, state.EntityAgentRun, agent, state.AgentCompleted, 1,
			map[string]any{"runDir": dir, "usage": map[string]any{"inputTokens": tokens}})
		if err := state.Append(layout.EventsPath(), ev); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTheBudgetCheckCountsSpendRecordedSinceItsLastLook(t *testing.T) {
	r, spent := budgetLane(t, 1000)
	spent("A1", 600)
	if over, warn := r.budgetCheck(); over != "" || len(warn) != 0 {
		t.Fatalf("600 of 1000: over %q warnings %v", over, warn)
	}
	spent("A2", 300)
	if over, warn := r.budgetCheck(); over != "" || len(warn) != 1 || !strings.Contains(warn[0], "tokens 900 of 1.0k") {
		t.Fatalf("900 of 1000: over %q warnings %v, want the 80%% warning", over, warn)
	}
	spent("A3", 100)
	if over, _ := r.budgetCheck(); !strings.HasPrefix(over, "runtime.budget.lane: tokens 1.0k of 1.0k") {
		t.Fatalf("1000 of 1000: over %q", over)
	}
}

func TestTheBudgetCheckRereadsALogTruncatedOrRotated(t *testing.T) {
	r, spent := budgetLane(t, 1000)
	spent("A1", 900)
	spent("A2", 200)
	if over, _ := r.budgetCheck(); over == "" {
		t.Fatal("1100 of 1000 is not over")
	}
	path := r.l.opt.Layout.EventsPath()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	spent("A3", 100)
	if over, warn := r.budgetCheck(); over != "" || len(warn) != 0 {
		t.Fatalf("after truncation the log holds 100: over %q warnings %v", over, warn)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	spent("A4", 900)
	if over, _ := r.budgetCheck(); over != "runtime.budget.lane: tokens 1.0k of 1.0k" {
		t.Fatalf("after rotation (100 in the rotated generation, 900 new): over %q", over)
	}
}

// The budget check on a lane whose log holds 20k events of 200 runs
// (a long-lived lane), one new event per check: reading only what was
// appended against reading the log whole each time (spend.WaveRuns).
func BenchmarkBudgetCheckOnALongLog(b *testing.B) {
	for _, whole := range []bool{false, true} {
		name := map[bool]string{false: "appended-only", true: "whole-log"}[whole]
		b.Run(name, func(b *testing.B) {
			layout := lanes.New(b.TempDir(), ".wave", "p", "main")
			var evs []state.Event
			for i := range 20000 {
				agent := fmt.Sprintf("A%d", i%200)
				data := map[string]any{"runDir": filepath.Join(layout.StateDir, "waves", "0", "runs", agent+"-a1"), "usage": map[string]any{"inputTokens": 10}}
				evs = append(evs, state.NewEvent("main", 0, state.EntityAgentRun, agent, state.AgentRunning, 1, data))
			}
			if err := writeEvents(layout.EventsPath(), evs); err != nil {
				b.Fatal(err)
			}
			log := newSpendLog(layout.EventsPath())
			log.runs() // the wave's first check reads the log whole either way
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := state.Append(layout.EventsPath(), evs[i%len(evs)]); err != nil {
					b.Fatal(err)
				}
				if whole {
					spend.WaveRuns(layout)
				} else {
					spend.WaveRunsFrom(layout, log.runs(), nil)
				}
			}
		})
	}
}

func writeEvents(path string, evs []state.Event) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var buf []byte
	for _, ev := range evs {
		line, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		buf = append(append(buf, line...), '\n')
	}
	return os.WriteFile(path, buf, 0o644)
}
