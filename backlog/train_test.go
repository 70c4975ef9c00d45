package backlog

import (
	"encoding/json"
	"strings"
	"testing"
)

// ready queues issue n.
func ready(n int) []Event {
	return []Event{{Kind: EvIssue, Issue: n}, {Kind: EvClaimed, Issue: n}, {Kind: EvWorkerStarted, Issue: n, Attempt: 1},
		{Kind: EvReady, Issue: n, Commits: 1}, {Kind: EvMergeStarted, Issue: n}}
}

// TestStatusShowsTheMergePipeline: status says which candidates are
// being verified and on top of which, which passed and wait to land,
// which are held on a verdict ahead, which are still queued and which
// wait on their checks — the same line in text, --json and the
// dashboard.
func TestStatusShowsTheMergePipeline(t *testing.T) {
	evs := []Event{{Kind: EvRunStarted, Run: &RunInfo{ID: "r1", VerifyParallel: 4}}}
	for n := 1; n <= 7; n++ {
		evs = append(evs, ready(n)...)
	}
	evs = append(evs,
		Event{Kind: EvVerify, Issue: 1, Outcome: VerifyRunning, Commit: "c1"},
		Event{Kind: EvVerify, Issue: 1, Outcome: VerifyPassed, Commit: "c1"},
		Event{Kind: EvVerify, Issue: 2, Outcome: VerifyRunning, Commit: "c2", Ahead: []int{1}},
		Event{Kind: EvVerify, Issue: 3, Outcome: VerifyRunning, Commit: "c3", Ahead: []int{1, 2}},
		Event{Kind: EvVerify, Issue: 3, Outcome: VerifyFailed, Commit: "c3", Detail: "exit 1"},
		Event{Kind: EvVerify, Issue: 4, Outcome: VerifyReviewing, Commit: "c4", Ahead: []int{1, 2}},
		Event{Kind: EvVerify, Issue: 5, Outcome: VerifyCancelled, Commit: "c5"},
		Event{Kind: EvChecks, Issue: 6, Commit: "h6", Outcome: ChecksPending},
	)
	v := NewStatusView(Reduce(evs), StatusInput{})
	tr := v.Train
	if tr == nil {
		t.Fatal("no train in the status of a run with a queue")
	}
	want := "merge train: verifying 2 of 4 (#2 on top of #1, #4 on top of #1 #2) · verified, to land: #1 · " +
		"held: #3 (verify failed on top of #1 #2) · queued 2 (#5 #7) · waiting on checks: #6"
	if tr.Line != want {
		t.Errorf("line\n %s\nwant\n %s", tr.Line, want)
	}
	js, _ := json.Marshal(v)
	for _, part := range []string{`"parallel":4`, `"verifying":[{"issue":2,"verify":"running","commit":"c2","ahead":[1]}`,
		`"waitingOnChecks":[6]`, `"verifyCommit":"c3","verifyAhead":[1,2]`} {
		if !strings.Contains(string(js), part) {
			t.Errorf("status --json lacks %s:\n%s", part, js)
		}
	}
	// A new change (ready again after a rework) is not verified yet.
	evs = append(evs, Event{Kind: EvRework, Issue: 3, Outcome: ReworkVerify}, Event{Kind: EvWorkerStarted, Issue: 3, Attempt: 2},
		Event{Kind: EvReady, Issue: 3, Commits: 2})
	r := Reduce(evs)
	if is := r.Issues[3]; is.Verify != "" || is.VerifyCommit != "" || len(is.VerifyAhead) != 0 {
		t.Errorf("#3 ready again still says verify %q at %q on %v", is.Verify, is.VerifyCommit, is.VerifyAhead)
	}
	if v := NewStatusView(Reduce(evs[:1]), StatusInput{}); v.Train != nil {
		t.Errorf("a run with nothing queued shows a train: %+v", v.Train)
	}
}
