package backlog

import (
	"slices"
	"testing"
)

// TestReworkRoundsRememberTheThreadsTheyAnswered: the review threads a
// round answers are in its event, so a supervisor restarted from the log
// (kill -9) still knows them and never answers one twice.
func TestReworkRoundsRememberTheThreadsTheyAnswered(t *testing.T) {
	start := []Event{{Kind: EvClaimed, Issue: 1}, {Kind: EvWorkerStarted, Issue: 1, Attempt: 1}, {Kind: EvReady, Issue: 1}}
	round := func(from string, reviews []int64, threads ...string) Event {
		return Event{Kind: EvRework, Issue: 1, Attempt: 1, Outcome: from, Feedback: "fix", Reviews: reviews, Threads: threads}
	}
	for _, tc := range []struct {
		name     string
		rounds   []Event
		threads  []string
		reviewed []int64
		from     string
	}{
		{"no round", nil, nil, nil, ""},
		{"one thread", []Event{round(ReworkPRThread, nil, "T1")}, []string{"T1"}, nil, ReworkPRThread},
		{"a review and threads in one round", []Event{round(ReworkPRReview, []int64{7}, "T1", "T2")},
			[]string{"T1", "T2"}, []int64{7}, ReworkPRReview},
		{"two rounds add up", []Event{round(ReworkPRThread, nil, "T1"), round(ReworkVerify, nil), round(ReworkPRThread, nil, "T3")},
			[]string{"T1", "T3"}, nil, ReworkPRThread},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := Reduce(append(slices.Clone(start), tc.rounds...)).Issues[1]
			if !slices.Equal(is.Threads, tc.threads) || !slices.Equal(is.Reviewed, tc.reviewed) || is.ReworkFrom != tc.from {
				t.Errorf("threads %v reviewed %v from %q; want %v %v %q", is.Threads, is.Reviewed, is.ReworkFrom, tc.threads, tc.reviewed, tc.from)
			}
			if is.Reworks != len(tc.rounds) {
				t.Errorf("%d rounds, want %d", is.Reworks, len(tc.rounds))
			}
		})
	}
}
