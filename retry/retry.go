// Package retry decides what runs again: a wave's resume plan (which
// agents are proven and reusable, which are invalidated, the phase to
// resume from, the closure gaps forwarded), the next attempt of a failed
// wave (Targets and Next: the failed agents, the agents open blockers
// name, the siblings a shared component waits on, closure from where it
// broke), what `resume` reruns, and which agents can be reused — each a
// function of the recorded state it is handed. It also keeps the one
// record it owns, a wave's retry override (waves/<N>/retry-override.json,
// written by `retry apply`), read, written and consumed at the path it
// is given.
package retry

import (
	"fmt"
	"slices"

	"github.com/wave-orchestrator/wave-orchestrator/gate"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// Resume plan reasons.
const (
	ReasonAllGatesPass   = "all-gates-pass"
	ReasonHumanRequest   = "human-request"
	ReasonSiblingPending = "shared-component-sibling-pending"
	ReasonGateFailure    = "gate-failure"
	ReasonTimeout        = "timeout"
)

// PhaseCompleted is ResumeFromPhase when nothing needs to rerun.
const PhaseCompleted = "completed"

// PlanInput is the recorded state of one wave attempt.
type PlanInput struct {
	Wave      *wave.Wave
	Bindings  roles.Bindings
	Lane      string
	Attempt   int
	Summaries map[string]gate.Summary
	Failures  []gate.Failure
	// PromptHashes are the agents' current prompt fingerprints.
	PromptHashes map[string]string
	// OpenBlockers are agent ids named (as author or target) by open
	// blocking coordination records.
	OpenBlockers []string
}

// ClosureGap is a closure stage's proof gap forwarded to later stages.
type ClosureGap struct {
	StageKey string   `json:"stageKey"`
	AgentID  string   `json:"agentId"`
	Attempt  int      `json:"attempt"`
	Detail   string   `json:"detail"`
	Targets  []string `json:"targets"`
	Resolved bool     `json:"resolved"`
}

// ResumePlan is what a resume of a wave re-runs, in the reference npm
// package's shape (docs/submitted-runs.md).
type ResumePlan struct {
	ResumePlanVersion    int          `json:"resumePlanVersion"`
	Wave                 int          `json:"wave"`
	Lane                 string       `json:"lane"`
	Attempt              int          `json:"attempt"`
	Reason               string       `json:"reason"`
	CanResume            bool         `json:"canResume"`
	InvalidatedAgentIDs  []string     `json:"invalidatedAgentIds"`
	ReusableAgentIDs     []string     `json:"reusableAgentIds"`
	ResumeFromPhase      string       `json:"resumeFromPhase"`
	ForwardedClosureGaps []ClosureGap `json:"forwardedClosureGaps"`
	Deterministic        bool         `json:"deterministic"`
}

// Plan builds the resume plan from recorded wave state.
func Plan(in PlanInput) ResumePlan {
	w, b := in.Wave, in.Bindings
	p := ResumePlan{
		ResumePlanVersion:    1,
		Wave:                 w.Number,
		Lane:                 in.Lane,
		Attempt:              in.Attempt,
		Reason:               reason(in.Failures),
		InvalidatedAgentIDs:  []string{},
		ReusableAgentIDs:     []string{},
		ForwardedClosureGaps: []ClosureGap{},
		Deterministic:        true,
	}
	p.CanResume = p.Reason != ReasonAllGatesPass
	failed := map[string]bool{}
	for _, f := range in.Failures {
		if f.AgentID != "" {
			failed[f.AgentID] = true
		}
	}
	for i := range w.Agents {
		a := &w.Agents[i]
		if b.IsClosure(a.ID) {
			if failed[a.ID] {
				p.InvalidatedAgentIDs = append(p.InvalidatedAgentIDs, a.ID)
			}
			continue
		}
		if !failed[a.ID] && proven(in, a) {
			p.ReusableAgentIDs = append(p.ReusableAgentIDs, a.ID)
		} else {
			p.InvalidatedAgentIDs = append(p.InvalidatedAgentIDs, a.ID)
		}
	}
	p.ForwardedClosureGaps = forwardedGaps(in)
	if len(p.ForwardedClosureGaps) > 0 {
		first := roles.PhaseIndex(p.ForwardedClosureGaps[0].StageKey)
		for _, id := range b.Closure {
			if st := b.StageOf(id); hasAgent(w, id) && roles.PhaseIndex(st) >= first && !slices.Contains(p.InvalidatedAgentIDs, id) {
				p.InvalidatedAgentIDs = append(p.InvalidatedAgentIDs, id)
			}
		}
	}
	slices.Sort(p.InvalidatedAgentIDs)
	p.ResumeFromPhase = resumeFrom(in, p)
	return p
}

func reason(fs []gate.Failure) string {
	if len(fs) == 0 {
		return ReasonAllGatesPass
	}
	codes := func(c ...string) bool {
		return slices.ContainsFunc(fs, func(f gate.Failure) bool { return slices.Contains(c, f.StatusCode) })
	}
	switch {
	case codes("human-feedback-open", "clarification-open", "clarification-follow-up-open"):
		return ReasonHumanRequest
	case codes("shared-component-sibling-pending"):
		return ReasonSiblingPending
	case codes("timeout-no-status", "timed_out", "timed-out"):
		return ReasonTimeout
	}
	return ReasonGateFailure
}

// proven: the agent's last run passed its own gate with the current
// prompt.
func proven(in PlanInput, a *wave.Agent) bool {
	s, ok := in.Summaries[a.ID]
	if !ok || s.ExitCode == nil || *s.ExitCode != 0 {
		return false
	}
	if cur, ok := in.PromptHashes[a.ID]; ok && cur != s.PromptHash {
		return false
	}
	if gate.AgentPhase(in.Wave, in.Bindings, a.ID) == roles.PhaseDesign {
		return len(gate.DesignPhase(in.Wave, in.Bindings, in.Summaries, []string{a.ID})) == 0
	}
	return len(gate.Implementation(in.Wave, in.Bindings, in.Summaries, []string{a.ID})) == 0
}

func hasAgent(w *wave.Wave, id string) bool {
	return slices.ContainsFunc(w.Agents, func(a wave.Agent) bool { return a.ID == id })
}

// closureFrom lists the wave's closure agents at or after stage phase,
// in stage order.
func closureFrom(phase string, w *wave.Wave, b roles.Bindings) []string {
	var out []string
	ids := make([]string, 0, len(w.Agents))
	for _, a := range w.Agents {
		ids = append(ids, a.ID)
	}
	for _, st := range b.Stages(ids) {
		if roles.PhaseIndex(st.Phase) >= roles.PhaseIndex(phase) {
			out = append(out, st.Agents...)
		}
	}
	return out
}

func forwardedGaps(in PlanInput) []ClosureGap {
	var gaps []ClosureGap
	for _, f := range in.Failures {
		st := in.Bindings.StageOf(f.AgentID)
		if f.StatusCode != "wave-proof-gap" || st == "" {
			continue
		}
		gaps = append(gaps, ClosureGap{StageKey: st, AgentID: f.AgentID, Attempt: in.Attempt, Detail: f.Detail,
			Targets: closureFrom(st, in.Wave, in.Bindings)})
	}
	slices.SortStableFunc(gaps, func(a, b ClosureGap) int { return roles.PhaseIndex(a.StageKey) - roles.PhaseIndex(b.StageKey) })
	if gaps == nil {
		return []ClosureGap{}
	}
	return gaps
}

// resumeFrom is the earliest phase among the failures: a forwarded gap's
// stage, else the phase of the earliest failing gate.
func resumeFrom(in PlanInput, p ResumePlan) string {
	if len(p.ForwardedClosureGaps) > 0 {
		return p.ForwardedClosureGaps[0].StageKey
	}
	if !p.CanResume {
		return PhaseCompleted
	}
	best := ""
	for _, f := range in.Failures {
		ph := gate.GatePhase(f.Gate)
		if ph == "" && f.AgentID != "" {
			ph = gate.AgentPhase(in.Wave, in.Bindings, f.AgentID)
		}
		if ph == "" {
			ph = roles.PhaseImplementation
		}
		if best == "" || roles.PhaseIndex(ph) < roles.PhaseIndex(best) {
			best = ph
		}
	}
	return best
}

// Targets selects the agents to relaunch on retry, implementation
// agents first and closure agents in stage order. The first non-empty of
// these wins: authors/targets of open blockers, shared-component
// siblings awaited, the resume plan (the resume phase and every later
// stage, or the invalidated agents). Failed agents are always added so a
// failure is never silently dropped.
func Targets(in PlanInput, plan ResumePlan) []string {
	if !plan.CanResume || plan.Reason == ReasonHumanRequest {
		return nil
	}
	w, b := in.Wave, in.Bindings
	var picked []string
	for _, id := range in.OpenBlockers {
		if hasAgent(w, id) {
			picked = append(picked, id)
		}
	}
	if len(picked) == 0 {
		for _, f := range in.Failures {
			if f.StatusCode == "shared-component-sibling-pending" && f.AgentID != "" {
				picked = append(picked, f.AgentID)
			}
		}
	}
	if len(picked) == 0 && plan.ResumeFromPhase != PhaseCompleted {
		if plan.ResumeFromPhase == roles.PhaseImplementation || plan.ResumeFromPhase == roles.PhaseDesign {
			impl, from, err := ForPhase(plan.ResumeFromPhase, w, b, plan.ReusableAgentIDs)
			if err == nil {
				picked = append(impl, closureFrom(from, w, b)...)
			}
		} else {
			picked = closureFrom(plan.ResumeFromPhase, w, b)
		}
	}
	for _, f := range in.Failures {
		if f.AgentID != "" && hasAgent(w, f.AgentID) {
			picked = append(picked, f.AgentID)
		}
	}
	return order(w, b, picked)
}

// Selection is what one attempt of a wave runs: the non-closure agents,
// then closure from stage ClosureFrom on (every later stage runs too).
type Selection struct {
	Agents      []string
	ClosureFrom string
}

// Next is what the attempt after a failed one runs: the agents Targets
// picks. When it picks a non-closure agent, closure runs again from its
// first stage (a new implementation result makes every verdict stale);
// otherwise from the earliest of the picked closure agents' stages and
// the plan's resume phase, so a failing stage no agent holds is not
// skipped. The executor each failed agent runs on next is the caller's
// (it depends on what is on PATH).
func Next(in PlanInput) Selection {
	plan := Plan(in)
	sel := Selection{ClosureFrom: roles.PhaseContEval}
	from := ""
	if slices.Contains(roles.ClosurePhases, plan.ResumeFromPhase) {
		from = plan.ResumeFromPhase
	}
	for _, id := range Targets(in, plan) {
		st := in.Bindings.StageOf(id)
		switch {
		case st == "":
			sel.Agents = append(sel.Agents, id)
		case from == "" || roles.PhaseIndex(st) < roles.PhaseIndex(from):
			from = st
		}
	}
	if len(sel.Agents) == 0 && from != "" {
		sel.ClosureFrom = from
	}
	return sel
}

// order dedupes ids: non-closure agents sorted, then closure agents in
// stage order.
func order(w *wave.Wave, b roles.Bindings, ids []string) []string {
	var impl []string
	for _, id := range ids {
		if !b.IsClosure(id) && !slices.Contains(impl, id) {
			impl = append(impl, id)
		}
	}
	slices.Sort(impl)
	for _, id := range closureFrom(roles.PhaseContEval, w, b) {
		if slices.Contains(ids, id) {
			impl = append(impl, id)
		}
	}
	return impl
}

// ForPhase returns what `resume --phase P` runs: the non-closure agents
// to launch, and the closure stage the sweep starts from (every later
// stage runs too). "implementation" relaunches the implementation agents
// that are not reusable; "design" relaunches the design stewards, then
// those implementation agents.
func ForPhase(phase string, w *wave.Wave, b roles.Bindings, reusable []string) (implementation []string, closureFrom string, err error) {
	if err := roles.ValidPhase(phase); err != nil {
		return nil, "", fmt.Errorf("resume wave %d: %w", w.Number, err)
	}
	if phase != roles.PhaseDesign && phase != roles.PhaseImplementation {
		return nil, phase, nil
	}
	var design, impl []string
	for i := range w.Agents {
		a := &w.Agents[i]
		switch {
		case b.IsClosure(a.ID):
		case gate.AgentPhase(w, b, a.ID) == roles.PhaseDesign:
			design = append(design, a.ID)
		case b.IsImplementationOwning(a) && !slices.Contains(reusable, a.ID):
			impl = append(impl, a.ID)
		}
	}
	slices.Sort(design)
	slices.Sort(impl)
	if phase == roles.PhaseDesign {
		impl = append(design, impl...)
	}
	return impl, roles.PhaseContEval, nil
}

// LastRun is what was recorded about an agent's last run.
type LastRun struct {
	PromptHash string `json:"promptHash"`
	Code       int    `json:"code"`
	GateOK     bool   `json:"gateOk"`
}

// Reusable returns the agents whose last run passed (status 0 and its
// gate ok) with the prompt hash they would run with now. Closure roles
// are never reusable: they judge the current state of the wave.
func Reusable(w *wave.Wave, b roles.Bindings, last map[string]LastRun, current map[string]string) []string {
	out := []string{}
	for _, a := range w.Agents {
		r, ok := last[a.ID]
		if !ok || b.IsClosure(a.ID) || r.Code != 0 || !r.GateOK {
			continue
		}
		if cur := current[a.ID]; cur == "" || cur != r.PromptHash {
			continue
		}
		out = append(out, a.ID)
	}
	slices.Sort(out)
	return out
}
