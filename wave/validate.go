package wave

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/config"
)

// Validate applies the wave rules (docs/wave-files.md) under
// the lane's config and returns every problem of every wave in one *Error.
// Rules tied to the reference's scaffold (prompt references, component
// matrix, Context7, exit contracts, stewards) apply only when configured.
func Validate(waves []*Wave, lane *config.Lane, opts Options) error {
	if lane == nil {
		lane = &config.Lane{}
	}
	var all []Problem
	for _, w := range waves {
		v := &validator{w: w, lane: lane, opts: opts, r: RolesWithDefaults(lane.Roles), ps: &problems{file: w.File}}
		v.run()
		all = append(all, v.ps.list...)
	}
	if len(all) > 0 {
		return &Error{Problems: all}
	}
	return nil
}

type validator struct {
	w    *Wave
	lane *config.Lane
	opts Options
	r    config.Roles
	ps   *problems
}

// active reports whether a threshold rule applies to this wave.
func (v *validator) active(t *int) bool { return t != nil && v.w.Number >= *t }

// threshold names the config key behind a threshold rule and how to turn
// it off, so a problem it raises says which setting asked for it.
func threshold(key string, t *int) string {
	return fmt.Sprintf(" (validation.%s is %d; set it to null in wave.config.yaml to turn this rule off)", key, *t)
}

// topLine is the line of a top-level section, or 1.
func (v *validator) topLine(h string) int {
	if l := v.w.lines[h]; l > 0 {
		return l
	}
	return 1
}

func subLine(a *Agent, h string) int {
	if l := a.lines[h]; l > 0 {
		return l
	}
	return a.Line
}

func (v *validator) run() {
	w, val := v.w, v.lane.Validation
	if len(w.Agents) == 0 {
		v.ps.add(1, "", "no-agents", "wave %d declares no \"## Agent <ID>: <title>\" section", w.Number)
	}
	v.components()
	for i := range w.Agents {
		v.agent(&w.Agents[i])
	}
	if refs := val.RequiredPromptReferences; len(refs) > 0 {
		for i := range w.Agents {
			a := &w.Agents[i]
			for _, ref := range refs {
				if !strings.Contains(a.Prompt, ref) {
					v.ps.add(subLine(a, "Prompt"), a.ID, "required-prompt-reference", "prompt must mention %s (validation.requiredPromptReferences)", ref)
				}
			}
		}
	}
	v.closureRoles()
	v.context7Bundles()
	if v.active(val.RequireContext7DeclarationsFromWave) && w.Context7Defaults == nil {
		v.ps.add(1, "", "missing-context7-defaults", "waves %d and later need a \"## Context7 defaults\" section%s",
			*val.RequireContext7DeclarationsFromWave, threshold("requireContext7DeclarationsFromWave", val.RequireContext7DeclarationsFromWave))
	}
	v.runtimeMix()
}

func (v *validator) agent(a *Agent) {
	r, val, id := v.r, v.lane.Validation, a.ID
	if len(a.OwnedPaths) == 0 {
		v.ps.add(subLine(a, "Prompt"), id, "no-owned-paths", "the prompt declares no \"File ownership\" paths")
		return
	}
	for _, p := range a.OwnedPaths {
		if !RepoContained(p) {
			v.ps.add(subLine(a, "Prompt"), id, "path-outside-repo", "owned path %q must stay inside the repository", p)
		}
	}
	for _, p := range a.RolePromptPaths {
		if !AllowedRolePromptPath(p, r.RolePromptDir) {
			v.ps.add(subLine(a, "Role prompts"), id, "role-prompt-path", "role prompt %s must be a .md file under %s/", p, r.RolePromptDir)
		}
	}
	if e := a.Executor; e != nil && e.ID != nil {
		others := map[string]bool{"codex": e.Codex != nil, "claude": e.Claude != nil, "opencode": e.Opencode != nil, "local": e.Local != nil, "shell": e.Shell != nil}
		var wrong []string
		for _, k := range ExecutorIDs {
			if k != *e.ID && others[k] {
				wrong = append(wrong, k+".*")
			}
		}
		if len(wrong) > 0 {
			v.ps.add(subLine(a, "Executor"), id, "executor-vendor-mismatch", "executor id %s cannot take %s settings", *e.ID, strings.Join(wrong, ", "))
		}
	}
	if v.active(val.RequireContext7DeclarationsFromWave) && a.Context7 == nil {
		v.ps.add(a.Line, id, "missing-context7", "waves %d and later need a \"### Context7\" section%s",
			*val.RequireContext7DeclarationsFromWave, threshold("requireContext7DeclarationsFromWave", val.RequireContext7DeclarationsFromWave))
	}
	closureLike := isClosureLike(a, r)
	if closureLike {
		if len(a.Components) > 0 {
			v.ps.add(subLine(a, "Components"), id, "closure-agent-components", "closure, report-only, docs-only design and security agents must not declare \"### Components\"")
		}
	} else if v.active(val.RequireAgentComponentsFromWave) && len(a.Components) == 0 {
		v.ps.add(a.Line, id, "missing-components", "waves %d and later need a \"### Components\" section%s",
			*val.RequireAgentComponentsFromWave, threshold("requireAgentComponentsFromWave", val.RequireAgentComponentsFromWave))
	}
	if !closureLike && v.active(val.RequireExitContractsFromWave) {
		if a.ExitContract == nil {
			v.ps.add(a.Line, id, "missing-exit-contract", "waves %d and later need a \"### Exit contract\" section%s",
				*val.RequireExitContractsFromWave, threshold("requireExitContractsFromWave", val.RequireExitContractsFromWave))
		} else if missing := exitContractGaps(a.ExitContract); len(missing) > 0 {
			v.ps.add(subLine(a, "Exit contract"), id, "bad-exit-contract", "exit contract needs a valid %s%s",
				strings.Join(missing, ", "), threshold("requireExitContractsFromWave", val.RequireExitContractsFromWave))
		}
	}
	if proofCentric(a) {
		if !closureLike && len(a.ProofArtifacts) == 0 {
			v.ps.add(a.Line, id, "missing-proof-artifacts", "an agent targeting pilot-live or above needs a \"### Proof artifacts\" section")
		}
		if v.executorID(a) == "local" {
			v.ps.add(subLine(a, "Executor"), id, "proof-centric-local", "an agent carrying proof-centric artifacts must not use executor local")
		}
	}
}

// exitContractGaps lists the fields that are missing or not one of their
// levels, as the reference's exit contract shape check does.
func exitContractGaps(ec *ExitContract) []string {
	var out []string
	for _, f := range []struct {
		k, v string
		enum []string
	}{
		{"completion", ec.Completion, CompletionLevels},
		{"durability", ec.Durability, DurabilityLevels},
		{"proof", ec.Proof, ProofLevels},
		{"doc-impact", ec.DocImpact, DocImpactLevels},
	} {
		if !slices.Contains(f.enum, f.v) {
			out = append(out, fmt.Sprintf("%s (one of %s)", f.k, strings.Join(f.enum, ", ")))
		}
	}
	return out
}

// proofCentric: a component target at pilot-live or above, or a proof
// artifact required for no level or for pilot-live or above.
func proofCentric(a *Agent) bool {
	pilot := maturity("pilot-live")
	for _, c := range a.Components {
		if t := a.ComponentTargets[c]; t != nil && maturity(*t) >= pilot {
			return true
		}
	}
	for _, p := range a.ProofArtifacts {
		if len(p.RequiredFor) == 0 {
			return true
		}
		for _, l := range p.RequiredFor {
			if maturity(l) >= pilot {
				return true
			}
		}
	}
	return false
}

// executorID is the agent's resolved executor id as far as validation can
// tell, in the reference's order: agent id, profile id, the lane's default
// for the agent's runtime role, the lane default.
func (v *validator) executorID(a *Agent) string {
	if v.opts.ExecutorID != nil {
		return v.opts.ExecutorID(v.w, a)
	}
	if e := a.Executor; e != nil {
		if e.ID != nil {
			return *e.ID
		}
		if e.Profile != nil {
			if p, ok := v.lane.Executors.Profiles[*e.Profile]; ok && p.ID != "" {
				return p.ID
			}
		}
	}
	if id := v.lane.RuntimePolicy.DefaultExecutorByRole[runtimeRole(a, v.r)]; id != "" {
		return id
	}
	if v.lane.Executors.Default != "" {
		return v.lane.Executors.Default
	}
	return "codex"
}

func (v *validator) runtimeMix() {
	targets := v.lane.RuntimePolicy.RuntimeMixTargets
	if len(targets) == 0 {
		return
	}
	counts := map[string]int{}
	for i := range v.w.Agents {
		counts[v.executorID(&v.w.Agents[i])]++
	}
	var over []string
	for id, n := range counts {
		if t, ok := targets[id]; ok && n > t {
			over = append(over, fmt.Sprintf("%s=%d exceeds target %d", id, n, t))
		}
	}
	sort.Strings(over)
	if len(over) > 0 {
		v.ps.add(1, "", "runtime-mix", "wave %d exceeds the lane's runtime mix targets (%s)", v.w.Number, strings.Join(over, "; "))
	}
}

func (v *validator) closureRoles() {
	w, r, val := v.w, v.r, v.lane.Validation
	if qa := w.agent(r.ContQaAgentID); qa == nil {
		v.ps.add(1, "", "missing-cont-qa", "wave must include agent %s (cont-QA closure role)", r.ContQaAgentID)
	} else {
		if !slices.Contains(qa.RolePromptPaths, r.ContQaRolePromptPath) {
			v.ps.add(subLine(qa, "Role prompts"), qa.ID, "cont-qa-role-prompt", "cont-QA agent must import %s", r.ContQaRolePromptPath)
		}
		if w.ContQaReportPath == nil && len(qa.OwnedPaths) > 0 {
			v.ps.add(qa.Line, qa.ID, "cont-qa-report-path", "cont-QA agent must own a report path")
		}
	}
	if ev := w.agent(r.ContEvalAgentID); ev != nil {
		if !slices.Contains(ev.RolePromptPaths, r.ContEvalRolePromptPath) {
			v.ps.add(subLine(ev, "Role prompts"), ev.ID, "cont-eval-role-prompt", "cont-EVAL agent must import %s", r.ContEvalRolePromptPath)
		}
		if len(w.EvalTargets) == 0 {
			v.ps.add(ev.Line, ev.ID, "missing-eval-targets", "a wave with cont-EVAL agent %s needs a \"## Eval targets\" section", ev.ID)
		} else {
			v.evalTargetsAgainstCatalog()
		}
	} else if len(w.EvalTargets) > 0 {
		v.ps.add(v.topLine("Eval targets"), "", "eval-targets-without-cont-eval", "\"## Eval targets\" needs cont-EVAL agent %s in the wave", r.ContEvalAgentID)
	}
	for i := range w.Agents {
		a := &w.Agents[i]
		if isSecurityReviewer(a, r) {
			if !slices.Contains(a.RolePromptPaths, r.SecurityRolePromptPath) {
				v.ps.add(subLine(a, "Role prompts"), a.ID, "security-role-prompt", "security reviewer must import %s", r.SecurityRolePromptPath)
			}
			if firstOwned(a, securityReportRe) == "" && len(a.OwnedPaths) > 0 {
				v.ps.add(subLine(a, "Prompt"), a.ID, "security-report-path", "security reviewer must own a report path mentioning \"security\" (.md or .txt)")
			}
		}
		if isDesign(a, r) {
			if !slices.Contains(a.RolePromptPaths, r.DesignRolePromptPath) {
				v.ps.add(subLine(a, "Role prompts"), a.ID, "design-role-prompt", "design agent must import %s", r.DesignRolePromptPath)
			}
			if firstOwned(a, designReportRe) == "" && len(a.OwnedPaths) > 0 {
				v.ps.add(subLine(a, "Prompt"), a.ID, "design-packet-path", "design agent must own a design/handoff/decision-lineage packet path (.md or .txt)")
			}
		}
		var held []string
		if a.ID == r.ContEvalAgentID {
			held = append(held, "cont-EVAL")
		}
		if isSecurityReviewer(a, r) {
			held = append(held, "security review")
		}
		if a.ID == r.IntegrationAgentID {
			held = append(held, "integration steward")
		}
		if a.ID == r.DocumentationAgentID {
			held = append(held, "documentation steward")
		}
		if a.ID == r.ContQaAgentID {
			held = append(held, "cont-QA")
		}
		if len(held) > 1 {
			v.ps.add(a.Line, a.ID, "closure-role-overlap", "agent holds more than one closure role (%s)", strings.Join(held, ", "))
		}
	}
	if v.active(val.RequireIntegrationStewardFromWave) {
		if n := v.importers(r.IntegrationRolePromptPath); len(n) != 1 {
			v.ps.add(1, "", "integration-steward", "wave must have exactly one agent importing %s (found %d)%s",
				r.IntegrationRolePromptPath, len(n), threshold("requireIntegrationStewardFromWave", val.RequireIntegrationStewardFromWave))
		}
	}
	if v.active(val.RequireDocumentationStewardFromWave) {
		stewards := v.importers(r.DocumentationRolePromptPath)
		if len(stewards) != 1 {
			v.ps.add(1, "", "documentation-steward", "wave must have exactly one agent importing %s (found %d)%s",
				r.DocumentationRolePromptPath, len(stewards), threshold("requireDocumentationStewardFromWave", val.RequireDocumentationStewardFromWave))
			return
		}
		s := stewards[0]
		req := slices.Clone(v.lane.SharedPlanDocs)
		if v.active(val.RequireComponentPromotionsFromWave) {
			req = append(req, v.lane.MatrixDocPath, v.lane.MatrixJSONPath)
		}
		req = slices.DeleteFunc(slices.Compact(req), func(p string) bool { return p == "" })
		var missing []string
		for _, p := range req {
			if !slices.Contains(s.OwnedPaths, p) {
				missing = append(missing, p)
			}
		}
		if len(missing) > 0 {
			v.ps.add(subLine(s, "Prompt"), s.ID, "documentation-steward-paths", "documentation steward must own %s", strings.Join(missing, ", "))
		}
		for i := range w.Agents {
			a := &w.Agents[i]
			if a.ID != s.ID && slices.ContainsFunc(a.OwnedPaths, func(p string) bool { return slices.Contains(req, p) }) {
				v.ps.add(subLine(a, "Prompt"), a.ID, "shared-plan-doc-owner", "shared plan docs may be owned only by documentation steward %s", s.ID)
			}
		}
	}
}

func (v *validator) importers(rolePrompt string) []*Agent {
	var out []*Agent
	for i := range v.w.Agents {
		if slices.Contains(v.w.Agents[i].RolePromptPaths, rolePrompt) {
			out = append(out, &v.w.Agents[i])
		}
	}
	return out
}
