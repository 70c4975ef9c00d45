// Package lanemetrics is the Prometheus collector behind serve's
// /metrics, reading what the lane has on disk: agent runs by outcome,
// their tokens and cost, agents and waves by state, the questions
// waiting for a person, the newest backlog run's tally, and the outcome
// ledger. Every figure is a gauge read at scrape time from the durable
// records, so a restarted server (or launcher) changes nothing. Names
// and labels: docs/observability.md.
package lanemetrics

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
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

// The metrics' descriptions: name, help, variable labels.
type descs struct {
	runs, tokens, cost, agents, waves, pending             *prometheus.Desc
	issues, queue, apiCalls, finished                      *prometheus.Desc
	outcomes, costPerMerged, tokensPerMerged, claimToMerge *prometheus.Desc
}

func newDescs() descs {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return descs{
		runs:            d("wave_agent_runs", "Agent run directories of the lane (wave agents and backlog workers and reviewers), by mode, executor and outcome (completed, failed, terminated, running).", "lane", "mode", "executor", "outcome"),
		tokens:          d("wave_agent_tokens", "Tokens the lane's agent runs reported, by mode and kind (input, output, cache_read, cache_write).", "lane", "mode", "kind"),
		cost:            d("wave_agent_cost_usd", "What the lane's agent runs cost in US dollars, by mode.", "lane", "mode"),
		agents:          d("wave_agents", "The lane's agents as its state shows them, by wave and state.", "lane", "wave", "state"),
		waves:           d("wave_waves", "The lane's waves by status.", "lane", "status"),
		pending:         d("wave_questions_pending", "Questions waiting for a person: wave agents' (mode wave) and the newest backlog run's needs-input issues (mode backlog).", "lane", "mode"),
		issues:          d("wave_backlog_issues", "The newest backlog run's issues by state (merged, in_flight, blocked, needs_input, planned).", "lane", "run", "state"),
		queue:           d("wave_backlog_queue_depth", "Issues of the newest backlog run ready and waiting for their merge.", "lane", "run"),
		apiCalls:        d("wave_backlog_api_calls", "GitHub API requests the newest backlog run made.", "lane", "run"),
		finished:        d("wave_backlog_finished", "1 once the newest backlog run has ended.", "lane", "run"),
		outcomes:        d("wave_outcome_issues", "The outcome ledger over every backlog run of the lane: issues taken, merged, parked, needs_input, in_flight, and merged then reverted on the base branch.", "lane", "outcome"),
		costPerMerged:   d("wave_outcome_cost_per_merged_usd", "What the issues taken cost, merged or not, per merged issue, in US dollars.", "lane"),
		tokensPerMerged: d("wave_outcome_tokens_per_merged", "Tokens the issues taken spent, merged or not, per merged issue.", "lane"),
		claimToMerge:    d("wave_outcome_claim_to_merge_median_seconds", "Median time from an issue's claim to its merge.", "lane"),
	}
}

func (d descs) all() []*prometheus.Desc {
	return []*prometheus.Desc{d.runs, d.tokens, d.cost, d.agents, d.waves, d.pending, d.issues, d.queue, d.apiCalls,
		d.finished, d.outcomes, d.costPerMerged, d.tokensPerMerged, d.claimToMerge}
}

// scrapeTimeout bounds what one scrape reads (the lane's state, the
// outcome ledger's git history).
const scrapeTimeout = 10 * time.Second

// Collector is a prometheus.Collector of one lane's figures, read from
// its records at every scrape.
type Collector struct {
	d    descs
	read func(context.Context) (Input, error)
}

// NewCollector collects what src gathers besides the lane's state,
// which load reads as `status` does.
func NewCollector(src *Source, load func(context.Context) (state.Lane, error)) *Collector {
	return collectorOf(func(ctx context.Context) (Input, error) {
		l, err := load(ctx)
		if err != nil {
			return Input{}, err
		}
		return src.Gather(ctx, l), nil
	})
}

func collectorOf(read func(context.Context) (Input, error)) *Collector {
	return &Collector{d: newDescs(), read: read}
}

// Describe sends every metric's description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.d.all() {
		ch <- d
	}
}

// Collect reads the lane and sends its figures; a lane that cannot be
// read fails the scrape, saying why.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	in, err := c.read(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.d.waves, fmt.Errorf("read the lane: %w", err))
		return
	}
	c.d.emit(in, ch)
}

// emit sends in's figures, every one a gauge. Pure.
func (d descs) emit(in Input, ch chan<- prometheus.Metric) {
	lane := in.Lane.Lane
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		for i, l := range labels {
			labels[i] = strings.ToValidUTF8(l, "\uFFFD")
		}
		m, err := prometheus.NewConstMetric(desc, prometheus.GaugeValue, v, labels...)
		if err != nil {
			m = prometheus.NewInvalidMetric(desc, err)
		}
		ch <- m
	}
	type runKey struct{ mode, executor, outcome string }
	counts := map[runKey]int{}
	spent := map[string]*[5]float64{} // mode → input, output, cache read, cache write, cost
	seen := map[string][5]bool{}
	for _, r := range in.Runs {
		counts[runKey{r.Kind, orUnknown(r.Executor), orUnknown(r.Outcome)}]++
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
		gauge(d.runs, float64(n), lane, k.mode, k.executor, k.outcome)
	}
	for mode, s := range spent {
		for i, kind := range []string{"input", "output", "cache_read", "cache_write"} {
			if seen[mode][i] {
				gauge(d.tokens, s[i], lane, mode, kind)
			}
		}
		gauge(d.cost, s[4], lane, mode)
	}
	waveStatus := map[string]int{}
	asked := 0
	for _, w := range in.Lane.Waves {
		waveStatus[w.Status]++
		byState := map[string]int{}
		for _, a := range w.Agents {
			byState[a.State]++
		}
		for st, n := range byState {
			gauge(d.agents, float64(n), lane, strconv.Itoa(w.Wave), st)
		}
		for _, q := range w.Questions {
			if q.State == "pending" {
				asked++
			}
		}
	}
	for st, n := range waveStatus {
		gauge(d.waves, float64(n), lane, st)
	}
	gauge(d.pending, float64(asked), lane, "wave")
	if b := in.Backlog; b != nil {
		t := b.Tally()
		gauge(d.pending, float64(t.NeedsInput), lane, "backlog")
		run := b.Info.ID
		for st, n := range map[string]int{"merged": t.Merged, "in_flight": t.InFlight, "blocked": t.Blocked, "needs_input": t.NeedsInput, "planned": t.Planned} {
			gauge(d.issues, float64(n), lane, run, st)
		}
		finished := 0.0
		if b.Finished {
			finished = 1
		}
		gauge(d.queue, float64(len(b.Queue)), lane, run)
		gauge(d.apiCalls, float64(b.APICalls), lane, run)
		gauge(d.finished, finished, lane, run)
	}
	if l := in.Ledger; l != nil {
		d.emitLedger(lane, *l, gauge)
	}
}

func (d descs) emitLedger(lane string, t outcomes.Row, gauge func(*prometheus.Desc, float64, ...string)) {
	for k, n := range map[string]int{"taken": t.Taken, "merged": t.Merged, "parked": t.Parked, "needs_input": t.NeedsInput, "in_flight": t.InFlight, "reverted": t.Reverted} {
		gauge(d.outcomes, float64(n), lane, k)
	}
	one := func(desc *prometheus.Desc, v *float64) {
		if v != nil {
			gauge(desc, *v, lane)
		}
	}
	if pm := t.PerMerged; pm != nil {
		one(d.costPerMerged, pm.CostUSD)
		one(d.tokensPerMerged, pm.Tokens)
	}
	one(d.claimToMerge, t.MedianClaimToMerge)
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
