package retry

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// ResumeRequest is what `resume` was asked to rerun.
type ResumeRequest struct {
	// Phase is --phase; "" follows PlanPhase, the resume plan's phase.
	Phase     string
	PlanPhase string
	// Agents (--agent) rerun even when their last run is proven.
	Agents []string
	// RerunProven (--rerun-proven) reuses no proven agent.
	RerunProven bool
}

// ErrRerunProvenClosure: --rerun-proven names implementation agents, and
// a closure --phase reruns none of them.
var ErrRerunProvenClosure = errors.New("--rerun-proven reruns implementation agents, which a closure --phase does not run; use --phase implementation or --agent ID")

// Resume returns what the first attempt of a resume runs: the non-closure
// agents to launch and the closure stage the sweep starts from (every
// later stage runs too).
//
// A phase named with --phase means what it says: "implementation" reruns
// every implementation agent, proven or not; "design" reruns the design
// stewards and the implementation agents that are not proven. A phase
// from the resume plan reruns only what is not proven. --rerun-proven
// reuses nothing (with a plan that points at a closure stage, that means
// implementation). --agent adds agents to any of these: an
// implementation agent makes closure run from its first stage, a closure
// agent from its own stage at the latest.
func Resume(req ResumeRequest, w *wave.Wave, b roles.Bindings, reusable []string) (implementation []string, closureFrom string, err error) {
	phase, explicit := req.Phase, req.Phase != ""
	closurePhase := func(p string) bool { return slices.Contains(roles.ClosurePhases, p) }
	if !explicit {
		phase = req.PlanPhase
		if phase == "" || phase == PhaseCompleted || req.RerunProven && closurePhase(phase) {
			phase = roles.PhaseImplementation
		}
	}
	if explicit && req.RerunProven && closurePhase(phase) {
		return nil, "", fmt.Errorf("resume wave %d --phase %s: %w", w.Number, phase, ErrRerunProvenClosure)
	}
	keep := reusable
	if req.RerunProven || explicit && phase == roles.PhaseImplementation {
		keep = nil
	}
	impl, from, err := ForPhase(phase, w, b, keep)
	if err != nil {
		return nil, "", err
	}
	for _, id := range req.Agents {
		if !hasAgent(w, id) {
			return nil, "", fmt.Errorf("resume wave %d: --agent %s: no such agent; the wave's agents are %s", w.Number, id, strings.Join(agentIDs(w), ", "))
		}
		if st := b.StageOf(id); st != "" {
			if roles.PhaseIndex(st) < roles.PhaseIndex(from) {
				from = st
			}
			continue
		}
		if !slices.Contains(impl, id) {
			impl = append(impl, id)
		}
		from = roles.PhaseContEval
	}
	return impl, from, nil
}

func agentIDs(w *wave.Wave) []string {
	out := make([]string, 0, len(w.Agents))
	for _, a := range w.Agents {
		out = append(out, a.ID)
	}
	return out
}
