package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// A run's API calls survive restarts: each event carries the calls made
// since the one before, so a second supervisor (whose counter starts at
// zero again) adds to the first's, and status shows the sum.
func TestAPICallsAreSummedAcrossSupervisors(t *testing.T) {
	dir := t.TempDir()
	now := func() time.Time { return time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC) }
	var calls int64
	first, _, err := openRunLog(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	first.calls = func() int64 { return calls }
	calls = 4 // default branch, list, two gets before the run starts
	if err := first.emit(backlog.Event{Kind: backlog.EvRunStarted, Run: &backlog.RunInfo{ID: "r", StartedAt: now()}}); err != nil {
		t.Fatal(err)
	}
	if err := first.emit(backlog.Event{Kind: backlog.EvIssue, Issue: 1, Title: "one"}); err != nil { // no call in between
		t.Fatal(err)
	}
	calls = 9
	if err := first.emit(backlog.Event{Kind: backlog.EvClaimed, Issue: 1}); err != nil {
		t.Fatal(err)
	}
	calls = 12 // made, then the supervisor was killed before its next event

	second, _, err := openRunLog(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	restarted := int64(0)
	second.calls = func() int64 { return restarted }
	restarted = 3
	if err := second.emit(backlog.Event{Kind: backlog.EvWorkerStarted, Issue: 1, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	v, err := Status(context.Background(), dir, nil, false, now())
	if err != nil {
		t.Fatal(err)
	}
	if v.APICalls != 9+3 {
		t.Fatalf("apiCalls %d, want 12 (9 recorded by the first supervisor, 3 by the second)", v.APICalls)
	}
}

// Two runs started within one second (a quick second `backlog run`): the
// newest is the one that started last, whatever the random part of its
// id, so status and the next run never pick up the older one.
func TestRunsStartedInOneSecondSortByTheirStart(t *testing.T) {
	state := t.TempDir()
	at := time.Date(2026, 12, 1, 23, 7, 26, 0, time.UTC)
	mk := func(id string, started time.Time) string {
		dir := filepath.Join(RunsRoot(state), id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		l, _, err := openRunLog(dir, func() time.Time { return started })
		if err != nil {
			t.Fatal(err)
		}
		if err := l.emit(backlog.Event{Kind: backlog.EvRunStarted, Run: &backlog.RunInfo{ID: id, StartedAt: started}}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	older := mk("20261201T230726Z-backlog-f00000", at.Add(100*time.Millisecond))
	newer := mk("20261201T230726Z-backlog-000000", at.Add(900*time.Millisecond))
	earliest := mk("20261201T230725Z-backlog-ffffff", at.Add(-time.Second))
	dirs, err := ListRuns(state)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{earliest, older, newer}; !slices.Equal(dirs, want) {
		t.Fatalf("runs %v, want %v", dirs, want)
	}
	if d, err := FindRun(state, ""); err != nil || d != newer {
		t.Fatalf("newest run %s (%v), want %s", d, err, newer)
	}
}
