package wave

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"testing"
)

// roleDocs is a ReadFile over role prompt documents held in memory.
func roleDocs(extra map[string]string) func(string) ([]byte, error) {
	docs := map[string]string{}
	for _, r := range []string{"cont-qa", "cont-eval", "integration", "documentation", "security", "design"} {
		docs["docs/agents/wave-"+r+"-role.md"] = "# Role\n\n## Standing prompt\n\n```text\nYou are the " + r + " role.\n```\n\n## Notes\n"
	}
	for k, v := range extra {
		docs[k] = v
	}
	return func(p string) ([]byte, error) {
		if s, ok := docs[p]; ok {
			return []byte(s), nil
		}
		return nil, fmt.Errorf("open %s: %w", p, fs.ErrNotExist)
	}
}

func parseFixture(t *testing.T) *Wave {
	t.Helper()
	b, err := os.ReadFile("testdata/wave-3.md")
	if err != nil {
		t.Fatal(err)
	}
	w, err := Parse("docs/plans/waves/wave-3.md", b, Options{ReadFile: roleDocs(nil)})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestParseTopLevelSections(t *testing.T) {
	w := parseFixture(t)
	tests := []struct {
		name string
		got  any
		want string
	}{
		{"wave", w.Number, `3`},
		{"file", w.File, `"docs/plans/waves/wave-3.md"`},
		{"commit", w.CommitMessage, `"Feat: everything"`},
		{"promotions", w.ComponentPromotions, `[{"componentId":"api-core","targetLevel":"pilot-live"},{"componentId":"docs-site","targetLevel":"repo-landed"}]`},
		{"deploy", w.DeployEnvironments, `[{"id":"staging","kind":"docker-compose","isDefault":false,"notes":"local stack"},{"id":"prod","kind":"kubernetes","isDefault":true,"notes":null}]`},
		{"evals", w.EvalTargets, `[{"id":"latency","selection":"pinned","benchmarkFamily":null,"benchmarks":["p50","p99"],"objective":"keep it fast","threshold":"p99 \u003c 200ms"},{"id":"quality","selection":"delegated","benchmarkFamily":"review","benchmarks":[],"objective":"review quality","threshold":"no regressions"}]`},
		{"context7 defaults", w.Context7Defaults, `{"bundle":"go-stdlib","query":"net/http server shutdown"}`},
		{"agent ids", ids(w), `["A0","E0","A1","A2","A3","A4","A5","A7"]`},
		{"cont-qa report", w.ContQaReportPath, `"docs/reviews/wave-3-cont-qa.md"`},
		{"cont-eval report", w.ContEvalReportPath, `"docs/evals/wave-3-eval.md"`},
	}
	for _, tt := range tests {
		if got := js(tt.got); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func ids(w *Wave) []string {
	var out []string
	for _, a := range w.Agents {
		out = append(out, a.ID)
	}
	return out
}

func TestParseAgentSubsections(t *testing.T) {
	w := parseFixture(t)
	a1, a2, a3, a4, a5, a7 := w.agent("A1"), w.agent("A2"), w.agent("A3"), w.agent("A4"), w.agent("A5"), w.agent("A7")
	tests := []struct {
		name string
		got  any
		want string
	}{
		{"title", a1.Title, `"API core"`},
		{"slug", a1.Slug, `"3-a1"`},
		{"header line", a1.Line, `51`},
		{"role prompts unquoted", w.agent("E0").RolePromptPaths, `["docs/agents/wave-cont-eval-role.md"]`},
		{"design capability added", a1.Capabilities, `["api","infra-k8s","design"]`},
		{"security capability added", a7.Capabilities, `["security-review"]`},
		{"context7", a1.Context7, `{"bundle":"go-stdlib","query":null}`},
		{"components", a1.Components, `["api-core"]`},
		{"component targets", a1.ComponentTargets, `{"api-core":"pilot-live"}`},
		{"skills lowercased", a1.Skills, `["role-design","tui-design"]`},
		{"exit contract", a1.ExitContract, `{"completion":"live","durability":"durable","proof":"live","docImpact":"shared-plan"}`},
		{"deliverables", a1.Deliverables, `["cmd/api/main.go","internal/api/server.go"]`},
		{"proof artifacts", a1.ProofArtifacts, `[{"path":"internal/api/proof.json","kind":null,"requiredFor":[]},{"path":".tmp/proof/run.json","kind":"command-output","requiredFor":["pilot-live","qa-proved"]}]`},
		{"owned paths", a1.OwnedPaths, `["cmd/api/main.go","internal/api/","docs/design/api-handoff.md",".tmp/proof/"]`},
		{"claude executor", a1.Executor, `{"id":"claude","profile":"deep-review","model":"claude-opus","fallbacks":["codex","opencode"],"tags":["api","core"],"budget":{"turns":40,"minutes":30},"retryPolicy":"sticky","allowFallbackOnRetry":true,"codex":null,"claude":{"command":"claude","agent":"reviewer","permissionMode":"plan","permissionPromptTool":"mcp__perm","effort":"high","maxTurns":12,"mcpConfig":["a.json","b.json"],"settings":".claude/settings.json","settingsJson":{"model":"x"},"hooksJson":{"PreToolUse":[]},"allowedHttpHookUrls":["https://a.example"],"outputFormat":"stream-json","allowedTools":["Read","Edit"],"disallowedTools":["Bash"]},"opencode":null}`},
		{"codex executor", a2.Executor.Codex, `{"command":"codex","sandbox":"workspace-write","profileName":"fast","config":["a=1","b=2"],"search":true,"images":["x.png"],"addDirs":["../other"],"json":false,"ephemeral":true}`},
		{"opencode executor", a3.Executor.Opencode, `{"command":"opencode","agent":"build","attach":"http://localhost:4096","files":["a.go","b.go"],"format":"json","steps":7,"instructions":["AGENTS.md"],"permission":{"edit":"allow"},"configJson":{"x":1}}`},
		{"local executor", a4.Executor.Local, `{"delay":"150ms","exitCode":3,"failAttempts":2,"verdict":"FAIL","security":"concerns"}`},
		{"shell executor", a5.Executor.Shell, `{"command":"make test PROMPT={prompt_file}"}`},
		{"no executor section", w.agent("A0").Executor, `null`},
		{"no exit contract", a2.ExitContract, `null`},
	}
	for _, tt := range tests {
		if got := js(tt.got); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestComposedPrompt(t *testing.T) {
	w := parseFixture(t)
	want := "You are the design role.\n\nBuild the API.\n## Agent X9: not a header (inside the fence)\n### Deliverables\n- not/a/deliverable.go\n\nFile ownership (only touch these paths):\n- cmd/api/main.go\n- `internal/api/`\n- \"docs/design/api-handoff.md\"\n- 'internal/api/'\n- .tmp/proof/\nNotes:\n- not/owned.go"
	if got := w.agent("A1").Prompt; got != want {
		t.Errorf("prompt:\n%q\nwant\n%q", got, want)
	}
	if got := w.agent("A2").Prompt; got != "Work.\n\nFile ownership:\n- src/" {
		t.Errorf("prompt without role prompts = %q", got)
	}
	if got := ComposePrompt([]string{"a", "", "b"}, "local"); got != "a\n\nb\n\nlocal" {
		t.Errorf("ComposePrompt = %q", got)
	}
}

func TestStructureInsideFencesIsText(t *testing.T) {
	w := parseFixture(t)
	if w.agent("X9") != nil {
		t.Error("a ## Agent line inside a fence became an agent")
	}
	if got := w.agent("A1").Deliverables; contains(got, "not/a/deliverable.go") {
		t.Errorf("a ### Deliverables inside a fence was read: %v", got)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestOwnedPaths(t *testing.T) {
	tests := []struct {
		name, prompt string
		want         []string
	}{
		{"plain", "File ownership:\n- a.go\n- b/", []string{"a.go", "b/"}},
		{"backticks and quotes", "File ownership (only these):\n- `a.go`\n- \"b/c.go\"\n- 'd/'", []string{"a.go", "b/c.go", "d/"}},
		{"case-insensitive start", "file OWNERSHIP\n- x", []string{"x"}},
		{"ends at label line", "File ownership:\n- a\nRequired context:\n- b", []string{"a"}},
		{"label with trailing spaces ends", "File ownership:\n- a\nNotes:   \n- b", []string{"a"}},
		{"non-bullets skipped", "File ownership:\nsome prose\n  - indented.go\n-nospace", []string{"indented.go"}},
		{"duplicates dropped", "File ownership:\n- a\n- `a`", []string{"a"}},
		{"none", "No ownership here\n- a", []string{}},
		{"crlf", "File ownership:\r\n- a.go\r\n", []string{"a.go"}},
		{"reopens", "File ownership:\n- a\nNext:\n- b\nFile ownership again\n- c", []string{"a", "c"}},
	}
	for _, tt := range tests {
		if got := OwnedPaths(tt.prompt); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: OwnedPaths = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestOwns(t *testing.T) {
	tests := []struct {
		owned, p string
		want     bool
	}{
		{"src/", "src/a.go", true},
		{"src/", "src", false},
		{"src/", "srcx/a.go", false},
		{"a.go", "a.go", true},
		{"./a.go", "a.go", true},
		{"a.go", "a.go.bak", false},
		{`src\`, "src/x", true},
		{"", "a", false},
	}
	for _, tt := range tests {
		if got := Owns(tt.owned, tt.p); got != tt.want {
			t.Errorf("Owns(%q, %q) = %v", tt.owned, tt.p, got)
		}
	}
}

func TestSlugify(t *testing.T) {
	tests := map[string]string{
		"0-A1":                   "0-a1",
		"12-Agent Ω/x":           "12-agent-x",
		"--x--":                  "x",
		strings.Repeat("ab", 40): strings.Repeat("ab", 24),
	}
	for in, want := range tests {
		if got := Slugify(in); got != want {
			t.Errorf("Slugify(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStandingPrompt(t *testing.T) {
	got, err := StandingPrompt("# R\n## Standing prompt\r\n\r\n```md\r\n  line one\r\nline two  \r\n```\r\n")
	if err != nil || got != "line one\r\nline two" {
		t.Errorf("StandingPrompt = %q, %v", got, err)
	}
	if _, err := StandingPrompt("## Standing prompt\n\nno fence"); err == nil {
		t.Error("no fence: want error")
	}
	if _, err := StandingPrompt("```\nx\n```"); err == nil {
		t.Error("no section: want error")
	}
}

func TestLoadDirSortsNumerically(t *testing.T) {
	root := t.TempDir()
	dir := root + "/docs/plans/waves"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{10, 2, 1} {
		body := fmt.Sprintf("## Agent A1: W%d\n\n### Prompt\n```\nFile ownership:\n- a%d.go\n```\n", n, n)
		if err := os.WriteFile(fmt.Sprintf("%s/wave-%d.md", dir, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(dir+"/notes.md", []byte("ignored"), 0o644)
	waves, err := LoadDir(root, "docs/plans/waves", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, w := range waves {
		got = append(got, w.Number)
	}
	if !reflect.DeepEqual(got, []int{1, 2, 10}) || waves[2].File != "docs/plans/waves/wave-10.md" {
		t.Errorf("numbers = %v, file = %s", got, waves[2].File)
	}
	if _, err := LoadDir(t.TempDir(), ".", Options{}); err == nil || !strings.Contains(err.Error(), "no wave-<n>.md files") {
		t.Errorf("empty dir: err = %v", err)
	}
}

func TestLoadDirCollectsProblemsOfAllFiles(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(root+"/wave-1.md", []byte("   \n"), 0o644)
	os.WriteFile(root+"/wave-2.md", []byte("## Agent A1: x\n### Prompt\nno fence\n"), 0o644)
	_, err := LoadDir(root, ".", Options{})
	var e *Error
	if !errors.As(err, &e) || !e.Has("empty-file") || !e.Has("missing-prompt-fence") {
		t.Fatalf("err = %v", err)
	}
}

// shell.command is ours: a template ending in a quote keeps it (the
// reference's edge-quote stripping would break `sh -c "…"`), and a
// whole-value backtick wrapping is removed.
func TestShellCommandKeepsEdgeQuotes(t *testing.T) {
	for value, want := range map[string]string{
		`sh -c "my-agent --prompt {prompt_file}"`: `sh -c "my-agent --prompt {prompt_file}"`,
		"`my-agent {prompt_file}`":                "my-agent {prompt_file}",
		`'quoted' first`:                          `'quoted' first`,
	} {
		src := "## Agent A1: One\n\n### Executor\n- id: shell\n- shell.command: " + value +
			"\n\n### Prompt\n```text\nGo.\n\nFile ownership (only touch these paths):\n- src/a.txt\n```\n"
		w, err := Parse("docs/plans/waves/wave-1.md", []byte(src), Options{ReadFile: roleDocs(nil)})
		if err != nil {
			t.Fatalf("%s: %v", value, err)
		}
		if got := *w.Agents[0].Executor.Shell.Command; got != want {
			t.Errorf("shell.command %s → %q, want %q", value, got, want)
		}
	}
}

// A file in the waves directory named like a wave but not wave-<n>.md
// would never run: it is a problem with the name it probably meant, not
// skipped without a word. Other files stay ignored.
func TestAMisnamedWaveFileIsReportedWithTheNameItMeant(t *testing.T) {
	root := t.TempDir()
	dir := root + "/docs/plans/waves"
	if err := os.MkdirAll(dir+"/reviews", 0o755); err != nil {
		t.Fatal(err)
	}
	ok := "## Agent A1: W\n\n### Prompt\n```\nFile ownership:\n- a.go\n```\n"
	for name, body := range map[string]string{
		"wave-0.md": ok, "wave-one.md": ok, "Wave_2.md": ok, "wave3.MD": ok, "wave-plan.md": "notes",
		"notes.md": "ignored", "wave-0.md.bak": "ignored", "reviews/wave-0-cont-qa.md": "ignored",
	} {
		if err := os.WriteFile(dir+"/"+name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := LoadDir(root, "docs/plans/waves", Options{})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want the misnamed files", err)
	}
	want := map[string]string{
		"docs/plans/waves/wave-one.md":  "rename it wave-1.md",
		"docs/plans/waves/Wave_2.md":    "rename it wave-2.md",
		"docs/plans/waves/wave3.MD":     "rename it wave-3.md",
		"docs/plans/waves/wave-plan.md": "rename it wave-<n>.md",
	}
	for _, p := range e.Problems {
		hint, ok := want[p.File]
		if !ok || p.Rule != "misnamed-wave-file" || !strings.Contains(p.Msg, hint+", or move it out of docs/plans/waves") {
			t.Errorf("unexpected problem %s", p)
		}
		delete(want, p.File)
	}
	if len(want) > 0 {
		t.Errorf("not reported: %v\n%v", want, err)
	}
}
