// Package outcomes owns the outcome ledger: what became of the issues
// the lane's backlog runs took — merged, parked, waiting for a person,
// still in flight, and merged then reverted on the base branch — with
// what the work cost per merged issue and how long a claim took to merge.
// `usage --outcomes` prints it, serve's /metrics exposes it and the final
// pull request ends with its line (docs/observability.md). Building it is
// pure (Build, FromRun); Gather reads the runs and git.
package outcomes

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/spend"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// Outcomes of an issue a run took.
const (
	Merged     = "merged"
	Parked     = "parked" // parked or failed: a person must look
	NeedsInput = "needs-input"
	InFlight   = "in-flight" // not finished (yet, or the run was stopped)
)

// Issue is one issue as one backlog run took it (an issue taken again by
// a later run is a second Issue).
type Issue struct {
	Run         string      `json:"run"`
	Number      int         `json:"number"`
	Labels      []string    `json:"labels,omitempty"`
	Executor    string      `json:"executor,omitempty"`
	Model       string      `json:"model,omitempty"`
	Outcome     string      `json:"outcome"`
	ClaimedAt   time.Time   `json:"claimedAt"`
	MergedAt    *time.Time  `json:"mergedAt,omitempty"`
	MergeCommit string      `json:"mergeCommit,omitempty"`
	Base        string      `json:"base,omitempty"`
	RevertedBy  string      `json:"revertedBy,omitempty"` // the revert commit on the base branch
	Usage       usage.Usage `json:"usage"`
}

// FromRun lists the issues run (its id and events) claimed, with the
// spend of their worker and reviewer runs (spend.BacklogRuns of its
// directory).
func FromRun(id string, evs []backlog.Event, runs []spend.Run) []Issue {
	r := backlog.Reduce(evs)
	claimed, merged := map[int]time.Time{}, map[int]time.Time{}
	labels := map[int][]string{}
	for _, ev := range evs {
		switch ev.Kind {
		case backlog.EvClaimed:
			if _, ok := claimed[ev.Issue]; !ok {
				claimed[ev.Issue] = ev.At
			}
		case backlog.EvMerged:
			merged[ev.Issue] = ev.At
		case backlog.EvIssue:
			labels[ev.Issue] = ev.Labels
		}
	}
	var out []Issue
	for _, n := range r.Order {
		at, ok := claimed[n]
		if !ok {
			continue // never taken: dropped or planned only
		}
		is := r.Issues[n]
		it := Issue{Run: id, Number: n, Labels: labels[n], ClaimedAt: at, Base: r.Info.Base, Outcome: InFlight}
		switch is.State {
		case backlog.StateMerged:
			it.Outcome, it.MergeCommit = Merged, is.MergeCommit
			if m, ok := merged[n]; ok {
				it.MergedAt = &m
			}
		case backlog.StateParked, backlog.StateFailed:
			it.Outcome = Parked
		case backlog.StateNeedsInput:
			it.Outcome = NeedsInput
		}
		last := 0
		for _, sr := range runs {
			if sr.Issue == nil || *sr.Issue != n {
				continue
			}
			if sr.Usage != nil {
				it.Usage = usage.Add(it.Usage, *sr.Usage)
			}
			if !sr.Review && sr.Attempt >= last {
				last = sr.Attempt
				it.Executor = sr.Executor
				if m := sr.Model(); m != "" {
					it.Model = m
				}
			}
		}
		out = append(out, it)
	}
	return out
}

// Since keeps the issues claimed at or after t (zero: all).
func Since(issues []Issue, t time.Time) []Issue {
	if t.IsZero() {
		return issues
	}
	var out []Issue
	for _, is := range issues {
		if !is.ClaimedAt.Before(t) {
			out = append(out, is)
		}
	}
	return out
}

// Groupings of `usage --outcomes --by`.
var Groupings = []string{"executor", "model", "label"}

// Row is the ledger of a group of issues.
type Row struct {
	Key        string `json:"key"`
	Taken      int    `json:"taken"`
	Merged     int    `json:"merged"`
	Parked     int    `json:"parked"`
	NeedsInput int    `json:"needsInput"`
	InFlight   int    `json:"inFlight"`
	Reverted   int    `json:"reverted"`
	// Usage is what every issue taken spent, merged or not.
	Usage usage.Usage `json:"usage"`
	// PerMerged is Usage spread over the merged issues: what one merged
	// issue cost, failures included; null when none merged.
	PerMerged *PerMerged `json:"perMerged"`
	// MedianClaimToMerge is the median time from claim to merge of the
	// merged issues, in seconds; null when none merged.
	MedianClaimToMerge *float64 `json:"medianClaimToMergeSeconds"`
}

// PerMerged is a spend per merged issue; a figure no run reported is null.
type PerMerged struct {
	Tokens  *float64 `json:"tokens"`
	CostUSD *float64 `json:"costUsd"`
}

// Build groups issues by one of Groupings ("" = none: the total only)
// and returns the rows in key order and the total. An issue with several
// labels counts in each label's row, once in the total.
func Build(issues []Issue, by string) (rows []Row, total Row, err error) {
	if by != "" && !slices.Contains(Groupings, by) {
		return nil, Row{}, fmt.Errorf("--by %q: with --outcomes, want one of %s", by, strings.Join(Groupings, ", "))
	}
	groups := map[string][]Issue{}
	for _, is := range issues {
		for _, k := range keys(is, by) {
			groups[k] = append(groups[k], is)
		}
	}
	for k, g := range groups {
		rows = append(rows, row(k, g))
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Key < rows[j].Key })
	return rows, row("total", issues), nil
}

func keys(is Issue, by string) []string {
	orNone := func(s string) string {
		if s == "" {
			return "(unknown)"
		}
		return s
	}
	switch by {
	case "executor":
		return []string{orNone(is.Executor)}
	case "model":
		return []string{orNone(is.Model)}
	case "label":
		if len(is.Labels) == 0 {
			return []string{"(no label)"}
		}
		return slices.Compact(slices.Sorted(slices.Values(is.Labels)))
	}
	return nil
}

func row(key string, issues []Issue) Row {
	r := Row{Key: key, Taken: len(issues)}
	var waits []float64
	for _, is := range issues {
		switch is.Outcome {
		case Merged:
			r.Merged++
			if is.MergedAt != nil {
				waits = append(waits, is.MergedAt.Sub(is.ClaimedAt).Seconds())
			}
			if is.RevertedBy != "" {
				r.Reverted++
			}
		case Parked:
			r.Parked++
		case NeedsInput:
			r.NeedsInput++
		default:
			r.InFlight++
		}
		r.Usage = usage.Add(r.Usage, is.Usage)
	}
	if r.Merged > 0 {
		pm := &PerMerged{}
		if r.Usage.InputTokens != nil || r.Usage.OutputTokens != nil || r.Usage.CacheReadTokens != nil || r.Usage.CacheWriteTokens != nil {
			t := float64(r.Usage.Tokens()) / float64(r.Merged)
			pm.Tokens = &t
		}
		if r.Usage.CostUSD != nil {
			c := *r.Usage.CostUSD / float64(r.Merged)
			pm.CostUSD = &c
		}
		r.PerMerged = pm
	}
	if len(waits) > 0 {
		m := median(waits)
		r.MedianClaimToMerge = &m
	}
	return r
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Line is the ledger's total in one line, for the final pull request's
// footer and the end of `usage --outcomes`.
func Line(t Row) string {
	s := fmt.Sprintf("%d taken · %d merged · %d parked · %d needs input · %d in flight · %d reverted",
		t.Taken, t.Merged, t.Parked, t.NeedsInput, t.InFlight, t.Reverted)
	if pm := t.PerMerged; pm != nil {
		var per []string
		if pm.CostUSD != nil {
			per = append(per, fmt.Sprintf("$%.2f", *pm.CostUSD))
		}
		if pm.Tokens != nil {
			per = append(per, usage.TokensCell(ptr(int64(*pm.Tokens)))+" tokens")
		}
		if len(per) > 0 {
			s += " · " + strings.Join(per, " and ") + " per merged issue"
		}
	}
	if t.MedianClaimToMerge != nil {
		s += " · median claim to merge " + Duration(*t.MedianClaimToMerge)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// Duration writes seconds as 45s, 14m, 2h05m or 3d04h.
func Duration(sec float64) string {
	d := time.Duration(sec * float64(time.Second)).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}
