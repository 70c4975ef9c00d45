package launcher

// What the next attempt of a failed wave runs: what retry.Next picks
// (the failed agents, the agents open blockers name, closure from where
// it broke), the failed agents on a fallback executor where policy
// allows.

import (
	"fmt"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/gate"
	"github.com/wave-orchestrator/wave-orchestrator/retry"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// retryPlan selects what the next attempt runs — retry.Next's choice
// over the wave's results and open coordination blockers — and moves
// each failed agent to the executor it runs on next (fallback, when
// policy allows).
//
// blocked means some failed agent has no executor left to run on; blocks
// are the failures saying so (retry-fallback-blocked, naming the mix
// targets that held its fallbacks back), unless its own
// executor-unavailable failure already says it all.
func (r *waveRun) retryPlan(next int, failures []gate.Failure) (impl []string, from string, blocked bool, blocks []gate.Failure) {
	for _, f := range failures {
		if ap := r.p.Agents[f.AgentID]; ap != nil {
			blocked = r.fallback(ap, next, f.StatusCode, &blocks) || blocked
		}
	}
	sel := retry.Next(retry.PlanInput{Wave: r.p.Wave, Bindings: r.p.Bindings, Lane: r.l.opt.Lane.Name, Attempt: next - 1,
		Summaries: r.summaries(), Failures: failures, PromptHashes: r.promptHashes(), OpenBlockers: r.openBlockerAgents()})
	return sel.Agents, sel.ClosureFrom, blocked, blocks
}

func (r *waveRun) promptHashes() map[string]string {
	m := make(map[string]string, len(r.p.Agents))
	for id, ap := range r.p.Agents {
		m[id] = ap.Hash
	}
	return m
}

// fallback moves ap to the executor its next attempt runs on, or reports
// that it cannot be retried, adding to blocks why when no failure of the
// agent says so already.
func (r *waveRun) fallback(ap *agentPlan, next int, code string, blocks *[]gate.Failure) bool {
	nr, b, mix := executor.FallbackWithin(ap.Resolved, next, code, r.l.available, r.mixFits())
	for _, id := range mix {
		r.l.printf("wave %d: %s fallback to %s blocked (%s): the lane's runtime mix target for %s is reached",
			r.n, ap.Agent.ID, id, codeFallbackBlock, id)
		r.l.emit(r.n, state.EntityRetry, fmt.Sprintf("wave-%d-attempt-%d-agent-%s", r.n, next, ap.Agent.ID), codeFallbackBlock, next,
			map[string]any{"agentId": ap.Agent.ID, "executorId": id, "reason": "runtime-mix-target"})
	}
	if b || code == codeNoExecutor && nr.ID == ap.Resolved.ID {
		// Retrying an executor that could not start fails the same way.
		detail := "no executor in the fallback chain is available and the current one is missing"
		switch {
		case len(mix) > 0:
			detail = fmt.Sprintf("fallback to %s blocked: the lane's runtime mix target is reached, and %s cannot run",
				strings.Join(mix, ", "), ap.Resolved.ID)
		case code == codeNoExecutor:
			// The executor-unavailable failure already says why.
			return true
		}
		*blocks = append(*blocks, gate.Failure{AgentID: ap.Agent.ID, Gate: "retry", StatusCode: codeFallbackBlock, Detail: detail})
		return true
	}
	if nr.ID != ap.Resolved.ID {
		r.l.printf("wave %d: %s falls back from %s to %s", r.n, ap.Agent.ID, ap.Resolved.ID, nr.ID)
	}
	ap.Resolved = nr
	return false
}

// mixFits reports whether moving one more agent onto an executor keeps
// the lane's runtime mix targets (nil: no targets). Counted as the plan
// stands, so fallbacks chosen earlier in this retry count too.
func (r *waveRun) mixFits() func(string) bool {
	targets := r.l.opt.Lane.RuntimePolicy.RuntimeMixTargets
	if len(targets) == 0 {
		return nil
	}
	counts := map[string]int{}
	for _, other := range r.p.Agents {
		counts[other.Resolved.ID]++
	}
	return func(id string) bool { return executor.MixFits(targets, counts, id) }
}

// resumePhaseFromPlan asks the pure resume planner where to pick up.
func (r *waveRun) resumePhaseFromPlan(reusable []string) string {
	last := lastFailures(r.l.opt.Layout.EventsPath(), r.n)
	plan := retry.Plan(retry.PlanInput{Wave: r.p.Wave, Bindings: r.p.Bindings, Lane: r.l.opt.Lane.Name,
		Summaries: r.summaries(), Failures: last})
	if plan.ResumeFromPhase == "" || plan.ResumeFromPhase == "completed" {
		return roles.PhaseImplementation
	}
	return plan.ResumeFromPhase
}
