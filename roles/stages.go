package roles

import (
	"fmt"
	"slices"
)

// Phase names accepted by `resume --phase`, in execution order.
const (
	PhaseDesign         = "design"
	PhaseImplementation = "implementation"
	PhaseContEval       = "cont-eval"
	PhaseSecurity       = "security-review"
	PhaseIntegrating    = "integrating"
	PhaseDocsClosure    = "docs-closure"
	PhaseContQa         = "cont-qa-closure"
)

// Phases lists every resume phase in order.
var Phases = []string{PhaseDesign, PhaseImplementation, PhaseContEval, PhaseSecurity, PhaseIntegrating, PhaseDocsClosure, PhaseContQa}

// ClosurePhases lists the closure stages in the order they run.
var ClosurePhases = []string{PhaseContEval, PhaseSecurity, PhaseIntegrating, PhaseDocsClosure, PhaseContQa}

// ValidPhase reports whether p is a phase name.
func ValidPhase(p string) error {
	if slices.Contains(Phases, p) {
		return nil
	}
	return fmt.Errorf("unknown phase %q: want one of %v", p, Phases)
}

// PhaseIndex orders phases; -1 for unknown.
func PhaseIndex(p string) int { return slices.Index(Phases, p) }

// Stage is one closure stage and the agents that hold it in a wave.
type Stage struct {
	Phase  string   `json:"phase"`
	Agents []string `json:"agents"`
}

// Stages returns the closure stages in order with their agents present
// in the wave (agentIDs). A stage may have no agents.
func (b Bindings) Stages(agentIDs []string) []Stage {
	has := func(id string) bool { return id != "" && slices.Contains(agentIDs, id) }
	var out []Stage
	for _, p := range ClosurePhases {
		s := Stage{Phase: p}
		switch p {
		case PhaseContEval:
			if has(b.ContEval) {
				s.Agents = []string{b.ContEval}
			}
		case PhaseSecurity:
			for _, id := range b.SecurityReviewers {
				if has(id) {
					s.Agents = append(s.Agents, id)
				}
			}
		case PhaseIntegrating:
			if has(b.Integration) {
				s.Agents = []string{b.Integration}
			}
		case PhaseDocsClosure:
			if has(b.Documentation) {
				s.Agents = []string{b.Documentation}
			}
		case PhaseContQa:
			if has(b.ContQa) {
				s.Agents = []string{b.ContQa}
			}
		}
		out = append(out, s)
	}
	return out
}

// StageOf returns the closure phase agent id holds, or "".
func (b Bindings) StageOf(id string) string {
	switch {
	case id == b.ContEval:
		return PhaseContEval
	case slices.Contains(b.SecurityReviewers, id):
		return PhaseSecurity
	case id == b.Integration:
		return PhaseIntegrating
	case id == b.Documentation:
		return PhaseDocsClosure
	case id == b.ContQa:
		return PhaseContQa
	}
	return ""
}
