package executor

import (
	"fmt"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// Layers a limit can come from, as LimitOrigins and the *Source fields of
// Limits name them.
const (
	LayerAgent   = "agent"   // the agent's `### Executor` block in the wave file
	LayerProfile = "profile" // the executor profile the agent names
	LayerLane    = "lane"    // the lane's executors.<vendor> section
)

// LimitOrigins records which layer set each limit of a resolved executor
// ("" when none did). Not serialised into executorResolved.
type LimitOrigins struct {
	BudgetTurns, BudgetMinutes    string
	ClaudeMaxTurns, OpencodeSteps string
	Profile                       string // the profile's name, for messages
}

// layerOf names the first layer that sets a limit: agent over profile
// over lane.
func layerOf(agent, profile, lane *int) string {
	switch {
	case agent != nil:
		return LayerAgent
	case profile != nil:
		return LayerProfile
	case lane != nil:
		return LayerLane
	}
	return ""
}

// originsOf finds the layer of each limit of an agent.
func originsOf(ec *wave.ExecutorConfig, profile *config.Profile, ex config.Executors) LimitOrigins {
	o := LimitOrigins{Profile: deref(ec.Profile)}
	var aB, pB config.Budget
	if ec.Budget != nil {
		aB = *ec.Budget
	}
	if profile.Budget != nil {
		pB = *profile.Budget
	}
	o.BudgetTurns = layerOf(aB.Turns, pB.Turns, nil)
	o.BudgetMinutes = layerOf(aB.Minutes, pB.Minutes, nil)
	var aC, pC wave.ClaudeConfig
	if ec.Claude != nil {
		aC = *ec.Claude
	}
	if profile.Claude != nil {
		pC = *profile.Claude
	}
	var aO, pO wave.OpencodeConfig
	if ec.Opencode != nil {
		aO = *ec.Opencode
	}
	if profile.Opencode != nil {
		pO = *profile.Opencode
	}
	o.ClaudeMaxTurns = layerOf(aC.MaxTurns, pC.MaxTurns, ex.Claude.MaxTurns)
	o.OpencodeSteps = layerOf(aO.Steps, pO.Steps, ex.Opencode.Steps)
	return o
}

// Limits are the resolved limits of one agent run and where each came
// from: launch-preview.json's "limits".
type Limits struct {
	// DeadlineMinutes is how long the run may take before it is
	// terminated; DeadlineSource names what set it: "budget.minutes
	// (agent|profile)", or the lane timeout's own source (the
	// --timeout-minutes flag, config runtime.timeoutMinutes, or the
	// default of 240).
	DeadlineMinutes int    `json:"deadlineMinutes"`
	DeadlineSource  string `json:"deadlineSource"`
	// TurnLimit is the turn (claude) or step (opencode) limit passed to
	// the executor, nil when none is. TurnLimitSource says where it came
	// from: "<layer> claude.maxTurns", "<layer> opencode.steps" or
	// "<layer> budget.turns" with layer agent, profile or lane;
	// "not-set" when the executor takes a limit but nothing set one;
	// "not-applicable" when the executor has no turn limit (codex, local,
	// shell).
	TurnLimit       *int     `json:"turnLimit"`
	TurnLimitSource string   `json:"turnLimitSource"`
	Notes           []string `json:"notes"`
}

// Turn limit sources without a layer.
const (
	TurnLimitNotSet        = "not-set"
	TurnLimitNotApplicable = "not-applicable"
)

// ResolveLimits computes the limits of a run of r: timeoutMinutes is the
// lane's per-agent timeout and timeoutSource where it came from.
func ResolveLimits(r Resolved, timeoutMinutes int, timeoutSource string) Limits {
	o := r.Origins
	l := Limits{DeadlineMinutes: timeoutMinutes, DeadlineSource: timeoutSource, Notes: []string{}}
	if b := r.Budget; b != nil && b.Minutes != nil && *b.Minutes > 0 && *b.Minutes < timeoutMinutes {
		l.DeadlineMinutes, l.DeadlineSource = *b.Minutes, layered(o.BudgetMinutes, o.Profile, "budget.minutes")
	}
	var budgetTurns *int
	if r.Budget != nil {
		budgetTurns = r.Budget.Turns
	}
	vendor := func(v *int, origin, key string) {
		switch {
		case v != nil:
			l.TurnLimit, l.TurnLimitSource = v, layered(origin, o.Profile, key)
		case budgetTurns != nil:
			l.TurnLimit, l.TurnLimitSource = budgetTurns, layered(o.BudgetTurns, o.Profile, "budget.turns")
		default:
			l.TurnLimitSource = TurnLimitNotSet
		}
	}
	switch r.ID {
	case Claude:
		vendor(r.Claude.MaxTurns, o.ClaudeMaxTurns, "claude.maxTurns")
	case Opencode:
		vendor(r.Opencode.Steps, o.OpencodeSteps, "opencode.steps")
	default:
		l.TurnLimitSource = TurnLimitNotApplicable
		if budgetTurns != nil {
			l.Notes = append(l.Notes, fmt.Sprintf("budget.turns %d is advisory: executor %s has no turn limit", *budgetTurns, r.ID))
		}
	}
	return l
}

func layered(origin, profile, key string) string {
	if origin == LayerProfile && profile != "" {
		return fmt.Sprintf("profile %s %s", profile, key)
	}
	if origin == "" {
		return key
	}
	return origin + " " + key
}

// UsagePolicy is how the runner meters a run of r: the lane's price
// table, r's model, and r's budget.tokens / budget.costUsd as its cap.
func UsagePolicy(r Resolved, l *config.Lane) *runtime.UsagePolicy {
	return &runtime.UsagePolicy{Model: deref(r.Model), Pricing: l.Pricing, Cap: r.Budget.Cap(), WarnAtPercent: l.Runtime.Budget.Warn()}
}
