package backlog

import (
	"testing"
	"time"
)

// A run `backlog stop` paused reads paused, not interrupted, with its
// stopped workers counted as stopped, not in flight: what stop said. A
// run killed while it ran reads interrupted; one resumed after the pause
// is no longer paused.
func TestAPausedRunReadsPausedWithItsWorkersStopped(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	running := []Event{
		{Kind: EvRunStarted, Run: &RunInfo{ID: "r1", StartedAt: now}},
		{Kind: EvIssue, Issue: 1}, {Kind: EvClaimed, Issue: 1}, {Kind: EvWorkerStarted, Issue: 1, Attempt: 1},
		{Kind: EvIssue, Issue: 2}, {Kind: EvClaimed, Issue: 2}, {Kind: EvWorkerStarted, Issue: 2, Attempt: 1},
	}
	stopped := append(append([]Event{}, running...),
		Event{Kind: EvWorkerFinished, Issue: 1, Attempt: 1, Outcome: OutcomeStopped},
		Event{Kind: EvWorkerFinished, Issue: 2, Attempt: 1, Outcome: OutcomeStopped})
	paused := append(append([]Event{}, stopped...), Event{Kind: EvRunPaused, Detail: "backlog stop"})
	resumed := append(append([]Event{}, paused...), Event{Kind: EvRunResumed, Detail: "backlog run"})
	for _, tc := range []struct {
		name        string
		events      []Event
		stopPending bool
		state       string
		tally       Tally
	}{
		{"paused by a live supervisor", paused, false, "paused", Tally{Stopped: 2}},
		{"stop asked with no supervisor alive", running, true, "paused", Tally{InFlight: 2}},
		{"killed while running", running, false, "interrupted", Tally{InFlight: 2}},
		{"resumed, then killed", resumed, false, "interrupted", Tally{Stopped: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Reduce(tc.events)
			v := NewStatusView(r, StatusInput{Now: now, StopPending: tc.stopPending})
			if v.State != tc.state || v.Tally != tc.tally {
				t.Fatalf("state %s tally %+v, want %s %+v", v.State, v.Tally, tc.state, tc.tally)
			}
		})
	}
}
