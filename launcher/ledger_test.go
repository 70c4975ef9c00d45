package launcher

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// A corrupt ledger.json is moved aside, rebuilt from the event log and
// reported; it does not make the launch fail.
func TestCorruptLedgerIsKeptAsideAndRebuiltFromEvents(t *testing.T) {
	l := lanes.New(t.TempDir(), ".wave", "p", "main")
	for _, ev := range []state.Event{
		state.NewEvent("main", 0, state.EntityWaveRun, "wave-0", "started", 0, nil),
		state.NewEvent("main", 0, state.EntityWaveRun, "wave-0", state.WaveCompleted, 1, nil),
		state.NewEvent("main", 1, state.EntityWaveRun, "wave-1", "started", 0, nil),
		state.NewEvent("main", 1, state.EntityWaveRun, "wave-1", state.WaveFailed, 1, nil),
		state.NewEvent("main", 2, state.EntityWaveRun, "wave-2", "started", 0, nil),
		state.NewEvent("main", 2, state.EntityWaveRun, "wave-2", state.WaveCompleted, 1, nil),
	} {
		if err := state.Append(l.EventsPath(), ev); err != nil {
			t.Fatal(err)
		}
	}
	garbage := []byte(`{"schemaVersion":1,"completedWaves":[0,`)
	if err := os.WriteFile(l.LedgerPath(), garbage, 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	lg, recovered, err := loadLedger(l, now)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(lg.CompletedWaves, []int{0, 2}) {
		t.Fatalf("rebuilt completed waves %v, want [0 2]", lg.CompletedWaves)
	}
	backups, _ := filepath.Glob(l.LedgerPath() + ".corrupt-*")
	if len(backups) != 1 || !strings.Contains(recovered, backups[0]) || !strings.Contains(recovered, "unreadable") {
		t.Fatalf("backups %v, report %q", backups, recovered)
	}
	if b, _ := os.ReadFile(backups[0]); string(b) != string(garbage) {
		t.Fatalf("backup holds %q", b)
	}
	again, recovered, err := loadLedger(l, now)
	if err != nil || recovered != "" || !slices.Equal(again.CompletedWaves, []int{0, 2}) {
		t.Fatalf("rewritten ledger: %v %q %v", again.CompletedWaves, recovered, err)
	}
}
