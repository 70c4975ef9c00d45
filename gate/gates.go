package gate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// Gate names, as in the reference's gate snapshot.
const (
	GateDesign         = "designGate"
	GateImplementation = "implementationGate"
	GateComponent      = "componentGate"
	GateContEval       = "contEvalGate"
	GateSecurity       = "securityGate"
	GateIntegration    = "integrationBarrier"
	GateDocumentation  = "documentationGate"
	GateContQa         = "contQaGate"
)

// Failure is one gate failure. StatusCode is what a user acts on:
// "missing-wave-proof", "security-blocked", or an exit code such as "3".
type Failure struct {
	AgentID    string `json:"agentId"`
	Gate       string `json:"gate"`
	StatusCode string `json:"statusCode"`
	Detail     string `json:"detail"`
	LogPath    string `json:"logPath,omitempty"`
}

func (f Failure) String() string {
	return fmt.Sprintf("%s %s %s: %s", f.Gate, f.AgentID, f.StatusCode, f.Detail)
}

var phaseGates = map[string]string{
	roles.PhaseDesign:         GateDesign,
	roles.PhaseImplementation: GateImplementation,
	roles.PhaseContEval:       GateContEval,
	roles.PhaseSecurity:       GateSecurity,
	roles.PhaseIntegrating:    GateIntegration,
	roles.PhaseDocsClosure:    GateDocumentation,
	roles.PhaseContQa:         GateContQa,
}

// PhaseGate returns the gate that decides phase.
func PhaseGate(phase string) string { return phaseGates[phase] }

// GatePhase returns the resume phase that reruns what gate judged.
func GatePhase(gate string) string {
	if gate == GateComponent {
		return roles.PhaseImplementation
	}
	for p, g := range phaseGates {
		if g == gate {
			return p
		}
	}
	return ""
}

// AgentPhase is the phase agent id runs in: its closure stage, design,
// or implementation.
func AgentPhase(w *wave.Wave, b roles.Bindings, id string) string {
	if p := b.StageOf(id); p != "" {
		return p
	}
	if a := findAgent(w, id); a != nil && b.RuntimeRole(a) == roles.RoleDesign && !b.IsImplementationOwning(a) {
		return roles.PhaseDesign
	}
	return roles.PhaseImplementation
}

// RunFailure is the failure of a run that ended without a usable result
// (statusCode "timeout-no-status", "runtime-lost", …); its gate is the
// one of the phase the agent runs in.
func RunFailure(w *wave.Wave, b roles.Bindings, agentID, statusCode, detail, logPath string) Failure {
	return Failure{AgentID: agentID, Gate: PhaseGate(AgentPhase(w, b, agentID)), StatusCode: statusCode, Detail: detail, LogPath: logPath}
}

func findAgent(w *wave.Wave, id string) *wave.Agent {
	if w == nil {
		return nil
	}
	for i := range w.Agents {
		if w.Agents[i].ID == id {
			return &w.Agents[i]
		}
	}
	return nil
}

func withHint(detail string, s Summary) string {
	if s.TerminationHint == "" {
		return detail
	}
	return detail + " Termination: " + s.TerminationHint
}

// runOK checks that the run exited 0; the exit code counts even when
// every marker passes.
func runOK(gate, id string, s Summary) *Failure {
	f := &Failure{AgentID: id, Gate: gate, LogPath: s.LogPath}
	switch {
	case s.ExitCode == nil:
		f.StatusCode, f.Detail = "missing-status", withHint(id+" left no exit status.", s)
	case *s.ExitCode != 0:
		f.StatusCode, f.Detail = strconv.Itoa(*s.ExitCode), withHint(fmt.Sprintf("%s exited with code %d.", id, *s.ExitCode), s)
	default:
		return nil
	}
	return f
}

func ordinal(values []string, v string) int { return slices.Index(values, v) }

func meets(actual, required string, order []string) bool {
	if required == "" {
		return true
	}
	a, r := ordinal(order, actual), ordinal(order, required)
	return a >= 0 && r >= 0 && a >= r
}

func rejectedDetail(id, marker string, s Summary, kind string) string {
	return rejectedDetailFor(id, marker, s, kind, kind)
}

// rejectedDetailFor is rejectedDetail for the marker repairKey key; a
// marker adjudication would accept but for a missing file says so.
func rejectedDetailFor(id, marker string, s Summary, kind, key string) string {
	d := s.Diagnostics[kind]
	msg := fmt.Sprintf("%s printed %d %s marker(s) and none parsed", id, d.RawCount, marker)
	if len(d.RejectedSamples) > 0 {
		msg += fmt.Sprintf(": %s (%q)", d.RejectedSamples[0].Reason, d.RejectedSamples[0].Line)
	}
	if _, ok := s.repairable[key]; ok {
		msg += "; it carries every value and is accepted on adjudication once every declared deliverable and proof artifact is on disk"
	}
	return msg + "."
}

// Implementation checks each listed implementation agent: exit code 0,
// then its exit contract (proof, doc delta, components, deliverables and
// proof artifacts). One failure per failing agent.
func Implementation(w *wave.Wave, b roles.Bindings, s map[string]Summary, agents []string) []Failure {
	var out []Failure
	for _, id := range agents {
		if f := implementationAgent(w, id, s); f != nil {
			out = append(out, *f)
		}
	}
	return out
}

func implementationAgent(w *wave.Wave, id string, s map[string]Summary) *Failure {
	a := findAgent(w, id)
	sum, ok := s[id]
	fail := func(code, detail string) *Failure {
		return &Failure{AgentID: id, Gate: GateImplementation, StatusCode: code, Detail: detail, LogPath: sum.LogPath}
	}
	switch {
	case a == nil:
		return fail("unknown-agent", fmt.Sprintf("agent %s is not declared in wave %d.", id, waveNumber(w)))
	case !ok:
		return fail("missing-summary", "no execution summary for "+id+".")
	}
	if f := runOK(GateImplementation, id, sum); f != nil {
		return f
	}
	return contract(a, sum, fail)
}

func waveNumber(w *wave.Wave) int {
	if w == nil {
		return 0
	}
	return w.Number
}

func contract(a *wave.Agent, s Summary, fail func(code, detail string) *Failure) *Failure {
	c := a.ExitContract
	if c == nil {
		return nil
	}
	id := a.ID
	p := s.Proof
	switch {
	case p == nil && s.Rejected(KindProof):
		return fail("invalid-wave-proof-format", rejectedDetail(id, "[wave-proof]", s, KindProof))
	case p == nil:
		return fail("missing-wave-proof", withHint("Missing [wave-proof] marker for "+id+".", s))
	case p.State != "met":
		return fail("wave-proof-gap", fmt.Sprintf("%s reported a proof gap%s", id, colonDetail(p.Detail)))
	case !meets(p.Completion, c.Completion, CompletionLevels):
		return fail("completion-gap", fmt.Sprintf("%s only proved %s; exit contract requires %s.", id, p.Completion, c.Completion))
	case !meets(p.Durability, c.Durability, DurabilityLevels):
		return fail("durability-gap", fmt.Sprintf("%s only proved %s durability; exit contract requires %s.", id, p.Durability, c.Durability))
	case !meets(p.Proof, c.Proof, ProofLevels):
		return fail("proof-level-gap", fmt.Sprintf("%s only proved %s; exit contract requires %s.", id, p.Proof, c.Proof))
	case s.DocDelta == nil && s.Rejected(KindDocDelta):
		return fail("invalid-doc-delta-format", rejectedDetail(id, "[wave-doc-delta]", s, KindDocDelta))
	case s.DocDelta == nil:
		return fail("missing-doc-delta", withHint("Missing [wave-doc-delta] marker for "+id+".", s))
	case !meets(s.DocDelta.State, c.DocImpact, DocImpactLevels):
		return fail("doc-impact-gap", fmt.Sprintf("%s only reported %s doc impact; exit contract requires %s.", id, s.DocDelta.State, c.DocImpact))
	}
	for _, comp := range a.Components {
		m, ok := s.Components[comp]
		if !ok {
			if slices.Contains(s.Diagnostics[KindComponent].SeenComponentIDs, comp) {
				return fail("invalid-wave-component-format", rejectedDetailFor(id, "[wave-component]", s, KindComponent, KindComponent+":"+comp))
			}
			return fail("missing-wave-component", fmt.Sprintf("Missing [wave-component] marker for %s component %s.", id, comp))
		}
		if want := target(a, comp); want != "" && m.Level != want {
			return fail("component-level-mismatch", fmt.Sprintf("%s reported %s at %s; wave requires %s.", id, comp, m.Level, want))
		}
		if m.State != "met" {
			return fail("component-gap", fmt.Sprintf("%s reported a gap for component %s%s", id, comp, colonDetail(m.Detail)))
		}
	}
	for _, d := range s.Deliverables {
		if !d.Exists {
			return fail("missing-deliverable", fmt.Sprintf("%s did not land deliverable %s.", id, d.Path))
		}
	}
	for _, pa := range a.ProofArtifacts {
		if !artifactRequired(a, pa) {
			continue
		}
		i := slices.IndexFunc(s.ProofArtifacts, func(c FileCheck) bool { return c.Path == pa.Path })
		if i < 0 || !s.ProofArtifacts[i].Exists {
			return fail("missing-proof-artifact", fmt.Sprintf("%s did not land proof artifact %s.", id, pa.Path))
		}
	}
	return nil
}

func colonDetail(d string) string {
	if d == "" {
		return "."
	}
	return ": " + d
}

func target(a *wave.Agent, comp string) string {
	if t := a.ComponentTargets[comp]; t != nil {
		return strings.ToLower(*t)
	}
	return ""
}

// artifactRequired: an artifact with no required-for levels is always
// required; otherwise it is required when the agent's highest component
// target reaches one of them.
func artifactRequired(a *wave.Agent, pa wave.ProofArtifact) bool {
	if len(pa.RequiredFor) == 0 {
		return true
	}
	highest := -1
	for _, c := range a.Components {
		highest = max(highest, ordinal(ComponentLevels, target(a, c)))
	}
	if highest < 0 {
		return true
	}
	for _, l := range pa.RequiredFor {
		if r := ordinal(ComponentLevels, strings.ToLower(l)); r >= 0 && highest >= r {
			return true
		}
	}
	return false
}

// Components is the component promotion gate; it applies only from the
// wave set by validation.requireComponentPromotionsFromWave.
func Components(w *wave.Wave, b roles.Bindings, s map[string]Summary, v config.Validation) []Failure {
	if v.RequireComponentPromotionsFromWave == nil || w.Number < *v.RequireComponentPromotionsFromWave {
		return nil
	}
	var impl []*wave.Agent
	for i := range w.Agents {
		if b.IsImplementationOwning(&w.Agents[i]) {
			impl = append(impl, &w.Agents[i])
		}
	}
	if len(w.ComponentPromotions) == 0 {
		if len(impl) == 0 {
			return nil
		}
		return []Failure{{Gate: GateComponent, StatusCode: "missing-component-promotions",
			Detail: fmt.Sprintf("wave %d declares no component promotions (%s).", w.Number, w.File)}}
	}
	var out []Failure
	for _, p := range w.ComponentPromotions {
		var satisfied, waiting []string
		for _, a := range impl {
			if !slices.Contains(a.Components, p.ComponentID) {
				continue
			}
			sum, ok := s[a.ID]
			m, have := sum.Components[p.ComponentID]
			want := target(a, p.ComponentID)
			if ok && implementationAgent(w, a.ID, s) == nil && have && m.State == "met" && (want == "" || m.Level == want) {
				satisfied = append(satisfied, a.ID)
			} else {
				waiting = append(waiting, a.ID)
			}
		}
		switch {
		case len(satisfied) > 0 && len(waiting) > 0:
			for _, id := range waiting {
				out = append(out, Failure{AgentID: id, Gate: GateComponent, StatusCode: "shared-component-sibling-pending",
					Detail:  fmt.Sprintf("%s landed %s; shared component closure still waits on %s.", strings.Join(satisfied, ", "), p.ComponentID, strings.Join(waiting, "/")),
					LogPath: s[id].LogPath})
			}
		case len(satisfied) == 0:
			f := Failure{Gate: GateComponent, StatusCode: "component-promotion-gap",
				Detail: fmt.Sprintf("wave %d does not prove component %s at %s.", w.Number, p.ComponentID, p.TargetLevel)}
			if len(waiting) > 0 {
				f.AgentID, f.LogPath = waiting[0], s[waiting[0]].LogPath
			} else {
				f.Detail = fmt.Sprintf("no implementation agent of wave %d owns promoted component %s.", w.Number, p.ComponentID)
			}
			out = append(out, f)
		}
	}
	return out
}

// DesignPhase checks every design steward's [wave-design] marker and packet.
func DesignPhase(w *wave.Wave, b roles.Bindings, s map[string]Summary, agents []string) []Failure {
	var out []Failure
	for _, id := range agents {
		sum, ok := s[id]
		fail := func(code, detail string) {
			out = append(out, Failure{AgentID: id, Gate: GateDesign, StatusCode: code, Detail: detail, LogPath: sum.LogPath})
		}
		if !ok {
			fail("missing-summary", "no execution summary for "+id+".")
			continue
		}
		if f := runOK(GateDesign, id, sum); f != nil {
			out = append(out, *f)
			continue
		}
		switch d := sum.Design; {
		case d == nil:
			fail("missing-wave-design", withHint("Missing [wave-design] marker for "+id+".", sum))
		case sum.ReportPath == "" || !sum.ReportExists:
			fail("missing-design-packet", fmt.Sprintf("design packet %q of %s is missing.", sum.ReportPath, id))
		case d.State == "blocked":
			fail("design-blocked", id+" reported the design blocked"+colonDetail(d.Detail))
		case d.State == "needs-clarification":
			fail("design-needs-clarification", id+" needs clarification"+colonDetail(d.Detail))
		}
	}
	return out
}

// ContQaOnly reports whether every failure is a cont-QA failure (the
// launcher then exits 42).
func ContQaOnly(f []Failure) bool {
	if len(f) == 0 {
		return false
	}
	for _, x := range f {
		if x.Gate != GateContQa {
			return false
		}
	}
	return true
}
