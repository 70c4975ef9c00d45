package dashboard

import (
	"fmt"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// FindAgent returns agent id and its wave: in wave n, or when n < 0 in
// the latest wave that has the agent.
func FindAgent(l state.Lane, id string, n int) (state.Wave, state.Agent, error) {
	for i := len(l.Waves) - 1; i >= 0; i-- {
		w := l.Waves[i]
		if n >= 0 && w.Wave != n {
			continue
		}
		for _, a := range w.Agents {
			if a.ID == id {
				return w, a, nil
			}
		}
		if n >= 0 {
			return state.Wave{}, state.Agent{}, fmt.Errorf("agent %q is not in wave %d of lane %s", id, n, l.Lane)
		}
	}
	if n >= 0 {
		return state.Wave{}, state.Agent{}, fmt.Errorf("wave %d has not run on lane %s", n, l.Lane)
	}
	return state.Wave{}, state.Agent{}, fmt.Errorf("agent %q has not run on lane %s", id, l.Lane)
}
