package gate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// Gate and closure modes.
const (
	ModeBootstrap = "bootstrap"
	ModeStandard  = "standard"
	ModeStrict    = "strict"
)

// Mode resolves a wave's mode from thresholds. Unset thresholds (all
// zero) mean strict, as in the reference when none are configured.
func Mode(waveNumber int, m config.Modes) string {
	if m == (config.Modes{}) {
		return ModeStrict
	}
	standard := max(m.Standard, m.Bootstrap)
	strict := max(m.Strict, standard)
	switch {
	case waveNumber >= strict:
		return ModeStrict
	case waveNumber >= standard:
		return ModeStandard
	}
	return ModeBootstrap
}

func validation(lane *config.Lane) config.Validation {
	if lane == nil {
		return config.Validation{}
	}
	return lane.Validation
}

func waveAgentIDs(w *wave.Wave) []string {
	ids := make([]string, 0, len(w.Agents))
	for _, a := range w.Agents {
		ids = append(ids, a.ID)
	}
	return ids
}

// StageAgents returns the wave's agents holding closure stage phase.
func StageAgents(phase string, w *wave.Wave, b roles.Bindings) []string {
	for _, st := range b.Stages(waveAgentIDs(w)) {
		if st.Phase == phase {
			return st.Agents
		}
	}
	return nil
}

// StagePlan decides whether closure stage phase runs, and, when it has no
// agent, whether that absence fails the wave (missing-closure-run):
//   - cont-QA is skipped in bootstrap closure mode when no earlier semantic
//     stage ran and autoClosure.allowSkipContQaInBootstrap is set;
//   - integration and documentation without an agent are auto-closed when
//     autoClosure allows it;
//   - a stage with no agent is skipped in bootstrap gate mode (except
//     cont-QA), and fails when required: cont-QA always, integration and
//     documentation from their requireXStewardFromWave thresholds.
func StagePlan(phase string, w *wave.Wave, b roles.Bindings, lane *config.Lane, ranEarlierSemanticStage bool) (run bool, failIfMissing bool) {
	v := validation(lane)
	if phase == roles.PhaseContQa && !ranEarlierSemanticStage && v.AutoClosure.AllowSkipContQaInBootstrap &&
		Mode(w.Number, v.ClosureModeThresholds) == ModeBootstrap {
		return false, false
	}
	if len(StageAgents(phase, w, b)) > 0 {
		return true, false
	}
	switch {
	case phase == roles.PhaseIntegrating && v.AutoClosure.AllowInferredIntegration,
		phase == roles.PhaseDocsClosure && v.AutoClosure.AllowAutoDocNoChange:
		return false, false
	case phase != roles.PhaseContQa && Mode(w.Number, v.GateModeThresholds) == ModeBootstrap:
		return false, false
	}
	switch phase {
	case roles.PhaseContQa:
		return false, true
	case roles.PhaseIntegrating:
		return false, v.RequireIntegrationStewardFromWave != nil && w.Number >= *v.RequireIntegrationStewardFromWave
	case roles.PhaseDocsClosure:
		return false, v.RequireDocumentationStewardFromWave != nil && w.Number >= *v.RequireDocumentationStewardFromWave
	}
	return false, false
}

// MissingClosureRun is the failure of a required stage that has no agent.
func MissingClosureRun(phase string, w *wave.Wave, b roles.Bindings) Failure {
	id := ""
	switch phase {
	case roles.PhaseContQa:
		id = b.ContQa
	case roles.PhaseIntegrating:
		id = b.Integration
	case roles.PhaseDocsClosure:
		id = b.Documentation
	case roles.PhaseContEval:
		id = b.ContEval
	}
	return Failure{AgentID: id, Gate: PhaseGate(phase), StatusCode: "missing-closure-run",
		Detail: fmt.Sprintf("closure stage %s is required for wave %d but %s declares no agent %s for it.", phase, w.Number, w.File, id)}
}

// Stage evaluates closure stage phase over the summaries of its agents.
func Stage(phase string, w *wave.Wave, b roles.Bindings, s map[string]Summary, lane *config.Lane) []Failure {
	gate := PhaseGate(phase)
	agents := StageAgents(phase, w, b)
	if len(agents) == 0 {
		if run, required := StagePlan(phase, w, b, lane, true); !run && required {
			return []Failure{MissingClosureRun(phase, w, b)}
		}
		return nil
	}
	var out []Failure
	for _, id := range agents {
		sum, ok := s[id]
		if !ok {
			out = append(out, Failure{AgentID: id, Gate: gate, StatusCode: "missing-closure-run",
				Detail: fmt.Sprintf("closure stage %s has no result from %s.", phase, id)})
			continue
		}
		if f := runOK(gate, id, sum); f != nil {
			out = append(out, *f)
			continue
		}
		code, detail := stageCheck(phase, w, id, sum)
		if code != "" {
			out = append(out, Failure{AgentID: id, Gate: gate, StatusCode: code, Detail: detail, LogPath: sum.LogPath})
		}
	}
	return out
}

func stageCheck(phase string, w *wave.Wave, id string, s Summary) (code, detail string) {
	switch phase {
	case roles.PhaseContEval:
		return contEval(w, id, s)
	case roles.PhaseSecurity:
		return security(id, s)
	case roles.PhaseIntegrating:
		switch i := s.Integration; {
		case i == nil:
			return "missing-wave-integration", withHint("Missing [wave-integration] marker for "+id+".", s)
		case i.State != "ready-for-doc-closure":
			return "integration-needs-more-work", id + " reported " + i.State + colonDetail(i.Detail)
		}
	case roles.PhaseDocsClosure:
		switch d := s.DocClosure; {
		case d == nil:
			return "missing-doc-closure", withHint("Missing [wave-doc-closure] marker for "+id+".", s)
		case d.State == "delta":
			return "doc-closure-open", id + " still reports an open shared-plan delta" + colonDetail(d.Detail)
		}
	case roles.PhaseContQa:
		return contQa(id, s)
	}
	return "", ""
}

func security(id string, s Summary) (string, string) {
	sec := s.Security
	switch {
	case sec == nil:
		return "missing-wave-security", withHint("Missing [wave-security] marker for "+id+".", s)
	case s.ReportPath == "":
		return "missing-security-report", id + " owns no security report path."
	case !s.ReportExists:
		return "missing-security-report", "security report " + s.ReportPath + " of " + id + " is " + missingOrStale(s) + "."
	case sec.State == "clear" && (sec.Findings > 0 || sec.Approvals > 0):
		return "invalid-security-clear-state", fmt.Sprintf("%s reported clear with %d findings and %d approvals open.", id, sec.Findings, sec.Approvals)
	case sec.State == "blocked":
		return "security-blocked", id + " blocked the wave" + colonDetail(sec.Detail)
	}
	return "", "" // clear, or concerns (advisory)
}

func contEval(w *wave.Wave, id string, s Summary) (string, string) {
	e := s.Eval
	switch {
	case e == nil:
		return "missing-wave-eval", withHint("Missing [wave-eval] marker for "+id+".", s)
	case e.State == "blocked":
		return "cont-eval-blocked", id + " reported blocked" + colonDetail(e.Detail)
	case e.State != "satisfied":
		return "cont-eval-needs-more-work", id + " reported " + e.State + colonDetail(e.Detail)
	case s.ReportPath == "" || !s.ReportExists:
		return "missing-cont-eval-report", fmt.Sprintf("cont-EVAL report %q of %s is missing.", s.ReportPath, id)
	case e.Regressions > 0:
		return "cont-eval-regressions", fmt.Sprintf("%s reported %d regressions%s", id, e.Regressions, colonDetail(e.Detail))
	}
	if len(w.EvalTargets) == 0 {
		return "", ""
	}
	var want []string
	for _, t := range w.EvalTargets {
		want = append(want, strings.ToLower(t.ID))
	}
	got := sortedUnique(e.TargetIDs)
	want = sortedUnique(want)
	switch {
	case len(got) == 0:
		return "missing-cont-eval-target-ids", "Missing target_ids in [wave-eval] marker for " + id + "."
	case e.Targets != len(got):
		return "cont-eval-target-count-mismatch", fmt.Sprintf("%s reported %d targets but target_ids lists %d.", id, e.Targets, len(got))
	case !slices.Equal(got, want):
		return "cont-eval-target-mismatch", fmt.Sprintf("%s target_ids %v must match the declared eval targets %v.", id, got, want)
	}
	bench := sortedUnique(e.BenchmarkIDs)
	switch {
	case len(bench) == 0:
		return "missing-cont-eval-benchmarks", "Missing benchmark_ids in [wave-eval] marker for " + id + "."
	case e.Benchmarks != len(bench):
		return "cont-eval-benchmark-count-mismatch", fmt.Sprintf("%s reported %d benchmarks but benchmark_ids lists %d.", id, e.Benchmarks, len(bench))
	}
	for _, t := range w.EvalTargets {
		if t.Selection != "pinned" {
			continue
		}
		for _, pb := range t.Benchmarks {
			if !slices.Contains(bench, strings.ToLower(pb)) {
				return "cont-eval-benchmark-mismatch", fmt.Sprintf("%s must run pinned benchmark %s for target %s.", id, pb, t.ID)
			}
		}
	}
	return "", ""
}

func sortedUnique(v []string) []string {
	out := slices.Clone(v)
	slices.Sort(out)
	return slices.Compact(out)
}

// contQa: [wave-gate] present, report present, verdict PASS, each gate
// dimension pass or a documented gap. The verdict is read from the
// report's first `Verdict:` line and from [wave-verdict] in the log: a
// non-pass verdict in either fails; a log PASS counts when the report
// has no Verdict line.
func contQa(id string, s Summary) (string, string) {
	g := s.Gate
	switch {
	case g == nil:
		return "missing-wave-gate", withHint("Missing [wave-gate] marker for "+id+".", s)
	case s.ReportPath == "":
		return "missing-cont-qa-report", id + " owns no cont-QA report path."
	case !s.ReportExists:
		return "missing-cont-qa-report", "cont-QA report " + s.ReportPath + " of " + id + " is " + missingOrStale(s) + "."
	}
	for _, v := range []struct {
		v    *Verdict
		from string
	}{{s.ReportVerdict, "report " + s.ReportPath}, {s.Signals.Verdict, "[wave-verdict]"}} {
		if v.v != nil && v.v.Verdict != "pass" {
			return "cont-qa-" + v.v.Verdict, fmt.Sprintf("%s verdict %s in %s%s", id, strings.ToUpper(v.v.Verdict), v.from, colonDetail(v.v.Detail))
		}
	}
	if s.ReportVerdict == nil && s.Signals.Verdict == nil {
		return "missing-cont-qa-verdict", withHint(fmt.Sprintf("no `Verdict:` line in %s and no [wave-verdict] marker from %s.", s.ReportPath, id), s)
	}
	dims := []struct{ name, v string }{
		{"architecture", g.Architecture}, {"integration", g.Integration}, {"durability", g.Durability}, {"live", g.Live}, {"docs", g.Docs},
	}
	for _, d := range dims {
		if d.v != "pass" && d.v != "gap" {
			return fmt.Sprintf("gate-%s-%s", d.name, d.v), fmt.Sprintf("%s [wave-gate] %s=%s%s", id, d.name, d.v, colonDetail(g.Detail))
		}
	}
	return "", ""
}

// missingOrStale says why a report does not count.
func missingOrStale(s Summary) string {
	if s.ReportStale {
		return "stale (older than this run; a previous run wrote it)"
	}
	return "missing"
}
