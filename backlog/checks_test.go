package backlog

import (
	"slices"
	"testing"
	"time"
)

func TestJudgeChecks(t *testing.T) {
	ok := func(n string) Check {
		return Check{Name: n, Kind: CheckRun, State: CheckSuccess, Conclusion: "success"}
	}
	red := func(n, c string) Check { return Check{Name: n, Kind: CheckRun, State: CheckFailure, Conclusion: c} }
	wait := func(n string) Check {
		return Check{Name: n, Kind: CheckStatus, State: CheckPending, Conclusion: "pending"}
	}
	for _, c := range []struct {
		name     string
		required []string
		got      []Check
		outcome  string
		line     string
	}{
		{"all green", []string{"ci", "lint"}, []Check{ok("ci"), ok("lint"), red("other", "failure")}, ChecksPassed, "passed"},
		{"a red one wins over waiting", []string{"ci", "lint", "e2e"}, []Check{red("ci", "timed_out"), wait("lint")},
			ChecksFailed, "failed: ci (timed_out); pending: lint; missing: e2e"},
		{"missing", []string{"ci", "lint"}, []Check{ok("ci")}, ChecksMissing, "missing: lint"},
		{"pending", []string{"ci"}, []Check{wait("ci")}, ChecksPending, "pending: ci"},
		{"a name reported twice counts by its worst", []string{"ci"}, []Check{ok("ci"), red("ci", "failure")}, ChecksFailed, "failed: ci (failure)"},
		{"names are exact", []string{"CI"}, []Check{ok("ci")}, ChecksMissing, "missing: CI"},
		{"nothing required", nil, []Check{red("ci", "failure")}, ChecksPassed, "passed"},
	} {
		v := JudgeChecks(c.required, c.got)
		if v.Outcome != c.outcome || v.Line() != c.line {
			t.Errorf("%s: %s %q, want %s %q", c.name, v.Outcome, v.Line(), c.outcome, c.line)
		}
		if v.Waiting() != (c.outcome == ChecksPending || c.outcome == ChecksMissing) {
			t.Errorf("%s: Waiting() = %v", c.name, v.Waiting())
		}
	}
}

// TestChecksTimeoutRunsFromTheFirstLookAtAHead: the reduced state keeps
// when the gate first looked at a head across later looks (so a
// restarted supervisor keeps the timeout), and starts again on a new head.
func TestChecksTimeoutRunsFromTheFirstLookAtAHead(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	evs := []Event{
		{Kind: EvIssue, Issue: 3, At: t0},
		{Kind: EvChecks, Issue: 3, Commit: "a1", Outcome: ChecksMissing, At: t0},
		{Kind: EvChecks, Issue: 3, Commit: "a1", Outcome: ChecksPending, At: t0.Add(time.Minute)},
	}
	r := Reduce(evs)
	if st := r.Issues[3].Checks; st == nil || !st.Since.Equal(t0) || st.Outcome != ChecksPending {
		t.Fatalf("same head: %+v, want pending since %s", st, t0)
	}
	evs = append(evs, Event{Kind: EvChecks, Issue: 3, Commit: "b2", Outcome: ChecksPending, At: t0.Add(time.Hour)},
		Event{Kind: EvChecks, Commit: "c3", Outcome: ChecksFailed, Detail: "failed: ci (failure)", At: t0.Add(2 * time.Hour)})
	r = Reduce(evs)
	if st := r.Issues[3].Checks; !st.Since.Equal(t0.Add(time.Hour)) || st.Commit != "b2" {
		t.Errorf("new head: %+v, want its own since", st)
	}
	if r.FinalChecks == nil || r.FinalChecks.Outcome != ChecksFailed || !slices.Contains([]string{"c3"}, r.FinalChecks.Commit) {
		t.Errorf("final PR checks: %+v", r.FinalChecks)
	}
	if _, in := r.Issues[0]; in {
		t.Error("the final PR's checks made an issue #0")
	}
}
