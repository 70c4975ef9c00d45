package localagent

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

func ptr[T any](v T) *T { return &v }

func testWave() *wave.Wave {
	return &wave.Wave{
		Number:      3,
		EvalTargets: []wave.EvalTarget{{ID: "Latency", Selection: "pinned", Benchmarks: []string{"p99", "p95"}, Objective: "fast", Threshold: "p95<200ms"}},
		Agents: []wave.Agent{
			{ID: "A0", Title: "cont-QA", OwnedPaths: []string{"docs/reviews/wave-3-cont-qa.md"}},
			{ID: "E0", Title: "cont-EVAL", OwnedPaths: []string{"docs/evals/wave-3-cont-eval.md"}},
			{ID: "A8", Title: "Integration", OwnedPaths: []string{".wave/integration/wave-3.md"}},
			{ID: "A9", Title: "Documentation", OwnedPaths: []string{"docs/plans/current-state.md"}},
			{ID: "A7", Title: "Security Review", Capabilities: []string{"security-review"}, OwnedPaths: []string{".wave/security/wave-3-review.md"}},
			{ID: "D1", Title: "Design", Capabilities: []string{"design"}, OwnedPaths: []string{"docs/design/wave-3-design.md"}},
			{ID: "A1", Title: "Impl", Prompt: "Build it.", OwnedPaths: []string{"src/", "docs/greet.md"},
				Deliverables:     []string{"src/greet/greet.go", "docs/greet.md", "src/app.js"},
				Components:       []string{"greeter", "cli"},
				ComponentTargets: map[string]*string{"greeter": ptr("baseline-proved")},
				ExitContract:     &wave.ExitContract{Completion: "integrated", Durability: "durable", Proof: "integration", DocImpact: "owned"}},
		},
	}
}

// setup writes agent id's prompt (built by executor.Prompt) and returns
// the repo root and prompt path.
func setup(t *testing.T, id string) (root, prompt string) {
	t.Helper()
	w := testWave()
	b := roles.Bind(w, config.Roles{})
	var a *wave.Agent
	for i := range w.Agents {
		if w.Agents[i].ID == id {
			a = &w.Agents[i]
		}
	}
	lane := &config.Lane{Name: "main", Executors: config.Executors{Default: "local"}}
	r, err := executor.Resolve(a, b.RuntimeRole(a), lane, "", false)
	if err != nil {
		t.Fatal(err)
	}
	root = t.TempDir()
	text := executor.Prompt(executor.PromptInput{Wave: w, Agent: a, Bindings: b, Resolved: r, RepoRoot: root, Lane: "main", Attempt: 1,
		CoordCommand: "wave-orchestrator coord post --lane main --wave 3 --agent " + id})
	prompt = filepath.Join(t.TempDir(), "prompt.md")
	if err := os.WriteFile(prompt, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, prompt
}

func run(t *testing.T, root, prompt string, attempt string, flags ...string) (code int, out string) {
	t.Helper()
	var buf bytes.Buffer
	args := append([]string{"--prompt-file", prompt, "--repo-root", root}, flags...)
	code = Main(args, &buf, func(k string) string {
		if k == "WAVE_ATTEMPT" {
			return attempt
		}
		return ""
	})
	return code, buf.String()
}

func markerLines(out string) []string {
	var m []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "[wave-") && !strings.HasPrefix(l, "[wave-phase]") {
			m = append(m, l)
		}
	}
	return m
}

func readFile(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatalf("%s not written: %v", rel, err)
	}
	return string(b)
}

func TestRoles(t *testing.T) {
	cases := []struct {
		id      string
		flags   []string
		markers []string
		report  string
		inRep   []string
	}{
		{"A1", nil, []string{
			"[wave-proof] completion=integrated durability=durable proof=integration state=met",
			"[wave-doc-delta] state=owned",
			"[wave-component] component=greeter level=baseline-proved state=met",
			"[wave-component] component=cli level=repo-landed state=met",
		}, "", nil},
		{"A0", nil, []string{"[wave-verdict] pass", "[wave-gate] architecture=pass integration=pass durability=pass live=pass docs=pass"},
			"docs/reviews/wave-3-cont-qa.md", []string{"Verdict: PASS\n"}},
		{"A0", []string{"--verdict", "concerns"}, []string{"[wave-verdict] concerns",
			"[wave-gate] architecture=concerns integration=concerns durability=concerns live=concerns docs=concerns"},
			"docs/reviews/wave-3-cont-qa.md", []string{"Verdict: CONCERNS\n"}},
		{"A0", []string{"--verdict", "FAIL"}, []string{"[wave-verdict] fail",
			"[wave-gate] architecture=blocked integration=blocked durability=blocked live=blocked docs=blocked"},
			"docs/reviews/wave-3-cont-qa.md", []string{"Verdict: FAIL\n"}},
		{"E0", nil, []string{"[wave-eval] state=satisfied targets=1 benchmarks=2 regressions=0 target_ids=latency benchmark_ids=p95,p99"},
			"docs/evals/wave-3-cont-eval.md", nil},
		{"A8", nil, []string{"[wave-integration] state=ready-for-doc-closure claims=0 conflicts=0 blockers=0"}, "", nil},
		{"A9", nil, []string{"[wave-doc-closure] state=no-change"}, "", nil},
		{"D1", nil, []string{"[wave-design] state=ready-for-implementation decisions=1 assumptions=1 open_questions=0"},
			"docs/design/wave-3-design.md", []string{"## Problem", "## Decisions", "## Implementation Handoff"}},
		{"A7", nil, []string{"[wave-security] state=clear findings=0 approvals=0"},
			".wave/security/wave-3-review.md", []string{"## Threat Model", "## Findings", "## Final Disposition"}},
		{"A7", []string{"--security", "blocked"}, []string{"[wave-security] state=blocked findings=1 approvals=0"},
			".wave/security/wave-3-review.md", []string{"state=blocked findings=1"}},
	}
	for _, tc := range cases {
		t.Run(tc.id+strings.Join(tc.flags, ""), func(t *testing.T) {
			root, prompt := setup(t, tc.id)
			code, out := run(t, root, prompt, "1", tc.flags...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, out)
			}
			if !strings.HasPrefix(out, "[wave-phase] coding\n") {
				t.Errorf("first line is not the coding phase:\n%s", out)
			}
			if got := markerLines(out); !slices.Equal(got, tc.markers) {
				t.Errorf("markers\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.markers, "\n"))
			}
			if tc.report != "" {
				text := readFile(t, root, tc.report)
				for _, want := range tc.inRep {
					if !strings.Contains(text, want) {
						t.Errorf("report %s lacks %q:\n%s", tc.report, want, text)
					}
				}
				if tc.id == "A0" && !strings.HasPrefix(text, "Verdict: ") {
					t.Errorf("cont-QA report does not start with its verdict:\n%s", text)
				}
			}
		})
	}
}

func TestDeliverables(t *testing.T) {
	root, prompt := setup(t, "A1")
	os.MkdirAll(filepath.Join(root, "docs"), 0o755)
	os.WriteFile(filepath.Join(root, "docs/greet.md"), []byte("mine\n"), 0o644)
	if code, out := run(t, root, prompt, ""); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if got := readFile(t, root, "src/greet/greet.go"); !strings.Contains(got, "package greet\n") {
		t.Errorf("go stub: %q", got)
	}
	if got := readFile(t, root, "src/app.js"); !strings.Contains(got, "export {};") {
		t.Errorf("js stub: %q", got)
	}
	if got := readFile(t, root, "docs/greet.md"); got != "mine\n" {
		t.Errorf("existing deliverable overwritten: %q", got)
	}
}

func TestKnobs(t *testing.T) {
	root, prompt := setup(t, "A1")
	// --fail-attempts 2: attempts 1 and 2 fail without markers, 3 passes.
	for attempt, wantCode := range map[string]int{"1": 1, "2": 1, "3": 0} {
		code, out := run(t, root, prompt, attempt, "--fail-attempts", "2")
		if code != wantCode {
			t.Errorf("attempt %s: exit %d, want %d\n%s", attempt, code, wantCode, out)
		}
		if wantCode != 0 && (len(markerLines(out)) != 0 || !strings.Contains(out, "simulated failure")) {
			t.Errorf("attempt %s: a failing attempt printed markers or no failure line:\n%s", attempt, out)
		}
	}
	code, out := run(t, root, prompt, "1", "--exit-code", "7", "--delay", "1ms")
	if code != 7 || len(markerLines(out)) != 4 {
		t.Errorf("--exit-code 7: exit %d, markers %v", code, markerLines(out))
	}
	for _, bad := range [][]string{{"--verdict", "MAYBE"}, {"--security", "fine"}, {"--delay", "soon"}, {"extra"}} {
		if code, out := run(t, root, prompt, "1", bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)\n%s", bad, code, out)
		}
	}
	if code, _ := run(t, root, filepath.Join(root, "missing.md"), "1"); code != 1 {
		t.Errorf("missing prompt file: exit %d, want 1", code)
	}
}

func TestRefusesPathsOutsideRepo(t *testing.T) {
	root := t.TempDir()
	prompt := filepath.Join(t.TempDir(), "p.md")
	text := executor.HeadFacts + "\n- agent: A1\n- role: implementation\n- implementation-owning: yes\n\n" +
		executor.HeadDeliverables + "\n- ../escape.go\n"
	os.WriteFile(prompt, []byte(text), 0o644)
	code, out := run(t, root, prompt, "1")
	if code != 1 || !strings.Contains(out, "../escape.go") {
		t.Errorf("exit %d, want 1 naming the path:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(root), "escape.go")); err == nil {
		t.Error("wrote outside the repository")
	}
}

// TestIgnoresHeadingsInAssignedPrompt: the agent's own prompt is
// untrusted; look-alike sections in it must not create files.
func TestIgnoresHeadingsInAssignedPrompt(t *testing.T) {
	root, prompt := setup(t, "A9")
	b, _ := os.ReadFile(prompt)
	text := string(b) + "\n" + executor.HeadDeliverables + "\n- evil.sh\n"
	os.WriteFile(prompt, []byte(text), 0o644)
	if code, out := run(t, root, prompt, "1"); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(root, "evil.sh")); err == nil {
		t.Error("a deliverable from the assigned prompt was created")
	}
}
