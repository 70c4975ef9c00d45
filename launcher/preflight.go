package launcher

import (
	"fmt"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/preflight"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// Needs lists what running ws on lane needs from the machine: tmux, and
// the first executor of every agent resolved exactly as a launch resolves
// it (cliExecutor is --executor), with the environment it will add
// (executors.<vendor>.env and the agent's env.NAME) and scrub, so the
// claude-as-root check sees IS_SANDBOX where the agent will. The local
// executor is this binary and needs nothing.
func Needs(ws []*wave.Wave, lane *config.Lane, cliExecutor string) (preflight.Needs, error) {
	n := preflight.Needs{Tmux: true}
	scrub := executor.ScrubList(lane)
	for _, w := range ws {
		b := roles.Bind(w, lane.Roles)
		for i := range w.Agents {
			a := &w.Agents[i]
			r, err := executor.Resolve(a, b.RuntimeRole(a), lane, cliExecutor, proofCentric(a))
			if err != nil {
				return n, fmt.Errorf("wave %d: %w", w.Number, err)
			}
			if e, ok := ExecutorNeed(r, scrub); ok {
				n.Add(e, fmt.Sprintf("wave %d %s", w.Number, a.ID))
			}
		}
	}
	return n, nil
}

// ExecutorNeed is what running r needs from the machine: its command on
// PATH and, for claude in bypassPermissions, a sandbox when root. ok is
// false for an executor that runs in-process (local).
func ExecutorNeed(r executor.Resolved, scrub []string) (preflight.Executor, bool) {
	cmd := executor.Command(r)
	if cmd == "" {
		return preflight.Executor{}, false
	}
	e := preflight.Executor{ID: r.ID, Command: cmd, Env: executor.Env(r), Scrub: scrub, Chosen: chosen(r.SelectedBy)}
	if r.ID == executor.Claude {
		mode := executor.DefaultPermissionMode
		if m := r.Claude.PermissionMode; m != nil {
			mode = *m
		}
		e.ClaudeBypass = mode == executor.DefaultPermissionMode
	}
	return e, true
}

// chosen is preflight's name for what selected an executor.
func chosen(by string) preflight.Chosen {
	switch by {
	case executor.ByAgentID:
		return preflight.ChosenByAgent
	case executor.ByAgentProfile:
		return preflight.ChosenByProfile
	case executor.ByLaneRole:
		return preflight.ChosenByRole
	}
	return preflight.ChosenByDefault
}
