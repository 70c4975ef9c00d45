package backlog

import (
	"encoding/json"
	"testing"
)

func TestReduceStatesAndTally(t *testing.T) {
	ev := func(kind string, n int, mod ...func(*Event)) Event {
		e := Event{Kind: kind, Issue: n}
		for _, m := range mod {
			m(&e)
		}
		return e
	}
	started := func(salvage bool, ref string) func(*Event) {
		return func(e *Event) { e.Salvage, e.Ref, e.Attempt = salvage, ref, 1 }
	}
	outcome := func(o string) func(*Event) { return func(e *Event) { e.Outcome = o } }
	cases := []struct {
		name     string
		events   []Event
		state    string
		salvages int
		queue    []int
		tally    Tally
	}{
		{"planned", []Event{ev(EvIssue, 1)}, StatePlanned, 0, nil, Tally{Planned: 1}},
		{"claimed", []Event{ev(EvIssue, 1), ev(EvClaimed, 1)}, StateClaimed, 0, nil, Tally{InFlight: 1}},
		{"running", []Event{ev(EvClaimed, 1), ev(EvWorkerStarted, 1, started(false, ""))}, StateRunning, 0, nil, Tally{InFlight: 1}},
		{"ready is queued", []Event{ev(EvWorkerStarted, 1), ev(EvReady, 1)}, StateReady, 0, []int{1}, Tally{InFlight: 1}},
		{"merged leaves the queue", []Event{ev(EvReady, 1), ev(EvMergeStarted, 1), ev(EvMerged, 1)}, StateMerged, 0, nil, Tally{Merged: 1}},
		// A conflict sends the worker back: claimed, not stuck in merging,
		// until the relaunch is recorded.
		{"conflict is claimed again", []Event{ev(EvReady, 1), ev(EvMergeStarted, 1), ev(EvConflict, 1)}, StateClaimed, 0, nil, Tally{InFlight: 1}},
		// A snapshot alone spends nothing; the recorded relaunch does.
		{"salvage counted at the relaunch", []Event{ev(EvWorkerStarted, 1), ev(EvSalvaged, 1)}, StateRunning, 0, nil, Tally{InFlight: 1}},
		{"salvage relaunch", []Event{ev(EvSalvaged, 1), ev(EvWorkerStarted, 1, started(true, "refs/wave/salvage/1/a1"))}, StateRunning, 1, nil, Tally{InFlight: 1}},
		// Resuming a stopped worker shows the salvage header but is no salvage.
		{"resume after stop is free", []Event{ev(EvWorkerStarted, 1, started(true, ""))}, StateRunning, 0, nil, Tally{InFlight: 1}},
		{"stopped worker holds its claim, not in flight", []Event{ev(EvWorkerStarted, 1), ev(EvWorkerFinished, 1, outcome(OutcomeStopped))}, StateClaimed, 0, nil, Tally{Stopped: 1}},
		{"needs input", []Event{ev(EvWorkerStarted, 1), ev(EvNeedsInput, 1)}, StateNeedsInput, 0, nil, Tally{NeedsInput: 1}},
		{"parked is blocked", []Event{ev(EvReady, 1), ev(EvParked, 1)}, StateParked, 0, nil, Tally{Blocked: 1}},
		{"claim lost", []Event{ev(EvReady, 1), ev(EvClaimLost, 1)}, StateFailed, 0, nil, Tally{Blocked: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Reduce(c.events)
			is := r.Issues[1]
			if is == nil || is.State != c.state || is.Salvages != c.salvages {
				t.Fatalf("issue %+v, want state %s salvages %d", is, c.state, c.salvages)
			}
			if len(r.Queue) != len(c.queue) || len(c.queue) > 0 && r.Queue[0] != c.queue[0] {
				t.Errorf("queue %v, want %v", r.Queue, c.queue)
			}
			if got := r.Tally(); got != c.tally {
				t.Errorf("tally %+v, want %+v", got, c.tally)
			}
		})
	}
}

func TestReduceIsTheSameWhateverTheBatching(t *testing.T) {
	evs := []Event{
		{Kind: EvRunStarted, Run: &RunInfo{ID: "r"}},
		{Kind: EvPlanned, Plan: &Plan{NeedsInput: []Question{{Issue: 9, Question: "which?"}}}},
		{Kind: EvIssue, Issue: 1}, {Kind: EvIssue, Issue: 2},
		{Kind: EvIntent, Intent: &Intent{ID: "label-claim-1"}},
		{Kind: EvIntentDone, Intent: &Intent{ID: "label-claim-1"}, URL: "u"},
		{Kind: EvIntent, Intent: &Intent{ID: "comment-claim-1"}},
		{Kind: EvReady, Issue: 1}, {Kind: EvReady, Issue: 2}, {Kind: EvMerged, Issue: 1},
		{Kind: EvDropped, Issue: 2, Outcome: ReasonClosed},
		{Kind: EvFinishing},
	}
	whole := Reduce(evs)
	step := Reduce(nil)
	for _, e := range evs {
		step.Apply(e)
	}
	for _, r := range []*Run{whole, step} {
		if r.Tally() != (Tally{Merged: 1, NeedsInput: 1}) {
			t.Errorf("tally %+v: want 1 merged, #9 in the bucket, #2 dropped", r.Tally())
		}
		if _, pending := r.Intents["comment-claim-1"]; !pending || r.Done["label-claim-1"] != (PRRef{URL: "u"}) {
			t.Errorf("intents %v done %v", r.Intents, r.Done)
		}
		if !r.Finishing || len(r.Dropped) != 1 || len(r.Queue) != 0 {
			t.Errorf("finishing %v dropped %v queue %v", r.Finishing, r.Dropped, r.Queue)
		}
	}
}

// TestReduceWaveBranchCut: the wave branch's name follows each candidate
// recorded; the cut keeps the last name and its reservation; a run from
// before wave_branch events has no cut state (its branch is cut).
func TestReduceWaveBranchCut(t *testing.T) {
	start := Event{Kind: EvRunStarted, Run: &RunInfo{ID: "r", WaveBranch: "wave/d-x"}}
	cutting := func(name, ref string, k int) Event {
		return Event{Kind: EvWaveBranch, Branch: name, Ref: ref, Attempt: k, Outcome: WaveCutting}
	}
	cases := []struct {
		name   string
		events []Event
		branch string
		want   *WaveState
	}{
		{"legacy run", []Event{start}, "wave/d-x", nil},
		{"cutting", []Event{start, cutting("wave/d-x", "c1", 1)}, "wave/d-x", &WaveState{Reservation: "c1", Attempt: 1}},
		{"next suffix", []Event{start, cutting("wave/d-x", "c1", 1), cutting("wave/d-x-2", "c2", 2)}, "wave/d-x-2",
			&WaveState{Reservation: "c2", Attempt: 2}},
		{"cut", []Event{start, cutting("wave/d-x", "c1", 1), cutting("wave/d-x-2", "c2", 2), {Kind: EvWaveBranch, Outcome: WaveCut}},
			"wave/d-x-2", &WaveState{Reservation: "c2", Attempt: 2, Cut: true}},
	}
	for _, c := range cases {
		r := Reduce(c.events)
		if r.Info.WaveBranch != c.branch {
			t.Errorf("%s: wave branch %q, want %q", c.name, r.Info.WaveBranch, c.branch)
		}
		if (r.Wave == nil) != (c.want == nil) || (r.Wave != nil && *r.Wave != *c.want) {
			t.Errorf("%s: wave state %+v, want %+v", c.name, r.Wave, c.want)
		}
	}
}

// TestAPullRequestARunRecordedBeforeTheNumberFieldStillReads: runs before
// intent_done carried a PR's number on its own wrote "url#number" in its
// url; a supervisor resuming such a run finds the pull request (URL and
// number apart) as it finds one recorded now.
func TestAPullRequestARunRecordedBeforeTheNumberFieldStillReads(t *testing.T) {
	lines := []string{
		`{"at":"2026-11-01T10:00:00Z","kind":"run_started","run":{"id":"r"}}`,
		`{"at":"2026-11-01T10:00:01Z","kind":"intent_done","issue":3,"intent":{"id":"pr-3"},"url":"https://github.com/o/r/pull/12#12"}`,
		`{"at":"2026-11-01T10:00:02Z","kind":"intent_done","issue":4,"intent":{"id":"pr-4"},"url":"/repo/.wave/prs/wave-x-i4.md#0"}`,
		`{"at":"2026-11-01T10:00:03Z","kind":"intent_done","issue":5,"intent":{"id":"pr-5"},"url":"https://github.com/o/r/pull/13","number":13}`,
		`{"at":"2026-11-01T10:00:04Z","kind":"intent_done","issue":5,"intent":{"id":"label-claim-5"}}`,
	}
	var evs []Event
	for _, l := range lines {
		var ev Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		evs = append(evs, ev)
	}
	r := Reduce(evs)
	want := map[string]PRRef{
		"pr-3":          {Number: 12, URL: "https://github.com/o/r/pull/12"},
		"pr-4":          {URL: "/repo/.wave/prs/wave-x-i4.md"},
		"pr-5":          {Number: 13, URL: "https://github.com/o/r/pull/13"},
		"label-claim-5": {},
	}
	for id, pr := range want {
		if got, done := r.Done[id]; !done || got != pr {
			t.Errorf("%s: done %v, %+v; want %+v", id, done, got, pr)
		}
	}
}
