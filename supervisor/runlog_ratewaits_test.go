package supervisor

import (
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
)

// rateSource counts as forge.GitHub does: calls and rate-limit waits.
type rateSource struct{ calls, waits int64 }

func (s *rateSource) Calls() int64          { return s.calls }
func (s *rateSource) RateLimitWaits() int64 { return s.waits }

// Each event carries the rate limits waited out since the one before, so
// their sum survives a restart as the API calls' does.
func TestRateLimitWaitsAreRecordedInTheRunsEvents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := func() time.Time { return time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC) }
	l, _, err := openRunLog(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	src := &rateSource{}
	l.count(src)
	src.calls, src.waits = 3, 1
	if err := l.emit(backlog.Event{Kind: backlog.EvRunStarted, Run: &backlog.RunInfo{ID: "r", StartedAt: now()}}); err != nil {
		t.Fatal(err)
	}
	src.calls, src.waits = 5, 3
	if err := l.emit(backlog.Event{Kind: backlog.EvIssue, Issue: 1}); err != nil {
		t.Fatal(err)
	}
	evs, _, err := runlog.Events(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].RateWaits != 1 || evs[1].RateWaits != 2 || evs[1].Calls != 2 {
		t.Fatalf("events %+v: want rate-limit waits 1 then 2, calls 3 then 2", evs)
	}
}
