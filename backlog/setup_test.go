package backlog

import "testing"

// The run's log says, per issue, whether setup passed in which checkout
// and how many tries failed there; a checkout made again starts over.
func TestSetupStateFollowsItsCheckout(t *testing.T) {
	ev := func(outcome, wt string) Event {
		return Event{Kind: EvSetup, Issue: 1, Outcome: outcome, Worktree: wt}
	}
	for _, tc := range []struct {
		name   string
		evs    []Event
		ready  bool
		failed int
	}{
		{"none", nil, false, 0},
		{"running", []Event{ev(SetupRunning, "/w/i1")}, false, 0},
		{"passed", []Event{ev(SetupRunning, "/w/i1"), ev(SetupPassed, "/w/i1")}, true, 0},
		{"failed once then passed", []Event{ev(SetupFailed, "/w/i1"), ev(SetupRunning, "/w/i1"), ev(SetupPassed, "/w/i1")}, true, 1},
		{"failed twice", []Event{ev(SetupFailed, "/w/i1"), ev(SetupFailed, "/w/i1")}, false, 2},
		{"killed while running again", []Event{ev(SetupFailed, "/w/i1"), ev(SetupRunning, "/w/i1")}, false, 1},
		{"checkout lost", []Event{ev(SetupPassed, "/w/i1"), ev(SetupReset, "/w/i1")}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := append([]Event{{Kind: EvIssue, Issue: 1, Title: "x"}}, tc.evs...)
			st := Reduce(evs).Issues[1].Setup
			if got := st.Ready("/w/i1"); got != tc.ready {
				t.Errorf("ready %v, want %v (%+v)", got, tc.ready, st)
			}
			if got := st.FailedTries("/w/i1"); got != tc.failed {
				t.Errorf("failed tries %d, want %d", got, tc.failed)
			}
			if st.Ready("/w/other") || st.FailedTries("/w/other") != 0 {
				t.Error("another checkout's setup counts for this one")
			}
		})
	}
}
