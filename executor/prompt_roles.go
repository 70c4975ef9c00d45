package executor

import (
	"fmt"

	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// roleRequirements are the role-specific obligations of the prompt, each
// naming the exact marker line the gates parse (docs/wave-files.md).
func roleRequirements(a *wave.Agent, b roles.Bindings, role string, implOwning bool) []string {
	report := ReportPath(a, b)
	var out []string
	switch role {
	case roles.RoleContQa:
		out = append(out,
			fmt.Sprintf("You judge whether this wave is done. Write your report to %s with exactly one line `Verdict: PASS`, `Verdict: CONCERNS` or `Verdict: BLOCKED` (the first such line is the one read).", report),
			"Print the matching verdict marker: `[wave-verdict] pass`, `[wave-verdict] concerns` or `[wave-verdict] blocked`.",
			"Print one final gate marker: `[wave-gate] architecture=<pass|concerns|blocked|gap> integration=<…> durability=<…> live=<…> docs=<…> detail=<note>`.",
			"PASS means the next wave can start: implementation-owned docs exist, the shared plan docs reflect what changed, and no drift between architecture and plans is left open.",
			"Only your last report section and last gate marker count; earlier concerns may stay in the report history.",
		)
	case roles.RoleContEval:
		out = append(out,
			"You own the wave's eval loop: read the eval targets below before choosing benchmarks or tuning anything.",
			fmt.Sprintf("Append to your report at %s the benchmarks you chose, the commands you ran, gaps, regressions and your final disposition.", report),
			"Print one final eval marker: `[wave-eval] state=<satisfied|needs-more-work|blocked> targets=<n> benchmarks=<n> regressions=<n> target_ids=<csv> benchmark_ids=<csv> detail=<note>`.",
			"Use `satisfied` only when measured results meet the target, not when the code merely looks better.",
		)
	case roles.RoleIntegration:
		out = append(out,
			"Reconcile the wave's claims, conflicts and blockers before documentation closure.",
			"Print one final integration marker: `[wave-integration] state=<ready-for-doc-closure|needs-more-work> claims=<n> conflicts=<n> blockers=<n> detail=<note>`.",
		)
	case roles.RoleDocumentation:
		out = append(out,
			"Close the shared plan docs against what actually landed in this wave.",
			"Print one final closure marker: `[wave-doc-closure] state=<closed|no-change|delta> paths=<csv> detail=<note>`; a marker printed before implementation finished is provisional.",
		)
	case roles.RoleSecurity:
		out = append(out,
			"You review security and report; route fixes to the owning agent instead of editing product code.",
			fmt.Sprintf("Write your review to %s with these sections in order: Threat Model, Risky Surfaces, Findings, Required Approvals, Requested Fixes, Final Disposition.", report),
			"Print one final security marker: `[wave-security] state=<clear|concerns|blocked> findings=<n> approvals=<n> detail=<note>`. `clear` means no open finding or approval; `blocked` stops the wave before integration.",
		)
	case roles.RoleDesign:
		out = append(out,
			fmt.Sprintf("You are the design steward: write the design packet %s with these sections in order: Problem, Constraints, Decisions, Assumptions, Open Questions, Interface Impacts, Validation Plan, Implementation Handoff.", report),
			"Print one final design marker: `[wave-design] state=<ready-for-implementation|needs-clarification|blocked> decisions=<n> assumptions=<n> open_questions=<n> detail=<note>`.",
			"Say `ready-for-implementation` only when implementers can start without an open design question.",
		)
	}
	if implOwning {
		out = append(out,
			"Print one final proof marker: `[wave-proof] completion=<contract|integrated|authoritative|live> durability=<none|ephemeral|durable> proof=<unit|integration|live> state=<met|gap> detail=<note>` at the levels of your exit contract.",
			"Print one final documentation marker: `[wave-doc-delta] state=<none|owned|shared-plan> paths=<csv> detail=<note>`.",
		)
		if len(a.Components) > 0 {
			out = append(out, "Print one final marker per owned component: `[wave-component] component=<id> level=<level> state=<met|gap> detail=<note>`.")
		}
		out = append(out, "Unfinished work keeps its markers with state=gap; raise open architecture, integration, durability, ops or docs issues through the coordination log, not with `[wave-gap]` lines after your final markers.")
	}
	return out
}
