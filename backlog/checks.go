package backlog

import (
	"fmt"
	"strings"
	"time"
)

// Kinds of Check.
const (
	CheckRun    = "check-run" // GitHub's checks API: Actions jobs, apps
	CheckStatus = "status"    // a commit status: older CI services
)

// States of a Check, as the gate reads them.
const (
	CheckPending = "pending"
	CheckSuccess = "success"
	CheckFailure = "failure"
)

// Outcomes of the checks gate (EvChecks.Outcome).
const (
	ChecksPending  = "pending"   // a required check has not concluded yet
	ChecksMissing  = "missing"   // a required check has not reported on the head at all
	ChecksPassed   = "passed"    // every required check is green
	ChecksFailed   = "failed"    // a required check is red
	ChecksTimedOut = "timed-out" // still pending or missing at backlog.checksTimeoutMinutes
)

// Check is one check a commit reports, as the forge read it. Title,
// Summary and URL are the CI's own text: untrusted.
type Check struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`  // CheckRun | CheckStatus
	State string `json:"state"` // CheckPending | CheckSuccess | CheckFailure
	// Conclusion is GitHub's word for it: a check run's conclusion
	// (failure, timed_out, cancelled…) or status (queued, in_progress),
	// a commit status's state (error, failure, pending…).
	Conclusion string `json:"conclusion"`
	Title      string `json:"title,omitempty"`
	Summary    string `json:"summary,omitempty"`
	URL        string `json:"url,omitempty"`
}

// ChecksVerdict is what the required checks of one commit say.
type ChecksVerdict struct {
	Outcome string   // ChecksPassed | ChecksFailed | ChecksPending | ChecksMissing
	Failed  []Check  // the red required checks, in required order
	Pending []string // required checks reported but not concluded
	Missing []string // required checks not reported at all
}

// JudgeChecks is the verdict of the required checks (by name) over what
// a commit reports. A name reported more than once (a check run and a
// status, two apps) counts by its worst report. Red wins over waiting: a
// change with a red check goes back to its worker at once.
func JudgeChecks(required []string, got []Check) ChecksVerdict {
	var v ChecksVerdict
	for _, name := range required {
		var worst *Check
		for i := range got {
			c := &got[i]
			if c.Name != name {
				continue
			}
			if worst == nil || rank(c.State) > rank(worst.State) {
				worst = c
			}
		}
		switch {
		case worst == nil:
			v.Missing = append(v.Missing, name)
		case worst.State == CheckFailure:
			v.Failed = append(v.Failed, *worst)
		case worst.State != CheckSuccess:
			v.Pending = append(v.Pending, name)
		}
	}
	switch {
	case len(v.Failed) > 0:
		v.Outcome = ChecksFailed
	case len(v.Missing) > 0:
		v.Outcome = ChecksMissing
	case len(v.Pending) > 0:
		v.Outcome = ChecksPending
	default:
		v.Outcome = ChecksPassed
	}
	return v
}

func rank(state string) int {
	switch state {
	case CheckSuccess:
		return 0
	case CheckFailure:
		return 2
	}
	return 1
}

// Line is the verdict in one line for status and the run's output:
// "failed: ci (failure)", "pending: ci, lint; missing: deploy".
func (v ChecksVerdict) Line() string {
	var parts []string
	if len(v.Failed) > 0 {
		names := make([]string, len(v.Failed))
		for i, c := range v.Failed {
			names[i] = fmt.Sprintf("%s (%s)", OneLine(c.Name), OneLine(c.Conclusion))
		}
		parts = append(parts, "failed: "+strings.Join(names, ", "))
	}
	if len(v.Pending) > 0 {
		parts = append(parts, "pending: "+OneLine(strings.Join(v.Pending, ", ")))
	}
	if len(v.Missing) > 0 {
		parts = append(parts, "missing: "+OneLine(strings.Join(v.Missing, ", ")))
	}
	if len(parts) == 0 {
		return "passed"
	}
	return strings.Join(parts, "; ")
}

// Waiting: the verdict is neither green nor red yet.
func (v ChecksVerdict) Waiting() bool {
	return v.Outcome == ChecksPending || v.Outcome == ChecksMissing
}

// ChecksState is the last look of the checks gate at a head: an issue's
// worker branch before its merge, or the final PR's (Run.FinalChecks).
type ChecksState struct {
	Commit  string    `json:"commit"`
	Outcome string    `json:"outcome"` // a Checks* outcome
	Detail  string    `json:"detail,omitempty"`
	URL     string    `json:"url,omitempty"` // the first red check's details
	Since   time.Time `json:"since"`         // first look at this commit: the timeout runs from here
	At      time.Time `json:"at"`            // this look
}

// applyChecks folds an EvChecks into st, a new state when the head moved.
func applyChecks(st *ChecksState, ev Event) *ChecksState {
	next := &ChecksState{Commit: ev.Commit, Outcome: ev.Outcome, Detail: ev.Detail, URL: ev.URL, Since: ev.At, At: ev.At}
	if st != nil && st.Commit == ev.Commit {
		next.Since = st.Since
	}
	return next
}

// ChecksLine is how status shows a checks state: "checks pending since
// 15:04:05Z (ci)".
func ChecksLine(st *ChecksState) string {
	if st == nil {
		return ""
	}
	line := "checks " + st.Outcome
	if st.Outcome == ChecksPending || st.Outcome == ChecksMissing {
		line += " since " + st.Since.UTC().Format(time.RFC3339)
	}
	if st.Detail != "" && st.Outcome != ChecksPassed {
		line += " (" + OneLine(st.Detail) + ")"
	}
	return line
}
