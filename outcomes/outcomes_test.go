package outcomes

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/spend"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

var t0 = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

func spent(issue, attempt int, executor, model string, tokens int64, cost float64) spend.Run {
	return spend.Run{Issue: &issue, Attempt: attempt, Executor: executor,
		Usage: &usage.Usage{InputTokens: &tokens, CostUSD: &cost, Model: &model}}
}

// A run that took four issues: #1 merged after 10 minutes, #2 after 30,
// #3 parked, #4 asking a question; #5 was planned and never claimed.
func aRun() ([]backlog.Event, []spend.Run) {
	evs := []backlog.Event{
		{At: at(0), Kind: backlog.EvRunStarted, Run: &backlog.RunInfo{ID: "r1", Base: "main"}},
	}
	labels := map[int][]string{1: {"area:api", "P1"}, 2: {"area:api"}, 4: {"P1"}}
	for n := 1; n <= 5; n++ {
		evs = append(evs, backlog.Event{At: at(0), Kind: backlog.EvIssue, Issue: n, Labels: labels[n]})
	}
	for _, n := range []int{1, 2, 3, 4} {
		evs = append(evs, backlog.Event{At: at(0), Kind: backlog.EvClaimed, Issue: n})
	}
	evs = append(evs,
		backlog.Event{At: at(10), Kind: backlog.EvMerged, Issue: 1, Commit: "c1"},
		backlog.Event{At: at(30), Kind: backlog.EvMerged, Issue: 2, Commit: "c2"},
		backlog.Event{At: at(31), Kind: backlog.EvParked, Issue: 3, Detail: "failed twice"},
		backlog.Event{At: at(32), Kind: backlog.EvNeedsInput, Issue: 4, Question: "which API?"},
	)
	runs := []spend.Run{
		spent(1, 1, "claude", "claude-sonnet-4-5", 1000, 0.10),
		spent(2, 1, "codex", "gpt-5", 3000, 0.30),
		spent(3, 1, "claude", "claude-sonnet-4-5", 500, 0.05),
		spent(3, 2, "claude", "claude-sonnet-4-5", 500, 0.05),
		spent(4, 1, "claude", "claude-sonnet-4-5", 1000, 0.10),
	}
	return evs, runs
}

func TestTheLedgerCountsWhatBecameOfEachIssueTaken(t *testing.T) {
	evs, runs := aRun()
	issues := FromRun("r1", evs, runs)
	for i := range issues {
		if issues[i].Number == 2 {
			issues[i].RevertedBy = "rev" // #2's merge was reverted on main
		}
	}
	_, total, err := Build(issues, "")
	if err != nil {
		t.Fatal(err)
	}
	if total.Taken != 4 || total.Merged != 2 || total.Parked != 1 || total.NeedsInput != 1 || total.InFlight != 0 || total.Reverted != 1 {
		t.Fatalf("total %+v: want 4 taken (the unclaimed #5 not), 2 merged, 1 parked, 1 needs input, 1 reverted", total)
	}
	if total.PerMerged == nil || *total.PerMerged.CostUSD != 0.30 || *total.PerMerged.Tokens != 3000 {
		t.Errorf("per merged %+v: want every issue's spend ($0.60, 6000 tokens) over 2 merged", total.PerMerged)
	}
	if total.MedianClaimToMerge == nil || *total.MedianClaimToMerge != 20*60 {
		t.Errorf("median claim to merge %v, want 20m", total.MedianClaimToMerge)
	}
	want := "4 taken · 2 merged · 1 parked · 1 needs input · 0 in flight · 1 reverted · $0.30 and 3.0k tokens per merged issue · median claim to merge 20m"
	if got := Line(total); got != want {
		t.Errorf("line %q\nwant %q", got, want)
	}
}

func TestTheLedgerGroupsByExecutorModelAndLabel(t *testing.T) {
	evs, runs := aRun()
	issues := FromRun("r1", evs, runs)
	for by, want := range map[string]string{
		"executor": "claude:3/1 codex:1/1",
		"model":    "claude-sonnet-4-5:3/1 gpt-5:1/1",
		"label":    "(no label):1/0 P1:2/1 area:api:2/2",
	} {
		rows, total, err := Build(issues, by)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			got = append(got, r.Key+":"+strconv.Itoa(r.Taken)+"/"+strconv.Itoa(r.Merged))
		}
		if strings.Join(got, " ") != want || total.Taken != 4 {
			t.Errorf("--by %s: %v (total taken %d), want %s (total 4: an issue counts once)", by, got, total.Taken, want)
		}
	}
	if _, _, err := Build(issues, "wave"); err == nil || !strings.Contains(err.Error(), "executor, model, label") {
		t.Errorf("--by wave: %v, want an error naming the groupings", err)
	}
}

func TestSinceKeepsTheIssuesClaimedSince(t *testing.T) {
	evs, runs := aRun()
	issues := FromRun("r1", evs, runs)
	if got := Since(issues, at(1)); len(got) != 0 {
		t.Errorf("since after every claim: %d issues", len(got))
	}
	if got := Since(issues, at(0)); len(got) != 4 {
		t.Errorf("since the claims: %d issues, want 4", len(got))
	}
}
