package executor

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/internal/mdfence"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// PromptInput is what Prompt needs to write one agent's prompt file.
type PromptInput struct {
	Wave     *wave.Wave
	Agent    *wave.Agent
	Bindings roles.Bindings
	Resolved Resolved
	RepoRoot string
	Lane     string
	Attempt  int
	// CoordCommand is the coordination command line with its fixed flags,
	// e.g. "wave-orchestrator coord post --lane main --wave 0 --agent A1".
	CoordCommand string
	// AskCommand is the command line agents ask a person with, e.g.
	// "wave-orchestrator ask --lane main --wave 0 --agent A1"; empty: no
	// rule about asking (prompt fixtures of older versions).
	AskCommand string
	// Answers is the "Answers from people" block (questions.PromptBlock):
	// what people answered the agent's questions, fenced as untrusted text.
	Answers string
}

// Headings of the prompt sections. The local agent parses the prompt by
// these, so they are part of the prompt format.
const (
	HeadFacts        = "Run facts:"
	HeadDeliverables = "Deliverables required for this agent:"
	HeadComponents   = "Components you own in this wave:"
	HeadExitContract = "Exit contract for this run:"
	HeadEvalTargets  = "Eval targets for this wave:"
	HeadOwnedPaths   = "Files you own:"
	HeadAssigned     = "Assigned implementation prompt:"
)

// Prompt builds the prompt file text for one agent, in the reference's
// section order (docs/wave-files.md, "Prompt"): run facts and role bindings, the
// wave-mode rules with the coordination command, role requirements, exit
// contract, promotions, eval targets, owned components, deliverables,
// owned files, proof artifacts, skills, Context7 scope, and last the
// agent's own prompt in a fence no line of it can close.
func Prompt(in PromptInput) string {
	a, b := in.Agent, in.Bindings
	role := b.RuntimeRole(a)
	implOwning := b.IsImplementationOwning(a)
	var s section

	s.line("Working directory: %s", in.RepoRoot)
	s.blank()
	s.line(HeadFacts)
	s.kv("wave", fmt.Sprint(in.Wave.Number))
	s.kv("lane", in.Lane)
	s.kv("agent", a.ID)
	s.kv("title", a.Title)
	s.kv("role", role)
	s.kv("implementation-owning", yesNo(implOwning))
	s.kv("attempt", fmt.Sprint(in.Attempt))
	s.kv("executor", in.Resolved.ID)
	s.kv("cont-QA agent", b.ContQa)
	s.kv("cont-EVAL agent", b.ContEval)
	s.kv("integration agent", b.Integration)
	s.kv("documentation agent", b.Documentation)
	s.kv("security reviewers", strings.Join(b.SecurityReviewers, ","))
	if p := ReportPath(a, b); p != "" {
		s.kv("report", p)
	}
	s.blank()

	s.line("You are agent %s (%s), working unattended in wave %d of lane %s next to other agents.", oneLine(a.ID), oneLine(a.Title), in.Wave.Number, oneLine(in.Lane))
	s.line("This is a wave run: nobody is watching this session. Coordinate through the wave's coordination log, never by waiting for a reply here.")
	s.blank()
	s.line("Rules for this run:")
	for _, r := range waveRules(in.CoordCommand) {
		s.line("- %s", r)
	}
	if in.AskCommand != "" {
		s.line("- %s", askRule(in.AskCommand))
	}
	s.blank()
	if req := roleRequirements(a, b, role, implOwning); len(req) > 0 {
		s.line("What your role must leave behind:")
		for _, r := range req {
			s.line("- %s", r)
		}
		s.blank()
	}
	writeContract(&s, a, implOwning)
	writeWaveLists(&s, in.Wave, a, role == roles.RoleContEval)
	writeAgentLists(&s, a, implOwning)

	if in.Answers != "" {
		s.raw(strings.TrimRight(in.Answers, "\n"))
		s.blank()
	}
	prompt := strings.TrimRight(a.Prompt, "\n")
	fence := mdfence.Block(prompt)
	s.line(HeadAssigned)
	s.line("%stext", fence)
	s.raw(prompt)
	s.line("%s", fence)
	return s.String()
}

func waveRules(coord string) []string {
	return []string{
		"Read and follow AGENTS.md and CLAUDE.md at the repository root when they exist.",
		"Change only the files you own (listed below). For anything else, ask its owner through the coordination log.",
		fmt.Sprintf("Record progress, claims, evidence, decisions, requests, handoffs and blockers as they happen: `%s --kind <claim|evidence|decision|request|ack|handoff|blocker|clarification-request> --summary \"<one line>\" --detail \"<detail>\"`", coord),
		"Answer requests addressed to you before anything else: acknowledge, resolve, or ask back. An unanswered request blocks the wave.",
		"When a question blocks you, post a clarification-request record, carry on under the most reasonable assumption, and record that assumption as a decision.",
		"When you change an interface, contract or persisted format, name the exact files and keys; write the migration instead of a TODO.",
		"Run the tests, linters and builds of what you touched and fix what your change broke.",
		"Print progress markers on lines of their own: `[wave-phase] coding`, `[wave-phase] validating`, `[wave-phase] deploying`, `[wave-phase] finalizing`.",
		"While deploying, print `[deploy-status] service=<name> state=<deploying|healthy|failed|rolledover> detail=<note>`; for infrastructure work print `[infra-status] kind=<kind> target=<target> state=<state> detail=<note>`.",
		"Markers are read from your output: print each exactly as shown, at the start of its own line, and print the final ones last.",
	}
}

// askRule tells an agent how to ask a person, and what happens next.
func askRule(ask string) string {
	return fmt.Sprintf("When only a person can answer (a product decision, a missing credential, an ambiguous requirement), ask: `%s --question \"<the question>\" --context \"<what you know>\" --blocking`, then finish your run: the launcher waits for the answer and starts you again with it under %q. Add `--wait` to block until the answer instead (it prints the answer; exit 124 on --timeout-seconds). Use `--non-blocking` for a question you can carry on without.", ask, "Answers from people:")
}

// ReportPath is the report file an agent's role must write: the cont-QA,
// cont-EVAL or security report, or the design packet; "" otherwise.
func ReportPath(a *wave.Agent, b roles.Bindings) string {
	switch b.RuntimeRole(a) {
	case roles.RoleContQa:
		return roles.ContQaReportPath(a)
	case roles.RoleContEval:
		return roles.ContEvalReportPath(a)
	case roles.RoleSecurity:
		return roles.SecurityReportPath(a)
	case roles.RoleDesign:
		return roles.DesignPacketPath(a)
	}
	return ""
}

func writeContract(s *section, a *wave.Agent, implOwning bool) {
	if !implOwning || a.ExitContract == nil {
		return
	}
	c := a.ExitContract
	s.line(HeadExitContract)
	s.kv("completion", c.Completion)
	s.kv("durability", c.Durability)
	s.kv("proof", c.Proof)
	s.kv("doc-impact", c.DocImpact)
	s.line("- A result weaker than this contract is a gap: say so with state=gap, never present it as complete.")
	s.blank()
}

func writeWaveLists(s *section, w *wave.Wave, a *wave.Agent, contEval bool) {
	if len(w.ComponentPromotions) > 0 {
		s.line("Component promotions for this wave:")
		for _, p := range w.ComponentPromotions {
			s.kv(p.ComponentID, p.TargetLevel)
		}
		s.blank()
	}
	if len(w.EvalTargets) > 0 {
		s.line(HeadEvalTargets)
		for _, t := range w.EvalTargets {
			v := "selection=" + t.Selection
			if t.BenchmarkFamily != nil {
				v += " family=" + *t.BenchmarkFamily
			}
			if len(t.Benchmarks) > 0 {
				v += " benchmarks=" + strings.Join(t.Benchmarks, ",")
			}
			s.kv(t.ID, v+" objective="+t.Objective+" threshold="+t.Threshold)
		}
		s.blank()
	}
}

func writeAgentLists(s *section, a *wave.Agent, implOwning bool) {
	if implOwning && len(a.Components) > 0 {
		s.line(HeadComponents)
		for _, c := range a.Components {
			if t := a.ComponentTargets[c]; t != nil && *t != "" {
				s.kv(c, *t)
			} else {
				s.line("- %s", oneLine(c))
			}
		}
		s.blank()
	}
	list := func(head string, items []string) {
		if len(items) == 0 {
			return
		}
		s.line("%s", head)
		for _, it := range items {
			s.line("- %s", oneLine(it))
		}
		s.blank()
	}
	list(HeadDeliverables, a.Deliverables)
	list(HeadOwnedPaths, a.OwnedPaths)
	if implOwning && len(a.ProofArtifacts) > 0 {
		s.line("Proof artifacts required for this agent:")
		for _, p := range a.ProofArtifacts {
			l := "- " + oneLine(p.Path)
			if p.Kind != nil {
				l += " kind=" + oneLine(*p.Kind)
			}
			if len(p.RequiredFor) > 0 {
				l += " required-for=" + strings.Join(p.RequiredFor, ",")
			}
			s.line("%s", l)
		}
		s.blank()
	}
	list("Skills active for this run:", a.Skills)
	if c := a.Context7; c != nil && c.Bundle != nil {
		s.line("Context7 scope for this run:")
		if *c.Bundle == "none" {
			s.line("- No Context7 bundle: the repository's docs and source are the authority; look up an external library only when the work truly depends on it.")
		} else {
			s.kv("bundle", *c.Bundle)
			if c.Query != nil {
				s.kv("query", *c.Query)
			}
			s.line("- Context7 answers questions about external libraries only; it never overrides this repository's contracts or ownership.")
		}
		s.blank()
	}
}

// PromptHash is the agent's fingerprint (docs/run-records.md): sha256 hex
// of canonical JSON of what the agent was asked to do and the executor the
// user configured for it. The executor part is the initial executor id and
// model plus the profile, so a retry that switched to a fallback keeps the
// fingerprint (an agent that passed on its fallback is reused on resume),
// while changing the configured executor, model or profile reruns it.
func PromptHash(a *wave.Agent, r Resolved) string {
	type exec struct {
		ID      string  `json:"id"`
		Model   *string `json:"model"`
		Profile *string `json:"profile"`
	}
	v := struct {
		Prompt           string               `json:"prompt"`
		ExitContract     *wave.ExitContract   `json:"exitContract"`
		Deliverables     []string             `json:"deliverables"`
		ProofArtifacts   []wave.ProofArtifact `json:"proofArtifacts"`
		Components       []string             `json:"components"`
		ComponentTargets map[string]*string   `json:"componentTargets"`
		Executor         exec                 `json:"executorResolved"`
	}{a.Prompt, a.ExitContract, a.Deliverables, a.ProofArtifacts, a.Components, a.ComponentTargets,
		exec{cmp(r.InitialExecutorID, r.ID), r.InitialModel, r.Profile}}
	b, err := json.Marshal(v)
	if err != nil {
		// Only unsupported types fail; these are strings, slices and maps.
		panic(fmt.Sprintf("executor: prompt hash: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// section accumulates prompt lines.
type section struct{ strings.Builder }

func (s *section) line(format string, args ...any) {
	fmt.Fprintf(&s.Builder, format, args...)
	s.WriteByte('\n')
}
func (s *section) raw(text string) {
	if text != "" {
		s.WriteString(text)
		s.WriteByte('\n')
	}
}
func (s *section) blank() { s.WriteByte('\n') }

// kv writes a `- key: value` bullet with value forced onto one line, so
// untrusted text cannot forge a heading the local agent would parse.
func (s *section) kv(k, v string) { s.line("- %s: %s", oneLine(k), oneLine(v)) }

func oneLine(v string) string {
	return strings.Join(strings.Fields(v), " ")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
