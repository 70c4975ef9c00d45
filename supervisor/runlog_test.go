package supervisor

import (
	"context"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// A run's API calls survive restarts: each event carries the calls made
// since the one before, so a second supervisor (whose counter starts at
// zero again) adds to the first's, and status shows the sum.
func TestAPICallsAreSummedAcrossSupervisors(t *testing.T) {
	t.Parallel()
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
