// Package lanemetrics builds serve's /metrics from what the lane has on
// disk: agent runs by outcome, their tokens and cost, agents and waves by
// state, the questions waiting for a person, the newest backlog run's
// tally, and the outcome ledger. Every figure is a gauge read at scrape
// time from the durable records, so a restarted server (or launcher)
// changes nothing. Names and labels: docs/observability.md.
package lanemetrics

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/promtext"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/outcomes"
	"github.com/wave-orchestrator/wave-orchestrator/spend"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// Input is what one scrape reads.
type Input struct {
	Lane    state.Lane
	Runs    []spend.Run
	Backlog *backlog.Run // the newest backlog run, nil when none
	// Ledger is the outcome ledger's total over every backlog run; nil
	// when the lane took no issue.
	Ledger *outcomes.Row
}

// Families is the exposition of in. Pure.
func Families(in Input) []promtext.Family {
	lane := in.Lane.Lane
	g := func(name, help string) *promtext.Family {
		return &promtext.Family{Name: name, Help: help, Type: promtext.Gauge}
	}
	runs := g("wave_agent_runs", "Agent run directories of the lane (wave agents and backlog workers and reviewers), by mode, executor and outcome (completed, failed, terminated, running).")
	tokens := g("wave_agent_tokens", "Tokens the lane's agent runs reported, by mode and kind (input, output, cache_read, cache_write).")
	cost := g("wave_agent_cost_usd", "What the lane's agent runs cost in US dollars, by mode.")
	type runKey struct{ mode, executor, outcome string }
	counts := map[runKey]int{}
	spent := map[string]*[5]float64{} // mode → input, output, cache read, cache write, cost
	seen := map[string][5]bool{}
	for _, r := range in.Runs {
		counts[runKey{r.Kind, r.Executor, orUnknown(r.Outcome)}]++
		s := spent[r.Kind]
		if s == nil {
			s = &[5]float64{}
			spent[r.Kind] = s
		}
		if u := r.Usage; u != nil {
			k := seen[r.Kind]
			for i, v := range []*int64{u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens} {
				if v != nil {
					s[i] += float64(*v)
					k[i] = true
				}
			}
			if u.CostUSD != nil {
				s[4] += *u.CostUSD
				k[4] = true
			}
			seen[r.Kind] = k
		}
	}
	for k, n := range counts {
		runs.Samples = append(runs.Samples, promtext.Sample{Labels: promtext.L("lane", lane, "mode", k.mode, "executor", orUnknown(k.executor), "outcome", k.outcome), Value: float64(n)})
	}
	for mode, s := range spent {
		for i, kind := range []string{"input", "output", "cache_read", "cache_write"} {
			if seen[mode][i] {
				tokens.Samples = append(tokens.Samples, promtext.Sample{Labels: promtext.L("lane", lane, "mode", mode, "kind", kind), Value: s[i]})
			}
		}
		cost.Samples = append(cost.Samples, promtext.Sample{Labels: promtext.L("lane", lane, "mode", mode), Value: s[4]})
	}
	agents := g("wave_agents", "The lane's agents as its state shows them, by wave and state.")
	waves := g("wave_waves", "The lane's waves by status.")
	pending := g("wave_questions_pending", "Questions waiting for a person: wave agents' (mode wave) and the newest backlog run's needs-input issues (mode backlog).")
	waveStatus := map[string]int{}
	asked := 0
	for _, w := range in.Lane.Waves {
		waveStatus[w.Status]++
		byState := map[string]int{}
		for _, a := range w.Agents {
			byState[a.State]++
		}
		for st, n := range byState {
			agents.Samples = append(agents.Samples, promtext.Sample{Labels: promtext.L("lane", lane, "wave", strconv.Itoa(w.Wave), "state", st), Value: float64(n)})
		}
		for _, q := range w.Questions {
			if q.State == "pending" {
				asked++
			}
		}
	}
	for st, n := range waveStatus {
		waves.Samples = append(waves.Samples, promtext.Sample{Labels: promtext.L("lane", lane, "status", st), Value: float64(n)})
	}
	pending.Samples = append(pending.Samples, promtext.Sample{Labels: promtext.L("lane", lane, "mode", "wave"), Value: float64(asked)})
	fams := []promtext.Family{*runs, *tokens, *cost, *agents, *waves}
	if b := in.Backlog; b != nil {
		t := b.Tally()
		pending.Samples = append(pending.Samples, promtext.Sample{Labels: promtext.L("lane", lane, "mode", "backlog"), Value: float64(t.NeedsInput)})
		run := b.Info.ID
		issues := g("wave_backlog_issues", "The newest backlog run's issues by state (merged, in_flight, blocked, needs_input, planned).")
		for st, n := range map[string]int{"merged": t.Merged, "in_flight": t.InFlight, "blocked": t.Blocked, "needs_input": t.NeedsInput, "planned": t.Planned} {
			issues.Samples = append(issues.Samples, promtext.Sample{Labels: promtext.L("lane", lane, "run", run, "state", st), Value: float64(n)})
		}
		one := func(name, help string, v float64) promtext.Family {
			return promtext.Family{Name: name, Help: help, Type: promtext.Gauge, Samples: []promtext.Sample{{Labels: promtext.L("lane", lane, "run", run), Value: v}}}
		}
		finished := 0.0
		if b.Finished {
			finished = 1
		}
		fams = append(fams, *issues,
			one("wave_backlog_queue_depth", "Issues of the newest backlog run ready and waiting for their merge.", float64(len(b.Queue))),
			one("wave_backlog_api_calls", "GitHub API requests the newest backlog run made.", float64(b.APICalls)),
			one("wave_backlog_finished", "1 once the newest backlog run has ended.", finished))
	}
	fams = append(fams, *pending)
	if l := in.Ledger; l != nil {
		fams = append(fams, ledgerFamilies(lane, *l)...)
	}
	return fams
}

func ledgerFamilies(lane string, t outcomes.Row) []promtext.Family {
	issues := promtext.Family{Name: "wave_outcome_issues", Type: promtext.Gauge,
		Help: "The outcome ledger over every backlog run of the lane: issues taken, merged, parked, needs_input, in_flight, and merged then reverted on the base branch."}
	for k, n := range map[string]int{"taken": t.Taken, "merged": t.Merged, "parked": t.Parked, "needs_input": t.NeedsInput, "in_flight": t.InFlight, "reverted": t.Reverted} {
		issues.Samples = append(issues.Samples, promtext.Sample{Labels: promtext.L("lane", lane, "outcome", k), Value: float64(n)})
	}
	out := []promtext.Family{issues}
	one := func(name, help string, v *float64) {
		if v != nil {
			out = append(out, promtext.Family{Name: name, Help: help, Type: promtext.Gauge, Samples: []promtext.Sample{{Labels: promtext.L("lane", lane), Value: *v}}})
		}
	}
	if pm := t.PerMerged; pm != nil {
		one("wave_outcome_cost_per_merged_usd", "What the issues taken cost, merged or not, per merged issue, in US dollars.", pm.CostUSD)
		one("wave_outcome_tokens_per_merged", "Tokens the issues taken spent, merged or not, per merged issue.", pm.Tokens)
	}
	one("wave_outcome_claim_to_merge_median_seconds", "Median time from an issue's claim to its merge.", t.MedianClaimToMerge)
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Source reads a lane's Input for each scrape. The ledger, which asks git
// for the base branch's reverts, is read at most once per LedgerEvery.
type Source struct {
	Layout      lanes.Layout
	LedgerEvery time.Duration
	Now         func() time.Time

	mu       sync.Mutex
	ledger   *outcomes.Row
	ledgerAt time.Time
}

// Gather reads everything but the lane's state, which the caller loads
// (as `status` does) and passes in.
func (s *Source) Gather(ctx context.Context, l state.Lane) Input {
	in := Input{Lane: l, Runs: spend.LaneRuns(s.Layout)}
	if dirs, _ := runlog.List(s.Layout.StateDir); len(dirs) > 0 {
		if r, _, err := runlog.Read(dirs[len(dirs)-1]); err == nil {
			in.Backlog = r
		}
	}
	in.Ledger = s.ledgerRow(ctx)
	return in
}

func (s *Source) ledgerRow(ctx context.Context) *outcomes.Row {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ledgerAt.IsZero() && now().Sub(s.ledgerAt) < s.LedgerEvery {
		return s.ledger
	}
	issues, _ := outcomes.Gather(ctx, s.Layout, s.Layout.RepoRoot)
	_, total, err := outcomes.Build(issues, "")
	s.ledger, s.ledgerAt = nil, now()
	if err == nil && total.Taken > 0 {
		s.ledger = &total
	}
	return s.ledger
}
