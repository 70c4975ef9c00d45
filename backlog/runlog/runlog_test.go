package runlog

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

func startRun(t *testing.T, state, id string, started time.Time, finished bool) string {
	t.Helper()
	dir := filepath.Join(Root(state), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	evs := []backlog.Event{{At: started, Kind: backlog.EvRunStarted, Run: &backlog.RunInfo{ID: id, StartedAt: started}}}
	if finished {
		evs = append(evs, backlog.Event{At: started.Add(time.Second), Kind: backlog.EvRunFinished})
	}
	for _, ev := range evs {
		if err := jsonfile.Append(filepath.Join(dir, EventsFile), ev); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Runs started within one second are ordered by their first event, so
// the newest run is the one that started last whatever its id's random
// part; the open run is the newest one not finished.
func TestTheNewestAndTheOpenRunAreFoundByWhenTheyStarted(t *testing.T) {
	state := t.TempDir()
	at := time.Date(2026, 12, 1, 23, 7, 26, 0, time.UTC)
	earliest := startRun(t, state, "20261201T230725Z-backlog-ffffff", at.Add(-time.Second), false)
	older := startRun(t, state, "20261201T230726Z-backlog-f00000", at.Add(100*time.Millisecond), false)
	newer := startRun(t, state, "20261201T230726Z-backlog-000000", at.Add(900*time.Millisecond), true)
	dirs, err := List(state)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{earliest, older, newer}; !slices.Equal(dirs, want) {
		t.Fatalf("runs %v, want %v", dirs, want)
	}
	if d, err := Find(state, ""); err != nil || d != newer {
		t.Fatalf("newest run %s (%v), want %s", d, err, newer)
	}
	if d, err := Find(state, filepath.Base(earliest)); err != nil || d != earliest {
		t.Fatalf("run by id %s (%v), want %s", d, err, earliest)
	}
	if d, err := OpenDir(state); err != nil || d != older {
		t.Fatalf("open run %s (%v), want %s (the newest is finished)", d, err, older)
	}
	if r, _, err := Read(older); err != nil || r.Info.ID != filepath.Base(older) || r.Finished {
		t.Fatalf("read %s: %+v, %v", older, r, err)
	}
}

// A lane with no backlog run lists none, and --run says where it looked.
func TestALaneWithoutBacklogRunsListsNone(t *testing.T) {
	state := t.TempDir()
	if dirs, err := List(state); err != nil || len(dirs) != 0 {
		t.Fatalf("runs %v, %v", dirs, err)
	}
	if _, err := Find(state, ""); err == nil {
		t.Fatal("Find on a lane without runs: no error")
	}
}
