package lanemetrics

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/outcomes"
	"github.com/wave-orchestrator/wave-orchestrator/spend"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

func TestMetricsCountRunsByOutcomeAndAddUpTheirSpend(t *testing.T) {
	tok := func(n int64) *int64 { return &n }
	usd := func(v float64) *float64 { return &v }
	two := 2
	in := Input{
		Lane: state.Lane{Lane: "main", Waves: []state.Wave{{Wave: 0, Status: state.WaveRunning,
			Agents:    []state.Agent{{ID: "A1", State: "running"}, {ID: "A2", State: "completed"}},
			Questions: []state.Question{{State: "pending"}, {State: "answered"}}}}},
		Runs: []spend.Run{
			{Kind: spend.KindWave, Executor: "claude", Outcome: "completed", Usage: &usage.Usage{InputTokens: tok(100), CostUSD: usd(0.25)}},
			{Kind: spend.KindWave, Executor: "claude", Outcome: "failed", Usage: &usage.Usage{InputTokens: tok(50), CostUSD: usd(0.5)}},
			{Kind: spend.KindBacklog, Issue: &two, Executor: "codex", Outcome: "running"},
		},
		Backlog: backlog.Reduce([]backlog.Event{{Kind: backlog.EvRunStarted, Run: &backlog.RunInfo{ID: "r1"}},
			{Kind: backlog.EvIssue, Issue: 2}, {Kind: backlog.EvClaimed, Issue: 2}, {Kind: backlog.EvMerged, Issue: 2}}),
		Ledger: &outcomes.Row{Taken: 3, Merged: 2, Reverted: 1, PerMerged: &outcomes.PerMerged{CostUSD: usd(0.4)}},
	}
	b := exposition(t, collectorOf(func(context.Context) (Input, error) { return in, nil }))
	for _, want := range []string{
		`wave_agent_runs{executor="claude",lane="main",mode="wave",outcome="completed"} 1`,
		`wave_agent_runs{executor="claude",lane="main",mode="wave",outcome="failed"} 1`,
		`wave_agent_runs{executor="codex",lane="main",mode="backlog",outcome="running"} 1`,
		`wave_agent_cost_usd{lane="main",mode="wave"} 0.75`,
		`wave_agent_tokens{kind="input",lane="main",mode="wave"} 150`,
		`wave_agents{lane="main",state="running",wave="0"} 1`,
		`wave_questions_pending{lane="main",mode="wave"} 1`,
		`wave_backlog_issues{lane="main",run="r1",state="merged"} 1`,
		`wave_outcome_issues{lane="main",outcome="reverted"} 1`,
		`wave_outcome_cost_per_merged_usd{lane="main"} 0.4`,
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("missing %s in:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), `kind="output"`) {
		t.Errorf("a token kind no run reported is exposed as 0:\n%s", b.String())
	}
}

// exposition is what a pedantic registry (one that checks every metric
// against its description) gathers from c, in the text format.
func exposition(t *testing.T, c prometheus.Collector) *strings.Builder {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return &b
}

// A run whose executor is not recorded is counted as "unknown", in one
// series with the runs of an executor named so: never two series with
// the same labels, which Prometheus refuses whole.
func TestARunWithoutAnExecutorCountsInTheUnknownSeries(t *testing.T) {
	in := Input{Lane: state.Lane{Lane: "main"}, Runs: []spend.Run{
		{Kind: spend.KindWave, Outcome: "completed"},
		{Kind: spend.KindWave, Executor: "unknown", Outcome: "completed"},
	}}
	b := exposition(t, collectorOf(func(context.Context) (Input, error) { return in, nil }))
	if want := `wave_agent_runs{executor="unknown",lane="main",mode="wave",outcome="completed"} 2` + "\n"; !strings.Contains(b.String(), want) {
		t.Errorf("missing %s in:\n%s", want, b.String())
	}
}
