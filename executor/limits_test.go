package executor

import (
	"fmt"
	"slices"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// launch-preview.json says where each limit came from: the agent's
// executor block, its profile, the lane, or nothing, and the deadline's
// source when a budget cuts the lane timeout short.
func TestResolveLimitsNamesEachLimitsSource(t *testing.T) {
	tests := []struct {
		name          string
		ec            wave.ExecutorConfig
		laneMaxTurns  *int
		turns         *int
		turnSource    string
		minutes       int
		minutesSource string
		note          bool
	}{
		{"agent claude.maxTurns", wave.ExecutorConfig{ID: ptr("claude"), Claude: &wave.ClaudeConfig{MaxTurns: ptr(12)}}, ptr(50),
			ptr(12), "agent claude.maxTurns", 90, "runtime.timeoutMinutes", false},
		{"lane claude.maxTurns", wave.ExecutorConfig{ID: ptr("claude")}, ptr(50),
			ptr(50), "lane claude.maxTurns", 90, "runtime.timeoutMinutes", false},
		{"profile budget", wave.ExecutorConfig{Profile: ptr("deep-review")}, nil,
			ptr(40), "profile deep-review budget.turns", 30, "profile deep-review budget.minutes", false},
		{"agent budget over profile", wave.ExecutorConfig{Profile: ptr("deep-review"), Budget: &wave.Budget{Turns: ptr(7), Minutes: ptr(20)}}, nil,
			ptr(7), "agent budget.turns", 20, "agent budget.minutes", false},
		{"opencode steps", wave.ExecutorConfig{ID: ptr("opencode"), Opencode: &wave.OpencodeConfig{Steps: ptr(9)}}, nil,
			ptr(9), "agent opencode.steps", 90, "runtime.timeoutMinutes", false},
		{"claude without a limit", wave.ExecutorConfig{ID: ptr("claude")}, nil,
			nil, TurnLimitNotSet, 90, "runtime.timeoutMinutes", false},
		{"codex has none; budget.turns is advisory", wave.ExecutorConfig{ID: ptr("codex"), Budget: &wave.Budget{Turns: ptr(5)}}, nil,
			nil, TurnLimitNotApplicable, 90, "runtime.timeoutMinutes", true},
		{"budget above the timeout does not count", wave.ExecutorConfig{ID: ptr("local"), Budget: &wave.Budget{Minutes: ptr(500)}}, nil,
			nil, TurnLimitNotApplicable, 90, "runtime.timeoutMinutes", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lane := testLane(t.TempDir())
			lane.Executors.Claude.MaxTurns = tc.laneMaxTurns
			ec := tc.ec
			a := wave.Agent{ID: "A1", Executor: &ec}
			r, err := Resolve(&a, "implementation", lane, "", false)
			if err != nil {
				t.Fatal(err)
			}
			l := ResolveLimits(r, 90, "runtime.timeoutMinutes")
			if (l.TurnLimit == nil) != (tc.turns == nil) || l.TurnLimit != nil && *l.TurnLimit != *tc.turns || l.TurnLimitSource != tc.turnSource {
				t.Errorf("turn limit %s from %q, want %s from %q", intStr(l.TurnLimit), l.TurnLimitSource, intStr(tc.turns), tc.turnSource)
			}
			if l.DeadlineMinutes != tc.minutes || l.DeadlineSource != tc.minutesSource {
				t.Errorf("deadline %d from %q, want %d from %q", l.DeadlineMinutes, l.DeadlineSource, tc.minutes, tc.minutesSource)
			}
			if tc.note != slices.ContainsFunc(l.Notes, func(n string) bool { return n != "" }) {
				t.Errorf("notes %q", l.Notes)
			}
		})
	}
}

func intStr(p *int) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}
