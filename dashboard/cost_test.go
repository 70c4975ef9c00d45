package dashboard

import (
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// Once runs report usage the dashboard shows each agent's cost (its
// tokens when no cost is known), the wave's spend and the lane total.
func TestDashboardShowsCostPerAgentAndTheLaneTotal(t *testing.T) {
	l := runningLane()
	in, cost := int64(12000), 0.42
	l.Waves[0].Agents[0].Usage = &usage.Usage{InputTokens: &in, CostUSD: &cost}
	out := int64(800)
	l.Waves[0].Agents[1].Usage = &usage.Usage{OutputTokens: &out}
	total := usage.Usage{InputTokens: &in, OutputTokens: &out, CostUSD: &cost}
	l.Waves[0].Usage, l.Usage = &total, &total
	got := Render(l, Options{Width: 160, Now: clock, Wave: -1, Selected: -1})
	for _, want := range []string{"COST", "$0.420", "800t", "spent 12.8k tok $0.420"} {
		if !strings.Contains(got, want) {
			t.Errorf("frame lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "spent 12.8k tok $0.420") != 2 {
		t.Errorf("want the lane and the wave total:\n%s", got)
	}
}

// ApplyUsage sums every run of an agent (retries too) into it, its
// wave and the lane.
func TestStatusUsageSumsEveryRun(t *testing.T) {
	l := runningLane()
	w, a := l.Waves[0].Wave, l.Waves[0].Agents[0].ID
	n := func(v int64) *usage.Usage { return &usage.Usage{InputTokens: &v} }
	l.ApplyUsage([]state.RunSpend{{Wave: w, Agent: a, Usage: n(100)}, {Wave: w, Agent: a, Usage: n(50)}, {Wave: w, Agent: "other", Usage: n(7)}, {Wave: w + 99, Agent: a, Usage: n(1000)}})
	if got := l.Waves[0].Agents[0].Usage.Tokens(); got != 150 {
		t.Errorf("agent %d, want 150", got)
	}
	if got := l.Waves[0].Usage.Tokens(); got != 157 {
		t.Errorf("wave %d, want 157", got)
	}
	if l.Waves[0].Agents[1].Usage != nil {
		t.Errorf("an agent without runs has usage %+v", l.Waves[0].Agents[1].Usage)
	}
}

// The STATE column is as wide as its widest state: an agent stopped at
// its budget reads budget-exceeded in full.
func TestTheStateColumnShowsBudgetExceededInFull(t *testing.T) {
	l := runningLane()
	l.Waves[0].Agents[0].State = "budget-exceeded"
	got := Render(l, Options{Width: 160, Now: clock, Wave: -1, Selected: -1})
	if !strings.Contains(got, "budget-exceeded ") {
		t.Fatalf("frame cuts the state:\n%s", got)
	}
}
