package backlog

import (
	"fmt"
	"strconv"
	"strings"
)

// TrainView is the merge train as the run's log last said it
// (docs/merge-gate.md, "The pipeline"): the queued candidates being
// verified — each on top of the candidates ahead of it —, verified and
// waiting to land, held (failed or conflicting on top of candidates
// whose verdict is not in yet), still to be verified, and waiting on
// their CI checks.
type TrainView struct {
	// Parallel is backlog.verifyParallel as the run started (0: not
	// recorded, a run from before the pipeline).
	Parallel        int          `json:"parallel"`
	Verifying       []TrainEntry `json:"verifying"`
	Passed          []TrainEntry `json:"passed"`
	Held            []TrainEntry `json:"held"`
	Queued          []int        `json:"queued"`
	WaitingOnChecks []int        `json:"waitingOnChecks"`
	// Line is how status, the dashboard and the page say it.
	Line string `json:"line"`
}

// TrainEntry is one candidate of the train: the issue, what its verify
// is at (a Verify* outcome), the merge commit verified and the
// candidates it is built on beyond the wave tip.
type TrainEntry struct {
	Issue  int    `json:"issue"`
	Verify string `json:"verify"`
	Commit string `json:"commit"`
	Ahead  []int  `json:"ahead"`
}

// NewTrainView is r's merge train, nil when nothing is queued.
func NewTrainView(r *Run) *TrainView {
	if len(r.Queue) == 0 {
		return nil
	}
	t := &TrainView{Parallel: r.Info.VerifyParallel, Verifying: []TrainEntry{}, Passed: []TrainEntry{}, Held: []TrainEntry{},
		Queued: []int{}, WaitingOnChecks: []int{}}
	for _, n := range r.Queue {
		is := r.Issues[n]
		if is == nil {
			continue
		}
		e := TrainEntry{Issue: n, Verify: is.Verify, Commit: is.VerifyCommit, Ahead: append([]int{}, is.VerifyAhead...)}
		switch {
		case is.Checks != nil && (is.Checks.Outcome == ChecksPending || is.Checks.Outcome == ChecksMissing):
			t.WaitingOnChecks = append(t.WaitingOnChecks, n)
		case is.Verify == VerifyRunning || is.Verify == VerifyReviewing:
			t.Verifying = append(t.Verifying, e)
		case is.Verify == VerifyPassed:
			t.Passed = append(t.Passed, e)
		case is.Verify == VerifyFailed || is.Verify == VerifyConflict:
			t.Held = append(t.Held, e)
		default:
			t.Queued = append(t.Queued, n)
		}
	}
	t.Line = trainLine(t)
	return t
}

// trainLine: "merge train: verifying 2 of 4 (#3, #5 on top of #3) ·
// verified, to land: #2 · held: #6 (verify failed on top of #5) · queued
// 3 (#8 #9 #10) · waiting on checks: #7".
func trainLine(t *TrainView) string {
	var parts []string
	if len(t.Verifying) > 0 || t.Parallel > 0 {
		of := ""
		if t.Parallel > 0 {
			of = " of " + strconv.Itoa(t.Parallel)
		}
		p := fmt.Sprintf("verifying %d%s", len(t.Verifying), of)
		if len(t.Verifying) > 0 {
			p += " (" + entries(t.Verifying, false) + ")"
		}
		parts = append(parts, p)
	}
	if len(t.Passed) > 0 {
		parts = append(parts, "verified, to land: "+entries(t.Passed, false))
	}
	if len(t.Held) > 0 {
		parts = append(parts, "held: "+entries(t.Held, true))
	}
	if len(t.Queued) > 0 {
		parts = append(parts, fmt.Sprintf("queued %d (%s)", len(t.Queued), refs(t.Queued)))
	}
	if len(t.WaitingOnChecks) > 0 {
		parts = append(parts, "waiting on checks: "+refs(t.WaitingOnChecks))
	}
	return "merge train: " + strings.Join(parts, " · ")
}

// entries says candidates with what they are built on (and, held, why).
func entries(es []TrainEntry, why bool) string {
	out := make([]string, len(es))
	for i, e := range es {
		s := "#" + strconv.Itoa(e.Issue)
		if why {
			s += " (" + map[string]string{VerifyFailed: "verify failed", VerifyConflict: "conflicts"}[e.Verify]
			if len(e.Ahead) > 0 {
				s += " on top of " + refs(e.Ahead)
			}
			s += ")"
		} else if len(e.Ahead) > 0 {
			s += " on top of " + refs(e.Ahead)
		}
		out[i] = s
	}
	return strings.Join(out, ", ")
}

func refs(ns []int) string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = "#" + strconv.Itoa(n)
	}
	return strings.Join(out, " ")
}
