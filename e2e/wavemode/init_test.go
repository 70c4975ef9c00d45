package wavemode

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"

	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter/tmuxtest"
)

// bareRepo is an empty git repository: what a user has before `init`.
func bareRepo(t *testing.T) *e2etest.Repo {
	t.Helper()
	root := t.TempDir()
	gittest.Init(t, root)
	r := &e2etest.Repo{T: t, Root: root}
	t.Cleanup(r.CleanupTmux)
	return r
}

// realExecutorsWave is a wave whose workers run claude and codex, with a
// prompt full of shell metacharacters that must reach the agent verbatim.
const realExecutorsWave = "# Wave 1 - Real executors\n\n" +
	"## Agent A1: Claude worker\n\n### Executor\n- id: claude\n- model: claude-sonnet-4-5\n- claude.allowed_tools: Read,Edit\n- budget.turns: 9\n\n" +
	"### Prompt\n```text\nEdit \"src/a.txt\"; don't run `rm -rf /` or $(whoami).\n\nFile ownership:\n- src/a.txt\n```\n\n" +
	"## Agent A2: Codex worker\n\n### Executor\n- id: codex\n- codex.sandbox: workspace-write\n\n" +
	"### Prompt\n```text\nWrite src/b.txt.\n\nFile ownership:\n- src/b.txt\n```\n\n" +
	"## Agent A8: Integration\n\n### Role prompts\n- docs/agents/wave-integration-role.md\n\n### Executor\n- id: local\n\n" +
	"### Prompt\n```text\nIntegrate.\n\nFile ownership:\n- docs/plans/waves/reviews/wave-1-integration.md\n```\n\n" +
	"## Agent A9: Docs\n\n### Role prompts\n- docs/agents/wave-documentation-role.md\n\n### Executor\n- id: local\n\n" +
	"### Prompt\n```text\nDocs.\n\nFile ownership:\n- docs/plans/current-state.md\n- docs/plans/master-plan.md\n- docs/plans/migration.md\n```\n\n" +
	"## Agent A0: cont-QA\n\n### Role prompts\n- docs/agents/wave-cont-qa-role.md\n\n### Executor\n- id: local\n\n" +
	"### Prompt\n```text\nJudge.\n\nFile ownership:\n- docs/plans/waves/reviews/wave-1-cont-qa.md\n```\n"

// manifestView is the part of the manifest a user checks after a dry run.
type manifestView struct {
	Waves []struct {
		Wave                 int      `json:"wave"`
		File                 string   `json:"file"`
		Lane                 string   `json:"lane"`
		ContQaAgentID        string   `json:"contQaAgentId"`
		IntegrationAgentID   string   `json:"integrationAgentId"`
		DocumentationAgentID string   `json:"documentationAgentId"`
		ClosureAgentIDs      []string `json:"closureAgentIds"`
		ContQaReportPath     *string  `json:"contQaReportPath"`
		Agents               []struct {
			AgentID          string   `json:"agentId"`
			Slug             string   `json:"slug"`
			OwnedPaths       []string `json:"ownedPaths"`
			Deliverables     []string `json:"deliverables"`
			RolePromptPaths  []string `json:"rolePromptPaths"`
			Prompt           string   `json:"prompt"`
			ExecutorResolved struct {
				ID   string `json:"id"`
				Role string `json:"role"`
			} `json:"executorResolved"`
		} `json:"agents"`
	} `json:"waves"`
	Docs []struct {
		Path string `json:"path"`
	} `json:"docs"`
}

// preview is the dry-run launch.json fields that say what would run.
type preview struct {
	AgentID     string            `json:"agentId"`
	ExecutorID  string            `json:"executorId"`
	Argv        []string          `json:"argv"`
	Env         map[string]string `json:"env"`
	Stdin       string            `json:"stdin"`
	Cwd         string            `json:"cwd"`
	PromptPath  string            `json:"promptPath"`
	SessionName string            `json:"sessionName"`
}

// Not parallel: it checks that no tmux server at all is live after the
// dry run, which holds only while no other test runs.
func TestInitDoctorDryRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := bareRepo(t)

	res := r.Run(ctx, "init")
	if res.Code != 0 {
		t.Fatalf("init: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, f := range []string{"wave.config.yaml", "docs/plans/waves/wave-0.md", "docs/agents/wave-cont-qa-role.md"} {
		if !strings.Contains(res.Stdout, "wrote "+f) {
			t.Errorf("init output does not list %s:\n%s", f, res.Stdout)
		}
	}
	res = r.Run(ctx, "doctor")
	if res.Code != 0 {
		t.Fatalf("doctor on a fresh init: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stdout, "waves: 1 valid wave file(s)") {
		t.Errorf("doctor does not report the scaffolded wave as valid:\n%s", res.Stdout)
	}

	r.Write("docs/plans/waves/wave-1.md", realExecutorsWave)
	out := filepath.Join(r.Root, "out", "manifest.json")
	res = r.Run(ctx, "launch", "--lane", "main", "--dry-run", "--manifest-out", out)
	if res.Code != 0 {
		t.Fatalf("launch --dry-run: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	var m manifestView
	e2etest.ReadJSONFile(t, out, &m)
	if len(m.Waves) != 2 {
		t.Fatalf("manifest has %d waves, want 2 (wave-0 from init and wave-1)", len(m.Waves))
	}
	type agentRow struct{ id, executor, role, slug string }
	want := map[int][]agentRow{
		0: {{"A1", "local", "implementation", "0-a1"}, {"A2", "local", "implementation", "0-a2"},
			{"A8", "local", "integration", "0-a8"}, {"A9", "local", "documentation", "0-a9"}, {"A0", "local", "cont-qa", "0-a0"}},
		1: {{"A1", "claude", "implementation", "1-a1"}, {"A2", "codex", "implementation", "1-a2"},
			{"A8", "local", "integration", "1-a8"}, {"A9", "local", "documentation", "1-a9"}, {"A0", "local", "cont-qa", "1-a0"}},
	}
	for _, w := range m.Waves {
		if w.Lane != "main" || w.ContQaAgentID != "A0" || w.IntegrationAgentID != "A8" || w.DocumentationAgentID != "A9" {
			t.Errorf("wave %d: lane %q, closure agents %s/%s/%s; want main, A0/A8/A9", w.Wave, w.Lane, w.ContQaAgentID, w.IntegrationAgentID, w.DocumentationAgentID)
		}
		if wantFile := "docs/plans/waves/wave-" + strconv.Itoa(w.Wave) + ".md"; w.File != wantFile {
			t.Errorf("wave %d: file %q, want %q", w.Wave, w.File, wantFile)
		}
		if w.ContQaReportPath == nil || !strings.HasSuffix(*w.ContQaReportPath, "cont-qa.md") {
			t.Errorf("wave %d: contQaReportPath %v, want the cont-QA agent's review file", w.Wave, w.ContQaReportPath)
		}
		var got []agentRow
		for _, a := range w.Agents {
			got = append(got, agentRow{a.AgentID, a.ExecutorResolved.ID, a.ExecutorResolved.Role, a.Slug})
		}
		if !reflect.DeepEqual(got, want[w.Wave]) {
			t.Errorf("wave %d agents:\n got %v\nwant %v", w.Wave, got, want[w.Wave])
		}
	}
	w0 := m.Waves[0]
	if a := w0.Agents[0]; !reflect.DeepEqual(a.OwnedPaths, []string{"src/hello.txt"}) || !reflect.DeepEqual(a.Deliverables, []string{"src/hello.txt"}) {
		t.Errorf("wave 0 A1 owns %v, delivers %v; want src/hello.txt", a.OwnedPaths, a.Deliverables)
	}
	if a := w0.Agents[4]; !reflect.DeepEqual(a.RolePromptPaths, []string{"docs/agents/wave-cont-qa-role.md"}) || !strings.Contains(a.Prompt, "Decide whether wave 0 is done") {
		t.Errorf("wave 0 A0: role prompts %v, prompt %q", a.RolePromptPaths, a.Prompt)
	}
	if !slices.ContainsFunc(m.Docs, func(d struct {
		Path string `json:"path"`
	}) bool {
		return d.Path == "docs/plans/waves/wave-1.md"
	}) {
		t.Errorf("manifest docs do not list docs/plans/waves/wave-1.md")
	}

	runs := func(wave int) string {
		return filepath.Join(r.Root, ".wave", "lanes", "main", "dry-run", "waves", strconv.Itoa(wave), "runs")
	}
	envFor := func(wave int, id, executor string) map[string]string {
		dir := filepath.Join(runs(wave), id+"-a1")
		return map[string]string{
			"WAVE_AGENT_ID":    id,
			"WAVE_ATTEMPT":     "1",
			"WAVE_EXECUTOR":    executor,
			"WAVE_LANE":        "main",
			"WAVE_NUMBER":      strconv.Itoa(wave),
			"WAVE_PROMPT_FILE": filepath.Join(dir, "prompt.md"),
			"WAVE_RUN_DIR":     dir,
			// Its name looks secret to launch.json's redaction;
			// launch-preview.json shows the default value.
			"LPM_AUTH_STICKY_KEY": "<redacted>",
		}
	}
	read := func(wave int, id string) preview {
		var p preview
		e2etest.ReadJSONFile(t, filepath.Join(runs(wave), id+"-a1", "launch.json"), &p)
		return p
	}

	// Scaffolded wave 0: the built-in local agent, i.e. this binary.
	for _, id := range []string{"A1", "A2", "A8", "A9", "A0"} {
		p := read(0, id)
		prompt := filepath.Join(runs(0), id+"-a1", "prompt.md")
		argv := []string{e2etest.Bin(), "local", "--prompt-file", prompt}
		if id == "A1" {
			argv = append(argv, "--delay", "1s") // local.delay: 1s in the scaffold
		}
		if !reflect.DeepEqual(p.Argv, argv) {
			t.Errorf("wave 0 %s argv:\n got %q\nwant %q", id, p.Argv, argv)
		}
		if want := envFor(0, id, "local"); !reflect.DeepEqual(p.Env, want) {
			t.Errorf("wave 0 %s env:\n got %v\nwant %v", id, p.Env, want)
		}
		if p.Cwd != r.Root || p.SessionName != "w0-"+id || p.PromptPath != prompt {
			t.Errorf("wave 0 %s: cwd %q session %q prompt %q", id, p.Cwd, p.SessionName, p.PromptPath)
		}
	}

	// Wave 1: claude gets the whole prompt as its last argument, verbatim.
	claude := read(1, "A1")
	dir := filepath.Join(runs(1), "A1-a1")
	prompt, err := os.ReadFile(filepath.Join(dir, "prompt.md"))
	if err != nil {
		t.Fatal(err)
	}
	wantClaude := []string{"claude", "-p", "--no-session-persistence", "--output-format", "text",
		"--model", "claude-sonnet-4-5", "--permission-mode", "bypassPermissions", "--max-turns", "9",
		"--allowedTools", "Read", "--allowedTools", "Edit",
		"--append-system-prompt-file", filepath.Join(dir, "claude-system-prompt.txt"), string(prompt)}
	if !reflect.DeepEqual(claude.Argv, wantClaude) {
		t.Errorf("wave 1 A1 claude argv:\n got %q\nwant %q", claude.Argv, wantClaude)
	}
	if !strings.Contains(string(prompt), "Edit \"src/a.txt\"; don't run `rm -rf /` or $(whoami).") {
		t.Errorf("claude prompt lost the wave's prompt text:\n%s", prompt)
	}
	if want := envFor(1, "A1", "claude"); !reflect.DeepEqual(claude.Env, want) {
		t.Errorf("wave 1 A1 env:\n got %v\nwant %v", claude.Env, want)
	}
	// codex reads the prompt from stdin.
	codex := read(1, "A2")
	// A sandbox was asked for, so codex must not be told to bypass it.
	wantCodex := []string{"codex", "exec", "--skip-git-repo-check", "--sandbox", "workspace-write", "-"}
	if !reflect.DeepEqual(codex.Argv, wantCodex) {
		t.Errorf("wave 1 A2 codex argv:\n got %q\nwant %q", codex.Argv, wantCodex)
	}
	if codex.Stdin != filepath.Join(runs(1), "A2-a1", "prompt.md") {
		t.Errorf("wave 1 A2 stdin %q, want its prompt file", codex.Stdin)
	}
	if want := envFor(1, "A2", "codex"); !reflect.DeepEqual(codex.Env, want) {
		t.Errorf("wave 1 A2 env:\n got %v\nwant %v", codex.Env, want)
	}
	if sessions := tmuxtest.Live(e2etest.TmuxDir()); len(sessions) > 0 {
		t.Errorf("a dry run started tmux servers: %v", sessions)
	}
}

func TestInitTwiceRefusesAndNamesFiles(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := bareRepo(t)
	if res := r.Run(ctx, "init"); res.Code != 0 {
		t.Fatalf("init: exit %d\n%s", res.Code, res.Stderr)
	}
	r.Write("docs/plans/waves/wave-0.md", "# my own wave\n")
	res := r.Run(ctx, "init")
	if res.Code == 0 {
		t.Fatalf("second init without --force succeeded:\n%s", res.Stdout)
	}
	for _, f := range []string{"wave.config.yaml", "docs/plans/waves/wave-0.md", "docs/agents/wave-cont-qa-role.md"} {
		if !strings.Contains(res.Stderr, f) {
			t.Errorf("second init error does not name %s:\n%s", f, res.Stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(r.Root, "docs/plans/waves/wave-0.md")); string(b) != "# my own wave\n" {
		t.Errorf("second init overwrote the user's wave-0.md:\n%s", b)
	}
	if res := r.Run(ctx, "init", "--force"); res.Code != 0 {
		t.Fatalf("init --force: exit %d\n%s", res.Code, res.Stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(r.Root, "docs/plans/waves/wave-0.md")); string(b) == "# my own wave\n" {
		t.Errorf("init --force left wave-0.md unchanged")
	}
}

// pathWithout is a PATH of one directory holding links to tmux and git
// only, so an executor command such as claude is missing.
func pathWithout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, tool := range []string{"tmux", "git"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s not on PATH: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestDoctorMissingExecutor(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := bareRepo(t)
	if res := r.Run(ctx, "init"); res.Code != 0 {
		t.Fatalf("init: exit %d\n%s", res.Code, res.Stderr)
	}
	r.Write("docs/plans/waves/wave-1.md", realExecutorsWave)
	cmd := r.Command(ctx, "doctor")
	cmd.Env = append(cmd.Env, "PATH="+pathWithout(t))
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("doctor with claude missing: %v, want exit 1\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"executor claude: not on PATH (needed by wave 1 A1)", "executor codex: not on PATH (needed by wave 1 A2)", "tmux: tmux"} {
		if !strings.Contains(text, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, text)
		}
	}
}

func TestDoctorBadWaveFile(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := bareRepo(t)
	if res := r.Run(ctx, "init"); res.Code != 0 {
		t.Fatalf("init: exit %d\n%s", res.Code, res.Stderr)
	}
	r.Write("docs/plans/waves/wave-1.md", strings.Replace(realExecutorsWave, "- id: codex\n", "- id: codex\n- codex.turbo: yes\n", 1))
	res := r.Run(ctx, "doctor")
	if res.Code != 1 {
		t.Fatalf("doctor on a bad wave: exit %d, want 1\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	line := 1 + strings.Count(realExecutorsWave[:strings.Index(realExecutorsWave, "- id: codex\n")], "\n") + 1
	want := "docs/plans/waves/wave-1.md:" + strconv.Itoa(line) + ": agent A2: unknown-executor-key"
	if !strings.Contains(res.Stdout, want) {
		t.Errorf("doctor output lacks %q:\n%s", want, res.Stdout)
	}
}
