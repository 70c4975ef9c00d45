package wave

import (
	"errors"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
)

// base is a minimal valid wave: cont-QA A0 (lines 1-8) and A1 (lines 9-14).
const base = "## Agent A0: QA\n### Role prompts\n- docs/agents/wave-cont-qa-role.md\n### Prompt\n```\nFile ownership:\n- reviews/wave-1-cont-qa.md\n```\n" +
	"## Agent A1: Impl\n### Prompt\n```\nFile ownership:\n- src/\n```\n"

// agent builds an agent section (header on its first line) with extra
// subsections before a prompt owning owned.
func agent(id, extra, owned string) string {
	return "## Agent " + id + ": T\n" + extra + "### Prompt\n```\nFile ownership:\n- " + owned + "\n```\n"
}

type wantProblem struct {
	rule  string
	line  int
	agent string
}

func checkProblem(t *testing.T, name string, err error, want wantProblem) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Errorf("%s: err = %v, want *Error with %s", name, err, want.rule)
		return
	}
	for _, p := range e.Problems {
		if p.Rule == want.rule {
			if p.Line != want.line || p.Agent != want.agent || p.File != "docs/plans/waves/wave-1.md" {
				t.Errorf("%s: problem %+v, want line %d agent %q", name, p, want.line, want.agent)
			}
			msg := p.String()
			prefix := "docs/plans/waves/wave-1.md:"
			if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, want.rule+": ") || (want.agent != "" && !strings.Contains(msg, "agent "+want.agent+": ")) {
				t.Errorf("%s: message %q does not name file, line, agent and rule", name, msg)
			}
			return
		}
	}
	t.Errorf("%s: no %s problem in:\n%v", name, want.rule, err)
}

func TestParseProblems(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    wantProblem
	}{
		{"empty file", " \n\t\n", wantProblem{"empty-file", 1, ""}},
		{"invalid utf8", "# ok\n\nbad \xff byte\n", wantProblem{"invalid-utf8", 3, ""}},
		{"missing prompt", base + "## Agent A2: x\n### Deliverables\n- a.go\n", wantProblem{"missing-prompt", 15, "A2"}},
		{"missing prompt fence", base + "## Agent A2: x\n### Prompt\nFile ownership:\n- a.go\n", wantProblem{"missing-prompt-fence", 16, "A2"}},
		{"duplicate agent", base + agent("A1", "", "b/"), wantProblem{"duplicate-agent", 15, "A1"}},
		{"bad agent header", base + "## Agent A2 no colon\n", wantProblem{"bad-agent-header", 15, ""}},
		{"unknown executor key", base + agent("A2", "### Executor\n- id: codex\n- codex.turbo: on\n", "b/"), wantProblem{"unknown-executor-key", 18, "A2"}},
		{"empty executor value", base + agent("A2", "### Executor\n- model: \"\"\n", "b/"), wantProblem{"empty-executor-value", 17, "A2"}},
		{"bad executor id", base + agent("A2", "### Executor\n- id: gpt\n", "b/"), wantProblem{"bad-enum", 17, "A2"}},
		{"bad local exit code", base + agent("A2", "### Executor\n- id: local\n- local.exit-code: 300\n", "b/"), wantProblem{"bad-value", 18, "A2"}},
		{"bad exit contract value", base + agent("A2", "### Exit contract\n- completion: done\n- durability: none\n- proof: unit\n- doc-impact: none\n", "b/"), wantProblem{"bad-exit-contract", 17, "A2"}},
		{"unknown exit contract key", base + agent("A2", "### Exit contract\n- completion: live\n- prooof: unit\n", "b/"), wantProblem{"unknown-exit-contract-key", 18, "A2"}},
		{"bad local delay", base + agent("A2", "### Executor\n- local.delay: soon\n", "b/"), wantProblem{"bad-value", 17, "A2"}},
		{"bad budget", base + agent("A2", "### Executor\n- budget.minutes: 0\n", "b/"), wantProblem{"bad-value", 17, "A2"}},
		{"bad json", base + agent("A2", "### Executor\n- claude.settings_json: [1]\n", "b/"), wantProblem{"bad-value", 17, "A2"}},
		{"malformed bullet", base + agent("A2", "### Deliverables\nb/a.go\n", "b/"), wantProblem{"malformed-bullet", 17, "A2"}},
		{"deliverable outside ownership", base + agent("A2", "### Deliverables\n- b/a.go\n- c/d.go\n", "b/"), wantProblem{"deliverable-outside-ownership", 18, "A2"}},
		{"deliverable is directory", base + agent("A2", "### Deliverables\n- b/sub/\n", "b/"), wantProblem{"deliverable-is-directory", 17, "A2"}},
		{"proof artifact outside ownership", base + agent("A2", "### Proof artifacts\n- path: c/p.json | kind: x\n", "b/"), wantProblem{"proof-artifact-outside-ownership", 17, "A2"}},
		{"proof artifact directory", base + agent("A2", "### Proof artifacts\n- b/dir/\n", "b/"), wantProblem{"proof-artifact-is-directory", 17, "A2"}},
		{"bad maturity level", base + agent("A2", "### Proof artifacts\n- path: b/p.json | required-for: shipped\n", "b/"), wantProblem{"bad-enum", 17, "A2"}},
		{"path outside repo", base + agent("A2", "### Deliverables\n- ../etc/passwd\n", "b/"), wantProblem{"path-outside-repo", 17, "A2"}},
		{"duplicate deliverable", base + agent("A2", "### Deliverables\n- b/a.go\n- `b/a.go`\n", "b/"), wantProblem{"duplicate-entry", 18, "A2"}},
		{"bad component id", base + agent("A2", "### Components\n- Api_Core\n", "b/"), wantProblem{"bad-id", 17, "A2"}},
		{"bad skill id", base + agent("A2", "### Skills\n- -x\n", "b/"), wantProblem{"bad-id", 17, "A2"}},
		{"role prompt outside dir", base + agent("A2", "### Role prompts\n- prompts/x.md\n", "b/"), wantProblem{"role-prompt-path", 16, "A2"}},
		{"role prompt missing", base + agent("A2", "### Role prompts\n- docs/agents/nope.md\n", "b/"), wantProblem{"role-prompt-missing", 16, "A2"}},
		{"no standing prompt", base + agent("A2", "### Role prompts\n- docs/agents/plain.md\n", "b/"), wantProblem{"missing-standing-prompt", 16, "A2"}},
		{"bad eval target", "## Eval targets\n- id: x | selection: pinned | objective: o | threshold: t\n" + base, wantProblem{"bad-eval-target", 2, ""}},
		{"bad promotion", "## Component promotions\n- api core: live\n" + base, wantProblem{"malformed-bullet", 2, ""}},
		{"bad deploy env", "## Deploy environments\n- prod\n" + base, wantProblem{"malformed-bullet", 2, ""}},
	}
	read := roleDocs(map[string]string{"docs/agents/plain.md": "# no standing prompt\n"})
	for _, tt := range tests {
		_, err := Parse("docs/plans/waves/wave-1.md", []byte(tt.content), Options{ReadFile: read})
		checkProblem(t, tt.name, err, tt.want)
	}
}

func TestParseCollectsAllProblems(t *testing.T) {
	content := base + agent("A2", "### Executor\n- bogus: 1\n- id: nope\n### Deliverables\n- z.go\n", "b/")
	_, err := Parse("docs/plans/waves/wave-1.md", []byte(content), Options{ReadFile: roleDocs(nil)})
	var e *Error
	if !errors.As(err, &e) || len(e.Problems) != 3 {
		t.Fatalf("want 3 problems, got %v", err)
	}
	if lines := strings.Count(err.Error(), "\n") + 1; lines != 3 {
		t.Errorf("Error() has %d lines, want one per problem", lines)
	}
}

func TestParseBadFilename(t *testing.T) {
	_, err := Parse("docs/plans/waves/wave-x.md", []byte(base), Options{ReadFile: roleDocs(nil)})
	var e *Error
	if !errors.As(err, &e) || !e.Has("bad-filename") {
		t.Errorf("err = %v", err)
	}
}

func intp(n int) *int { return &n }

func TestValidateProblems(t *testing.T) {
	matrix := `{"levels":["inventoried","repo-landed","pilot-live"],"components":{"api":{"currentLevel":"repo-landed","promotions":[{"wave":1,"target":"pilot-live"}]},"web":{"currentLevel":"inventoried","promotions":[{"wave":1,"target":"repo-landed"}]}}}`
	read := roleDocs(map[string]string{"docs/plans/matrix.json": matrix})
	promo := func(l *config.Lane) {
		l.Validation.RequireComponentPromotionsFromWave = intp(0)
		l.MatrixJSONPath = "docs/plans/matrix.json"
	}
	tests := []struct {
		name    string
		content string
		lane    func(*config.Lane)
		want    wantProblem
	}{
		{"no agents", "# Wave\n", nil, wantProblem{"no-agents", 1, ""}},
		{"missing cont-qa", agent("A1", "", "src/"), nil, wantProblem{"missing-cont-qa", 1, ""}},
		{"cont-qa role prompt", agent("A0", "", "reviews/wave-1-cont-qa.md"), nil, wantProblem{"cont-qa-role-prompt", 1, "A0"}},
		{"no owned paths", base + "## Agent A2: x\n### Prompt\n```\nno ownership\n```\n", nil, wantProblem{"no-owned-paths", 16, "A2"}},
		{"vendor mismatch", base + agent("A2", "### Executor\n- id: claude\n- codex.search: on\n", "b/"), nil, wantProblem{"executor-vendor-mismatch", 16, "A2"}},
		{"context7 threshold", base, func(l *config.Lane) { l.Validation.RequireContext7DeclarationsFromWave = intp(1) }, wantProblem{"missing-context7", 1, "A0"}},
		{"context7 defaults", base, func(l *config.Lane) { l.Validation.RequireContext7DeclarationsFromWave = intp(1) }, wantProblem{"missing-context7-defaults", 1, ""}},
		{"closure agent components", "## Component promotions\n- api: pilot-live\n" + agent("A0", "### Role prompts\n- docs/agents/wave-cont-qa-role.md\n### Components\n- api\n", "reviews/q.md"), nil, wantProblem{"closure-agent-components", 6, "A0"}},
		{"missing components", base, func(l *config.Lane) {
			l.Validation.RequireAgentComponentsFromWave = intp(0)
			l.MatrixJSONPath = "docs/plans/matrix.json"
		}, wantProblem{"missing-components", 9, "A1"}},
		{"component not promoted", base + agent("A2", "### Components\n- api\n", "b/"), nil, wantProblem{"component-not-promoted", 16, "A2"}},
		{"promoted component unowned", "## Component promotions\n- api: repo-landed\n" + base, nil, wantProblem{"promoted-component-unowned", 1, ""}},
		{"exit contract threshold", base, func(l *config.Lane) { l.Validation.RequireExitContractsFromWave = intp(1) }, wantProblem{"missing-exit-contract", 9, "A1"}},
		{"incomplete exit contract", base + agent("A2", "### Exit contract\n- completion: live\n", "b/"), func(l *config.Lane) { l.Validation.RequireExitContractsFromWave = intp(0) }, wantProblem{"bad-exit-contract", 16, "A2"}},
		{"proof-centric needs artifacts", "## Component promotions\n- api: pilot-live\n" + base + agent("A2", "### Components\n- api\n", "b/"), nil, wantProblem{"missing-proof-artifacts", 17, "A2"}},
		{"proof-centric local", base + agent("A2", "### Executor\n- id: local\n### Proof artifacts\n- b/p.json\n", "b/"), nil, wantProblem{"proof-centric-local", 16, "A2"}},
		{"required prompt reference", base, func(l *config.Lane) { l.Validation.RequiredPromptReferences = []string{"docs/guide.md"} }, wantProblem{"required-prompt-reference", 4, "A0"}},
		{"cont-eval role prompt", base + agent("E0", "", "docs/evals/e.md"), nil, wantProblem{"cont-eval-role-prompt", 15, "E0"}},
		{"missing eval targets", base + agent("E0", "### Role prompts\n- docs/agents/wave-cont-eval-role.md\n", "docs/evals/e.md"), nil, wantProblem{"missing-eval-targets", 15, "E0"}},
		{"eval targets without cont-eval", "## Eval targets\n- id: x | selection: pinned | benchmarks: b | objective: o | threshold: t\n" + base, nil, wantProblem{"eval-targets-without-cont-eval", 1, ""}},
		{"security role prompt", base + agent("A7", "### Capabilities\n- security-review\n", ".tmp/security.md"), nil, wantProblem{"security-role-prompt", 15, "A7"}},
		{"security report path", base + agent("A7", "### Role prompts\n- docs/agents/wave-security-role.md\n", "notes.md"), nil, wantProblem{"security-report-path", 18, "A7"}},
		{"design role prompt", base + agent("A6", "### Capabilities\n- design\n", "docs/design.md"), nil, wantProblem{"design-role-prompt", 15, "A6"}},
		{"design packet path", base + agent("A6", "### Role prompts\n- docs/agents/wave-design-role.md\n", "docs/spec.md"), nil, wantProblem{"design-packet-path", 18, "A6"}},
		{"closure role overlap", base + agent("A8", "### Role prompts\n- docs/agents/wave-security-role.md\n", ".tmp/security.md"), nil, wantProblem{"closure-role-overlap", 15, "A8"}},
		{"integration steward", base, func(l *config.Lane) { l.Validation.RequireIntegrationStewardFromWave = intp(0) }, wantProblem{"integration-steward", 1, ""}},
		{"documentation steward", base, func(l *config.Lane) { l.Validation.RequireDocumentationStewardFromWave = intp(0) }, wantProblem{"documentation-steward", 1, ""}},
		{"documentation steward paths", base + agent("A9", "### Role prompts\n- docs/agents/wave-documentation-role.md\n", "docs/x.md"), func(l *config.Lane) {
			l.Validation.RequireDocumentationStewardFromWave = intp(0)
			l.SharedPlanDocs = []string{"docs/plans/current-state.md"}
		}, wantProblem{"documentation-steward-paths", 18, "A9"}},
		{"shared plan doc owner", base + agent("A9", "### Role prompts\n- docs/agents/wave-documentation-role.md\n", "docs/plans/current-state.md") + agent("A3", "", "docs/plans/current-state.md"), func(l *config.Lane) {
			l.Validation.RequireDocumentationStewardFromWave = intp(0)
			l.SharedPlanDocs = []string{"docs/plans/current-state.md"}
		}, wantProblem{"shared-plan-doc-owner", 24, "A3"}},
		{"runtime mix", base + agent("A2", "", "b/"), func(l *config.Lane) { l.RuntimePolicy.RuntimeMixTargets = map[string]int{"codex": 2} }, wantProblem{"runtime-mix", 1, ""}},
		{"missing promotions", base, promo, wantProblem{"missing-component-promotions", 1, ""}},
		{"matrix missing", base, func(l *config.Lane) { promo(l); l.MatrixJSONPath = "docs/none.json" }, wantProblem{"component-matrix", 1, ""}},
		{"unknown component", "## Component promotions\n- db: pilot-live\n" + base, promo, wantProblem{"unknown-component", 1, ""}},
		{"matrix mismatch", "## Component promotions\n- api: repo-landed\n- web: repo-landed\n" + base, promo, wantProblem{"matrix-promotion-mismatch", 1, ""}},
		{"undeclared matrix promotion", "## Component promotions\n- api: pilot-live\n" + base, promo, wantProblem{"undeclared-matrix-promotion", 1, ""}},
	}
	for _, tt := range tests {
		w, err := Parse("docs/plans/waves/wave-1.md", []byte(tt.content), Options{ReadFile: read})
		if err != nil {
			t.Errorf("%s: parse: %v", tt.name, err)
			continue
		}
		lane := &config.Lane{}
		if tt.lane != nil {
			tt.lane(lane)
		}
		checkProblem(t, tt.name, Validate([]*Wave{w}, lane, Options{ReadFile: read}), tt.want)
	}
}

func TestValidateExampleUnderDefaults(t *testing.T) {
	w := parseFixture(t)
	w.Agents = w.Agents[:2] // A0, E0 need no components
	if err := Validate([]*Wave{w}, &config.Lane{}, Options{}); err == nil || !strings.Contains(err.Error(), "promoted-component-unowned") {
		t.Errorf("err = %v", err)
	}
	ok, err := Parse("docs/plans/waves/wave-1.md", []byte(base), Options{ReadFile: roleDocs(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate([]*Wave{ok}, &config.Lane{}, Options{}); err != nil {
		t.Errorf("minimal wave: %v", err)
	}
}

// A mistyped exit contract value or key stops the parse in every wave, with
// the value it probably meant: the validation.* thresholds decide which
// waves need a contract, not whether a typo in one is read.
func TestExitContractTyposFailTheParseInEveryWave(t *testing.T) {
	content := base + agent("A2", "### Exit contract\n- completion: contractt\n- durability: none\n- proof: unitt\n- doc-impact: `owned`\n- durabilty: none\n", "b/")
	_, err := Parse("docs/plans/waves/wave-0.md", []byte(content), Options{ReadFile: roleDocs(nil)})
	if err == nil {
		t.Fatal("wave 0 with mistyped exit contract values parsed")
	}
	for _, want := range []string{
		`wave-0.md:17: agent A2: bad-exit-contract: exit contract completion "contractt": want one of contract, integrated, authoritative, live (did you mean "contract"?)`,
		`wave-0.md:19: agent A2: bad-exit-contract: exit contract proof "unitt": want one of unit, integration, live (did you mean "unit"?)`,
		`wave-0.md:20: agent A2: bad-exit-contract: exit contract doc-impact "` + "`owned`" + `": want one of none, owned, shared-plan (did you mean "owned"?)`,
		`wave-0.md:21: agent A2: unknown-exit-contract-key: unknown exit contract key "durabilty" (did you mean "durability"?)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// A misspelt executor key names the key it probably meant.
func TestAMisspeltExecutorKeySuggestsTheKnownOne(t *testing.T) {
	content := base + agent("A2", "### Executor\n- id: local\n- local.dealy: 3s\n", "b/")
	_, err := Parse("docs/plans/waves/wave-1.md", []byte(content), Options{ReadFile: roleDocs(nil)})
	want := `wave-1.md:18: agent A2: unknown-executor-key: unknown executor key "local.dealy" (did you mean "local.delay"?)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err %v\nwant %q", err, want)
	}
}
