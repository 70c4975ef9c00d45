package launcher

import (
	"fmt"
	"slices"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// agentPlan is everything decided about one agent before anything runs.
type agentPlan struct {
	Agent    *wave.Agent
	Role     string
	Resolved executor.Resolved
	Prompt   string
	Hash     string
	Closure  bool
	Impl     bool // passes the implementation gate
}

// wavePlan is a wave with its role bindings and per-agent plans.
type wavePlan struct {
	Wave     *wave.Wave
	Bindings roles.Bindings
	Agents   map[string]*agentPlan
	Order    []string // agent ids in file order
}

var levels = []string{"inventoried", "contract-frozen", "repo-landed", "baseline-proved",
	"pilot-live", "qa-proved", "fleet-ready", "cutover-ready", "deprecation-ready"}

// proofCentric: an agent whose components target pilot-live or beyond, or
// that declares a proof artifact required at such a level (or for any).
func proofCentric(a *wave.Agent) bool {
	live := slices.Index(levels, "pilot-live")
	for _, t := range a.ComponentTargets {
		if t != nil && slices.Index(levels, *t) >= live {
			return true
		}
	}
	for _, p := range a.ProofArtifacts {
		if len(p.RequiredFor) == 0 {
			return true
		}
		for _, l := range p.RequiredFor {
			if slices.Index(levels, l) >= live {
				return true
			}
		}
	}
	return false
}

// plan resolves executors, prompts and fingerprints for every agent.
func plan(w *wave.Wave, lane *config.Lane, cliExecutor, coordBase string) (*wavePlan, error) {
	p := &wavePlan{Wave: w, Bindings: roles.Bind(w, lane.Roles), Agents: map[string]*agentPlan{}}
	sessions := map[string]string{}
	for i := range w.Agents {
		a := &w.Agents[i]
		// Session and run directory names keep only [A-Za-z0-9_-]; two ids
		// that map to one name would share (and kill) each other's runs.
		name := lanes.SessionName(w.Number, a.ID)
		if other, ok := sessions[name]; ok {
			return nil, fmt.Errorf("%s: agents %q and %q both map to tmux session %s; rename one (letters, digits, '-' and '_' are kept)", w.File, other, a.ID, name)
		}
		sessions[name] = a.ID
		role := p.Bindings.RuntimeRole(a)
		r, err := executor.Resolve(a, role, lane, cliExecutor, proofCentric(a))
		if err != nil {
			return nil, fmt.Errorf("wave %d: %w", w.Number, err)
		}
		ap := &agentPlan{Agent: a, Role: role, Resolved: r, Closure: p.Bindings.IsClosure(a.ID),
			Impl: p.Bindings.IsImplementationOwning(a)}
		ap.Prompt = executor.Prompt(executor.PromptInput{Wave: w, Agent: a, Bindings: p.Bindings, Resolved: r,
			RepoRoot: lane.RepoRoot, Lane: lane.Name, Attempt: 1,
			CoordCommand: fmt.Sprintf("%s --wave %d --agent %s", coordBase, w.Number, a.ID)})
		ap.Hash = executor.PromptHash(a, r)
		p.Agents[a.ID] = ap
		p.Order = append(p.Order, a.ID)
	}
	return p, nil
}

// implementationAgents are the agents that run in the implementation
// phase: everything that is not a closure role and not a docs-only design
// steward (design stewards without implementation run first).
func (p *wavePlan) implementationAgents() []string {
	var out []string
	for _, id := range p.Order {
		ap := p.Agents[id]
		if ap.Closure {
			continue
		}
		out = append(out, id)
	}
	return out
}

// implOwners are the agents the implementation gate checks.
func (p *wavePlan) implOwners() []string {
	var out []string
	for _, id := range p.Order {
		if p.Agents[id].Impl && !p.Agents[id].Closure {
			out = append(out, id)
		}
	}
	return out
}
