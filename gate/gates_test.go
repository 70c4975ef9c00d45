package gate

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

func ptr[T any](v T) *T { return &v }

// testWave: A1 implements component api, S1 reviews security, E0 evals,
// A8 integrates, A9 documents, A0 is cont-QA.
func testWave() *wave.Wave {
	return &wave.Wave{
		Number: 5,
		File:   "docs/plans/waves/wave-5.md",
		Agents: []wave.Agent{
			{ID: "A0", OwnedPaths: []string{"docs/reviews/wave-5-cont-qa.md"}},
			{ID: "A1",
				ExitContract:     &wave.ExitContract{Completion: "integrated", Durability: "durable", Proof: "integration", DocImpact: "owned"},
				Components:       []string{"api"},
				ComponentTargets: map[string]*string{"api": ptr("repo-landed")},
				Deliverables:     []string{"src/api.go"},
				ProofArtifacts:   []wave.ProofArtifact{{Path: "proof/api.txt"}},
			},
			{ID: "A8"},
			{ID: "A9"},
			{ID: "E0", OwnedPaths: []string{"docs/reviews/wave-5-eval.md"}},
			{ID: "S1", Capabilities: []string{"security-review"}, OwnedPaths: []string{"docs/security/wave-5-security.md"}},
		},
	}
}

func bindings(w *wave.Wave) roles.Bindings { return roles.Bind(w, config.Roles{}) }

var fullFS = fstest.MapFS{
	"src/api.go":                          {Data: []byte("package api")},
	"proof/api.txt":                       {Data: []byte("ok")},
	"docs/reviews/wave-5-cont-qa.md":      {Data: []byte("# Review\nVerdict: PASS - looks right\n")},
	"docs/reviews/wave-5-eval.md":         {Data: []byte("eval")},
	"docs/security/wave-5-security.md":    {Data: []byte("sec")},
	"docs/reviews/wave-5-cont-qa-fail.md": {Data: []byte("Verdict: FAIL\n## Note\n")},
}

const (
	implOK = "[wave-proof] completion=integrated durability=durable proof=integration state=met\n" +
		"[wave-doc-delta] state=owned\n" +
		"[wave-component] component=api level=repo-landed state=met\n"
	gateAllPass = "[wave-gate] architecture=pass integration=pass durability=pass live=pass docs=pass\n"
)

func summarize(t *testing.T, w *wave.Wave, id, log string, code int, fsys fstest.MapFS) Summary {
	t.Helper()
	for i := range w.Agents {
		if w.Agents[i].ID == id {
			return Summarize(SummaryInput{Agent: &w.Agents[i], Bindings: bindings(w), Log: log, ExitCode: &code, FS: fsys, LogPath: "runs/" + id + "/agent.log"})
		}
	}
	t.Fatalf("no agent %s", id)
	return Summary{}
}

func without(fsys fstest.MapFS, path string) fstest.MapFS {
	out := fstest.MapFS{}
	for k, v := range fsys {
		if k != path {
			out[k] = v
		}
	}
	return out
}

func TestImplementationGate(t *testing.T) {
	tests := []struct {
		name, log string
		code      int
		fs        fstest.MapFS
		want      string // status code; "" = pass
	}{
		{"pass", implOK, 0, fullFS, ""},
		{"exit code counts even with every marker passing", implOK, 3, fullFS, "3"},
		{"missing proof", "[wave-doc-delta] state=owned\n", 0, fullFS, "missing-wave-proof"},
		{"malformed proof", strings.Replace(implOK, "completion=integrated", "completion=done", 1), 0, fullFS, "invalid-wave-proof-format"},
		{"proof gap", strings.Replace(implOK, "state=met\n", "state=gap detail=flaky\n", 1), 0, fullFS, "wave-proof-gap"},
		{"completion below contract", strings.Replace(implOK, "completion=integrated", "completion=contract", 1), 0, fullFS, "completion-gap"},
		{"completion above contract passes", strings.Replace(implOK, "completion=integrated", "completion=live", 1), 0, fullFS, ""},
		{"durability below contract", strings.Replace(implOK, "durability=durable", "durability=ephemeral", 1), 0, fullFS, "durability-gap"},
		{"proof level below contract", strings.Replace(implOK, "proof=integration", "proof=unit", 1), 0, fullFS, "proof-level-gap"},
		{"missing doc delta", strings.Replace(implOK, "[wave-doc-delta] state=owned\n", "", 1), 0, fullFS, "missing-doc-delta"},
		{"doc delta below doc impact", strings.Replace(implOK, "state=owned", "state=none", 1), 0, fullFS, "doc-impact-gap"},
		{"shared-plan doc delta exceeds owned", strings.Replace(implOK, "state=owned", "state=shared-plan", 1), 0, fullFS, ""},
		{"missing component", strings.Replace(implOK, "[wave-component] component=api level=repo-landed state=met\n", "", 1), 0, fullFS, "missing-wave-component"},
		{"component level mismatch", strings.Replace(implOK, "level=repo-landed", "level=baseline-proved", 1), 0, fullFS, "component-level-mismatch"},
		{"component gap", strings.Replace(implOK, "level=repo-landed state=met", "level=repo-landed state=gap", 1), 0, fullFS, "component-gap"},
		{"missing deliverable", implOK, 0, without(fullFS, "src/api.go"), "missing-deliverable"},
		{"missing proof artifact", implOK, 0, without(fullFS, "proof/api.txt"), "missing-proof-artifact"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := testWave()
			b := bindings(w)
			s := map[string]Summary{"A1": summarize(t, w, "A1", tc.log, tc.code, tc.fs)}
			got := Implementation(w, b, s, []string{"A1"})
			switch {
			case tc.want == "" && len(got) != 0:
				t.Fatalf("want pass, got %v", got)
			case tc.want != "" && (len(got) != 1 || got[0].StatusCode != tc.want):
				t.Fatalf("want %s, got %v", tc.want, got)
			case tc.want != "" && (got[0].AgentID != "A1" || got[0].Gate != GateImplementation || got[0].LogPath == "" || got[0].Detail == ""):
				t.Fatalf("failure lacks agent/gate/log/detail: %+v", got[0])
			}
		})
	}
}

func TestImplementationGateMissingSummaryAndStatus(t *testing.T) {
	w := testWave()
	got := Implementation(w, bindings(w), map[string]Summary{}, []string{"A1", "ZZ"})
	if len(got) != 2 || got[0].StatusCode != "missing-summary" || got[1].StatusCode != "unknown-agent" {
		t.Fatalf("got %v", got)
	}
	s := Summarize(SummaryInput{Agent: &w.Agents[1], Bindings: bindings(w), Log: implOK, FS: fullFS})
	got = Implementation(w, bindings(w), map[string]Summary{"A1": s}, []string{"A1"})
	if len(got) != 1 || got[0].StatusCode != "missing-status" {
		t.Fatalf("no exit status: got %v", got)
	}
}

func TestComponentGate(t *testing.T) {
	w := testWave()
	w.Agents = append(w.Agents, wave.Agent{ID: "A2", Components: []string{"api"}, ComponentTargets: map[string]*string{"api": ptr("repo-landed")}})
	w.ComponentPromotions = []wave.ComponentPromotion{{ComponentID: "api", TargetLevel: "repo-landed"}}
	b := bindings(w)
	s := map[string]Summary{
		"A1": summarize(t, w, "A1", implOK, 0, fullFS),
		"A2": summarize(t, w, "A2", "[wave-component] component=api level=repo-landed state=gap", 0, fullFS),
	}
	if got := Components(w, b, s, config.Validation{}); got != nil {
		t.Fatalf("inactive threshold: got %v", got)
	}
	v := config.Validation{RequireComponentPromotionsFromWave: ptr(3)}
	got := Components(w, b, s, v)
	if len(got) != 1 || got[0].StatusCode != "shared-component-sibling-pending" || got[0].AgentID != "A2" {
		t.Fatalf("sibling pending: got %v", got)
	}
	s["A1"] = summarize(t, w, "A1", implOK, 1, fullFS)
	got = Components(w, b, s, v)
	if len(got) != 1 || got[0].StatusCode != "component-promotion-gap" {
		t.Fatalf("no owner satisfied: got %v", got)
	}
	s["A2"] = summarize(t, w, "A2", "[wave-component] component=api level=repo-landed state=met", 0, fullFS)
	s["A1"] = summarize(t, w, "A1", implOK, 0, fullFS)
	if got := Components(w, b, s, v); len(got) != 0 {
		t.Fatalf("all owners satisfied: got %v", got)
	}
}

func TestStageGates(t *testing.T) {
	const (
		secClear    = "[wave-security] state=clear findings=0 approvals=0\n"
		evalOK      = "[wave-eval] state=satisfied targets=0 benchmarks=0 regressions=0\n"
		integReady  = "[wave-integration] state=ready-for-doc-closure claims=0 conflicts=0 blockers=0\n"
		docsClosed  = "[wave-doc-closure] state=closed\n"
		failVerdict = "[wave-verdict] fail detail=login broken\n"
		passVerdict = "[wave-verdict] pass\n"
	)
	noVerdictReport := fstest.MapFS{"docs/reviews/wave-5-cont-qa.md": {Data: []byte("# Review\nno verdict line yet\n")}}
	failReport := fstest.MapFS{"docs/reviews/wave-5-cont-qa.md": {Data: []byte("Verdict: FAIL\n## Note\n")}}
	tests := []struct {
		name, phase, agent, log string
		code                    int
		fs                      fstest.MapFS
		want                    string
	}{
		{"security clear", roles.PhaseSecurity, "S1", secClear, 0, fullFS, ""},
		{"security concerns pass", roles.PhaseSecurity, "S1", "[wave-security] state=concerns findings=2 approvals=0\n", 0, fullFS, ""},
		{"security blocked fails", roles.PhaseSecurity, "S1", "[wave-security] state=blocked findings=1 approvals=0 detail=secret in repo\n", 0, fullFS, "security-blocked"},
		{"security clear with findings", roles.PhaseSecurity, "S1", "[wave-security] state=clear findings=1 approvals=0\n", 0, fullFS, "invalid-security-clear-state"},
		{"security missing marker", roles.PhaseSecurity, "S1", "", 0, fullFS, "missing-wave-security"},
		{"security missing report", roles.PhaseSecurity, "S1", secClear, 0, without(fullFS, "docs/security/wave-5-security.md"), "missing-security-report"},
		{"security exit code", roles.PhaseSecurity, "S1", secClear, 2, fullFS, "2"},
		{"eval satisfied", roles.PhaseContEval, "E0", evalOK, 0, fullFS, ""},
		{"eval needs more work", roles.PhaseContEval, "E0", strings.Replace(evalOK, "satisfied", "needs-more-work", 1), 0, fullFS, "cont-eval-needs-more-work"},
		{"eval blocked", roles.PhaseContEval, "E0", strings.Replace(evalOK, "satisfied", "blocked", 1), 0, fullFS, "cont-eval-blocked"},
		{"eval regressions", roles.PhaseContEval, "E0", strings.Replace(evalOK, "regressions=0", "regressions=2", 1), 0, fullFS, "cont-eval-regressions"},
		{"eval missing marker", roles.PhaseContEval, "E0", "", 0, fullFS, "missing-wave-eval"},
		{"eval missing report", roles.PhaseContEval, "E0", evalOK, 0, without(fullFS, "docs/reviews/wave-5-eval.md"), "missing-cont-eval-report"},
		{"integration ready", roles.PhaseIntegrating, "A8", integReady, 0, fullFS, ""},
		{"integration not ready", roles.PhaseIntegrating, "A8", strings.Replace(integReady, "ready-for-doc-closure", "needs-more-work", 1), 0, fullFS, "integration-needs-more-work"},
		{"integration missing marker", roles.PhaseIntegrating, "A8", "", 0, fullFS, "missing-wave-integration"},
		{"docs closed", roles.PhaseDocsClosure, "A9", docsClosed, 0, fullFS, ""},
		{"docs no-change", roles.PhaseDocsClosure, "A9", "[wave-doc-closure] state=no-change\n", 0, fullFS, ""},
		{"docs delta open", roles.PhaseDocsClosure, "A9", "[wave-doc-closure] state=delta\n", 0, fullFS, "doc-closure-open"},
		{"docs missing marker", roles.PhaseDocsClosure, "A9", "", 0, fullFS, "missing-doc-closure"},
		{"cont-qa pass", roles.PhaseContQa, "A0", gateAllPass, 0, fullFS, ""},
		{"cont-qa gap dimension is a documented gap", roles.PhaseContQa, "A0", strings.Replace(gateAllPass, "live=pass", "live=gap", 1), 0, fullFS, ""},
		{"cont-qa blocked dimension", roles.PhaseContQa, "A0", strings.Replace(gateAllPass, "docs=pass", "docs=blocked", 1), 0, fullFS, "gate-docs-blocked"},
		{"cont-qa concerns dimension", roles.PhaseContQa, "A0", strings.Replace(gateAllPass, "architecture=pass", "architecture=concerns", 1), 0, fullFS, "gate-architecture-concerns"},
		{"cont-qa missing wave-gate", roles.PhaseContQa, "A0", passVerdict, 0, fullFS, "missing-wave-gate"},
		{"cont-qa report verdict fail", roles.PhaseContQa, "A0", gateAllPass, 0, failReport, "cont-qa-fail"},
		{"cont-qa missing report", roles.PhaseContQa, "A0", gateAllPass + passVerdict, 0, fstest.MapFS{}, "missing-cont-qa-report"},
		{"cont-qa no verdict anywhere", roles.PhaseContQa, "A0", gateAllPass, 0, noVerdictReport, "missing-cont-qa-verdict"},
		{"cont-qa [wave-verdict] pass honoured without report verdict", roles.PhaseContQa, "A0", gateAllPass + passVerdict, 0, noVerdictReport, ""},
		{"cont-qa [wave-verdict] fail beats report pass", roles.PhaseContQa, "A0", gateAllPass + failVerdict, 0, fullFS, "cont-qa-fail"},
		{"cont-qa exit code", roles.PhaseContQa, "A0", gateAllPass, 42, fullFS, "42"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := testWave()
			b := bindings(w)
			s := map[string]Summary{tc.agent: summarize(t, w, tc.agent, tc.log, tc.code, tc.fs)}
			got := Stage(tc.phase, w, b, s, &config.Lane{})
			switch {
			case tc.want == "" && len(got) != 0:
				t.Fatalf("want pass, got %v", got)
			case tc.want != "" && (len(got) != 1 || got[0].StatusCode != tc.want):
				t.Fatalf("want %s, got %v", tc.want, got)
			case tc.want != "" && (got[0].AgentID != tc.agent || got[0].Gate != PhaseGate(tc.phase)):
				t.Fatalf("failure names wrong agent/gate: %+v", got[0])
			}
		})
	}
}

func TestStageMissingRun(t *testing.T) {
	w := testWave()
	got := Stage(roles.PhaseContQa, w, bindings(w), map[string]Summary{}, nil)
	if len(got) != 1 || got[0].StatusCode != "missing-closure-run" || got[0].AgentID != "A0" {
		t.Fatalf("got %v", got)
	}
}

func TestStagePlan(t *testing.T) {
	implOnly := func() *wave.Wave {
		return &wave.Wave{Number: 2, File: "w.md", Agents: []wave.Agent{{ID: "A1"}}}
	}
	modes := config.Modes{Bootstrap: 0, Standard: 4, Strict: 10}
	lane := func(mut func(*config.Validation)) *config.Lane {
		l := &config.Lane{Validation: config.Validation{GateModeThresholds: modes, ClosureModeThresholds: modes}}
		if mut != nil {
			mut(&l.Validation)
		}
		return l
	}
	tests := []struct {
		name        string
		phase       string
		wave        func() *wave.Wave
		waveNumber  int
		lane        *config.Lane
		ranSemantic bool
		run, fail   bool
	}{
		{"declared stage runs", roles.PhaseSecurity, testWave, 5, lane(nil), false, true, false},
		{"bootstrap: missing integration skipped", roles.PhaseIntegrating, implOnly, 2, lane(func(v *config.Validation) { v.RequireIntegrationStewardFromWave = ptr(0) }), false, false, false},
		{"standard: missing required integration fails", roles.PhaseIntegrating, implOnly, 5, lane(func(v *config.Validation) { v.RequireIntegrationStewardFromWave = ptr(0) }), false, false, true},
		{"standard: integration not required below threshold", roles.PhaseIntegrating, implOnly, 5, lane(func(v *config.Validation) { v.RequireIntegrationStewardFromWave = ptr(8) }), false, false, false},
		{"standard: inferred integration auto-closes", roles.PhaseIntegrating, implOnly, 5, lane(func(v *config.Validation) {
			v.RequireIntegrationStewardFromWave = ptr(0)
			v.AutoClosure.AllowInferredIntegration = true
		}), false, false, false},
		{"standard: missing required docs fails", roles.PhaseDocsClosure, implOnly, 5, lane(func(v *config.Validation) { v.RequireDocumentationStewardFromWave = ptr(1) }), false, false, true},
		{"standard: auto doc no-change", roles.PhaseDocsClosure, implOnly, 5, lane(func(v *config.Validation) {
			v.RequireDocumentationStewardFromWave = ptr(1)
			v.AutoClosure.AllowAutoDocNoChange = true
		}), false, false, false},
		{"bootstrap: missing cont-qa still fails", roles.PhaseContQa, implOnly, 2, lane(nil), false, false, true},
		{"bootstrap: cont-qa skippable on fast path", roles.PhaseContQa, implOnly, 2, lane(func(v *config.Validation) { v.AutoClosure.AllowSkipContQaInBootstrap = true }), false, false, false},
		{"bootstrap: cont-qa not skipped after a semantic stage", roles.PhaseContQa, implOnly, 2, lane(func(v *config.Validation) { v.AutoClosure.AllowSkipContQaInBootstrap = true }), true, false, true},
		{"no thresholds means strict: cont-qa required", roles.PhaseContQa, implOnly, 0, nil, false, false, true},
		{"cont-eval without E0 is optional", roles.PhaseContEval, implOnly, 5, lane(nil), false, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.wave()
			w.Number = tc.waveNumber
			run, fail := StagePlan(tc.phase, w, bindings(w), tc.lane, tc.ranSemantic)
			if run != tc.run || fail != tc.fail {
				t.Fatalf("StagePlan = (run %v, failIfMissing %v), want (%v, %v)", run, fail, tc.run, tc.fail)
			}
		})
	}
}

func TestContQaOnly(t *testing.T) {
	qa := Failure{AgentID: "A0", Gate: GateContQa, StatusCode: "cont-qa-fail"}
	impl := Failure{AgentID: "A1", Gate: GateImplementation, StatusCode: "missing-wave-proof"}
	if !ContQaOnly([]Failure{qa}) || ContQaOnly([]Failure{qa, impl}) || ContQaOnly(nil) {
		t.Fatal("ContQaOnly wrong")
	}
}

func TestSummarize(t *testing.T) {
	w := testWave()
	log := "\x1b[1m" + implOK + "Reached max turns (30)\n"
	s := summarize(t, w, "A1", log, 1, without(fullFS, "proof/api.txt"))
	if s.Proof == nil || s.DocDelta == nil || len(s.Components) != 1 {
		t.Fatalf("signals not parsed: %+v", s.Signals)
	}
	if len(s.Deliverables) != 1 || !s.Deliverables[0].Exists || len(s.ProofArtifacts) != 1 || s.ProofArtifacts[0].Exists {
		t.Fatalf("file checks wrong: %+v %+v", s.Deliverables, s.ProofArtifacts)
	}
	if s.TerminationReason != "max-turns" || s.TerminationObservedTurnLimit == nil || *s.TerminationObservedTurnLimit != 30 {
		t.Fatalf("termination = %q %v", s.TerminationReason, s.TerminationObservedTurnLimit)
	}
	qa := summarize(t, w, "A0", gateAllPass, 0, fstest.MapFS{"docs/reviews/wave-5-cont-qa.md": {Data: []byte("Verdict: FAIL\n## Note\nVerdict: PASS\n")}})
	if qa.ReportPath != "docs/reviews/wave-5-cont-qa.md" || !qa.ReportExists || qa.ReportVerdict == nil {
		t.Fatalf("report not read: %+v", qa)
	}
	if qa.ReportVerdict.Verdict != "fail" || qa.ReportVerdict.Detail != "" {
		t.Fatalf("first Verdict line must win and its detail must not spill: %+v", qa.ReportVerdict)
	}
}

func TestReportVerdict(t *testing.T) {
	for _, tc := range []struct{ text, verdict, detail string }{
		{"Verdict: PASS", "pass", ""},
		{"# r\nVerdict: CONCERNS - docs lag\nVerdict: PASS", "concerns", "docs lag"},
		{"verdict: hold: waiting", "hold", "waiting"},
		{"Verdict: PASSED", "", ""},
		{"The Verdict: PASS is pending", "", ""},
		{"Verdict:\nPASS", "", ""},
	} {
		v := ReportVerdict(tc.text)
		got, detail := "", ""
		if v != nil {
			got, detail = v.Verdict, v.Detail
		}
		if got != tc.verdict || detail != tc.detail {
			t.Errorf("ReportVerdict(%q) = %q %q, want %q %q", tc.text, got, detail, tc.verdict, tc.detail)
		}
	}
}

// A marker rejected only for how it was carried into the log (quotes,
// trailing commas, markdown escapes, a literal \n from a JSON transport)
// while every value is present is accepted on adjudication when the run
// exited 0 and landed every declared file, and the acceptance is
// recorded; a wrong or missing value, or a missing file, still fails.
func TestTransportOnlyMarkerFailureIsAdjudicated(t *testing.T) {
	comp := "[wave-component] component=api level=repo-landed state=met\n"
	withComp := func(line string) string { return strings.Replace(implOK, comp, line+"\n", 1) }
	tests := []struct {
		name, log   string
		code        int
		fs          fstest.MapFS
		want        string // status code; "" = pass
		adjudicated int
		detail      string // in the failure's detail
	}{
		{"trailing commas", withComp("[wave-component] component=api, level=repo-landed, state=met,"), 0, fullFS, "", 1, ""},
		{"quoted values", withComp(`[wave-component] component="api" level="repo-landed" state="met" detail=landed`), 0, fullFS, "", 1, ""},
		{"markdown escapes", withComp(`[wave-component] component=api level=repo\-landed state=**met**`), 0, fullFS, "", 1, ""},
		{"literal newline escape from a JSON transport", withComp(`[wave-component] component=api level=repo-landed state=met\n`), 0, fullFS, "", 1, ""},
		{"proof and doc delta too", strings.Replace(strings.Replace(implOK, "state=met\n", "state=met.\n", 1), "state=owned", "state=`owned`", 1), 0, fullFS, "", 2, ""},
		{"a stray token after the last value", withComp("[wave-component] component=api level=repo-landed state=met extra"), 0, fullFS, "", 1, ""},
		{"a stray token after a mangled value", withComp("[wave-component] component=api, level=repo-landed, state=met, extra"), 0, fullFS, "", 1, ""},
		{"a well-formed marker needs no adjudication", implOK, 0, fullFS, "", 0, ""},
		{"an accepted marker wins over a mangled one", implOK + "[wave-component] component=api, level=baseline-proved, state=met,\n", 0, fullFS, "", 0, ""},
		{"wrong value is not transport", withComp("[wave-component] component=api level=repo-landed state=done"), 0, fullFS, "invalid-wave-component-format", 0, ""},
		{"missing value is not transport", withComp("[wave-component] component=api, state=met,"), 0, fullFS, "invalid-wave-component-format", 0, ""},
		{"a stray token does not make a wrong value right", withComp("[wave-component] component=api level=repo-landed state=done extra"), 0, fullFS, "invalid-wave-component-format", 0, ""},
		{"a second word inside a value is not a stray token", withComp("[wave-component] component=api level=repo landed state=met"), 0, fullFS, "invalid-wave-component-format", 0, ""},
		{"not adjudicated with a stray token and a deliverable missing", withComp("[wave-component] component=api level=repo-landed state=met extra"), 0, without(fullFS, "src/api.go"), "invalid-wave-component-format", 0, "accepted on adjudication once every declared deliverable"},
		{"not adjudicated with a deliverable missing", withComp("[wave-component] component=api, level=repo-landed, state=met,"), 0, without(fullFS, "src/api.go"), "invalid-wave-component-format", 0, "accepted on adjudication once every declared deliverable"},
		{"not adjudicated after a failed exit", withComp("[wave-component] component=api, level=repo-landed, state=met,"), 2, fullFS, "2", 0, ""},
		{"adjudicated values still meet the contract", withComp("[wave-component] component=api, level=baseline-proved, state=met,"), 0, fullFS, "component-level-mismatch", 1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := testWave()
			sum := summarize(t, w, "A1", tc.log, tc.code, tc.fs)
			got := Implementation(w, bindings(w), map[string]Summary{"A1": sum}, []string{"A1"})
			switch {
			case tc.want == "" && len(got) != 0:
				t.Fatalf("want pass, got %v", got)
			case tc.want != "" && (len(got) != 1 || got[0].StatusCode != tc.want):
				t.Fatalf("want %s, got %v", tc.want, got)
			case tc.detail != "" && !strings.Contains(got[0].Detail, tc.detail):
				t.Fatalf("detail %q lacks %q", got[0].Detail, tc.detail)
			case len(sum.Adjudicated) != tc.adjudicated:
				t.Fatalf("adjudicated %+v, want %d", sum.Adjudicated, tc.adjudicated)
			}
			for _, a := range sum.Adjudicated {
				if a.Line == "" || a.Reason == "" || a.Kind == KindComponent && a.ComponentID != "api" {
					t.Fatalf("adjudication lacks line, reason or component: %+v", a)
				}
			}
		})
	}
}
