package executor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

type specCase struct {
	name  string
	agent func(a *wave.Agent)
	lane  func(l *config.Lane)
	cli   string
	// fallback, when set, applies Fallback for attempt 2 with these
	// commands available before building.
	fallback []string
}

func specCases() []specCase {
	return []specCase{
		{name: "codex-reference-example"},
		{name: "codex-all-keys", agent: func(a *wave.Agent) {
			a.Executor.Codex = &wave.CodexConfig{Command: ptr("/opt/codex"), Sandbox: ptr("workspace-write"), ProfileName: ptr("ci"),
				Config: []string{"a=1", "model_reasoning_effort=medium"}, Search: ptr(true), Images: []string{"ui.png"},
				AddDirs: []string{"../shared"}, JSON: ptr(true), Ephemeral: ptr(true)}
		}, lane: func(l *config.Lane) {
			l.Executors.Codex = wave.CodexConfig{Config: []string{"a=1", "lane=1"}, AddDirs: []string{"/data"}}
			l.Executors.Env.Scrub = []string{"OPENAI_BASE_URL"}
		}},
		{name: "claude-lane-role-default-beats-cli", cli: "codex", agent: func(a *wave.Agent) {
			*a = testWave().Agents[0]
		}},
		{name: "claude-profile-budget-turns", agent: func(a *wave.Agent) {
			a.Executor = &wave.ExecutorConfig{Profile: ptr("deep-review")}
		}},
		{name: "claude-all-keys", agent: func(a *wave.Agent) {
			a.Executor = &wave.ExecutorConfig{ID: ptr("claude"), Model: ptr("claude-opus-4"), Claude: &wave.ClaudeConfig{
				Agent: ptr("reviewer"), PermissionMode: ptr("acceptEdits"), PermissionPromptTool: ptr("mcp__perm__ask"),
				Effort: ptr("max"), MaxTurns: ptr(12), McpConfig: []string{".mcp.json"}, Settings: ptr("claude-base.json"),
				SettingsJSON: map[string]any{"env": map[string]any{"B": "2"}}, HooksJSON: map[string]any{"Stop": []any{"echo done"}},
				AllowedHTTPHookURLs: []string{"https://hooks.example/*"}, OutputFormat: ptr("stream-json"),
				AllowedTools: []string{"Bash", "Read"}, DisallowedTools: []string{"WebFetch"}}}
		}, lane: func(l *config.Lane) {
			l.Executors.Claude.AppendSystemPromptMode = "replace"
			l.Executors.Claude.StrictMcpConfig = true
		}},
		{name: "opencode-all-keys", agent: func(a *wave.Agent) {
			a.Executor = &wave.ExecutorConfig{ID: ptr("opencode"), Model: ptr("anthropic/claude-sonnet-4"),
				Budget: &wave.Budget{Turns: ptr(25)}, Opencode: &wave.OpencodeConfig{
					Agent: ptr("Wave Builder!"), Attach: ptr("http://localhost:4096"), Files: []string{"docs/spec.md"},
					Format: ptr("json"), Instructions: []string{"AGENTS.md"}, Permission: map[string]any{"edit": "allow"},
					ConfigJSON: map[string]any{"instructions": []any{"base.md"}, "agent": map[string]any{"other": map[string]any{"mode": "subagent"}}}}}
		}},
		{name: "local-knobs", agent: func(a *wave.Agent) {
			a.Executor = &wave.ExecutorConfig{ID: ptr("local"), Local: &wave.LocalConfig{Delay: ptr("2s"), ExitCode: ptr(3),
				FailAttempts: ptr(1), Verdict: ptr("FAIL"), Security: ptr("blocked")}}
		}},
		{name: "shell-template", agent: func(a *wave.Agent) {
			a.Executor = &wave.ExecutorConfig{ID: ptr("shell"), Shell: &wave.ShellConfig{
				Command: ptr(`my-agent --prompt {prompt_file} --log={log} "wave {wave} / {agent}" --try {attempt} --dir {run_dir}`)}}
		}},
		{name: "retry-falls-back-to-claude", fallback: []string{"codex", "claude"}},
		{name: "retry-no-candidate-stays-on-codex", fallback: []string{"codex"}},
	}
}

func TestBuildGolden(t *testing.T) {
	for _, tc := range specCases() {
		t.Run(tc.name, func(t *testing.T) {
			root, run := t.TempDir(), t.TempDir()
			if err := os.WriteFile(filepath.Join(root, "claude-base.json"), []byte(`{"env":{"A":"1","B":"1"},"model":"x"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			promptPath := filepath.Join(run, "prompt.md")
			if err := os.WriteFile(promptPath, []byte("Say \"hi\" and $(do nothing).\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			w := testWave()
			a := implAgent()
			if tc.agent != nil {
				tc.agent(&a)
			}
			lane := testLane(root)
			if tc.lane != nil {
				tc.lane(lane)
			}
			role := bindings(w).RuntimeRole(&a)
			r, err := Resolve(&a, role, lane, tc.cli, false)
			if err != nil {
				t.Fatal(err)
			}
			if tc.fallback != nil {
				var blocked bool
				r, blocked = fallback(r, 2, "proof-gap", func(c string) bool { return slices.Contains(tc.fallback, c) })
				if blocked {
					t.Fatal("blocked")
				}
			}
			spec, err := Build(BuildInput{Agent: &a, Wave: w, Resolved: r, Lane: lane, RunDir: run, PromptPath: promptPath,
				LogPath: filepath.Join(run, "agent.log"), Attempt: 2, Self: "/usr/local/bin/wave-orchestrator"})
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]string{}
			for _, f := range spec.Files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatalf("overlay %s listed but unreadable: %v", f, err)
				}
				files[filepath.Base(f)] = string(b)
			}
			out := string(mustJSON(t, map[string]any{"resolved": r, "spec": spec, "files": files}))
			out = strings.ReplaceAll(strings.ReplaceAll(out, run, "$RUN"), root, "$REPO")
			golden(t, "spec/"+tc.name+".json", []byte(out))
		})
	}
}

func TestBuildLargePromptGoesToStdin(t *testing.T) {
	run := t.TempDir()
	promptPath := filepath.Join(run, "prompt.md")
	if err := os.WriteFile(promptPath, []byte(strings.Repeat("x", MaxArgPrompt+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{Claude, Opencode} {
		a := implAgent()
		a.Executor = &wave.ExecutorConfig{ID: ptr(id)}
		lane := testLane(t.TempDir())
		r, err := Resolve(&a, "implementation", lane, "", false)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := Build(BuildInput{Agent: &a, Wave: testWave(), Resolved: r, Lane: lane, RunDir: run, PromptPath: promptPath})
		if err != nil {
			t.Fatal(err)
		}
		if spec.Stdin != promptPath {
			t.Errorf("%s: Stdin = %q, want the prompt file", id, spec.Stdin)
		}
		for _, arg := range spec.Argv {
			if len(arg) > MaxArgPrompt {
				t.Errorf("%s: argv carries a %d-byte element", id, len(arg))
			}
		}
	}
}

func TestBuildErrorsNameAgentAndFile(t *testing.T) {
	a := implAgent()
	a.Executor = &wave.ExecutorConfig{ID: ptr("claude"), Claude: &wave.ClaudeConfig{Settings: ptr("missing.json"), HooksJSON: map[string]any{}}}
	lane := testLane(t.TempDir())
	r, err := Resolve(&a, "implementation", lane, "", false)
	if err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	os.WriteFile(filepath.Join(run, "p"), []byte("p"), 0o644)
	_, err = Build(BuildInput{Agent: &a, Wave: testWave(), Resolved: r, Lane: lane, RunDir: run, PromptPath: filepath.Join(run, "p")})
	if err == nil || !strings.Contains(err.Error(), "agent A1") || !strings.Contains(err.Error(), "missing.json") {
		t.Fatalf("err = %v, want one naming agent A1 and missing.json", err)
	}
	a.Executor = &wave.ExecutorConfig{ID: ptr("local")}
	r, _ = Resolve(&a, "implementation", lane, "", false)
	if _, err = Build(BuildInput{Agent: &a, Wave: testWave(), Resolved: r, Lane: lane, RunDir: run, PromptPath: "p"}); err == nil {
		t.Fatal("local without Self: want error")
	}
}

// codex lets --dangerously-bypass-approvals-and-sandbox override
// --sandbox: it goes only with danger-full-access (the default), never
// with a sandbox that was asked for.
func TestCodexBypassOnlyWithoutSandbox(t *testing.T) {
	for _, tc := range []struct {
		agent, lane string
		bypass      bool
	}{
		{"", "", true},
		{"danger-full-access", "", true},
		{"workspace-write", "", false},
		{"read-only", "", false},
		{"", "read-only", false},
		{"danger-full-access", "read-only", true},
	} {
		a := implAgent()
		a.Executor = &wave.ExecutorConfig{ID: ptr(Codex)}
		if tc.agent != "" {
			a.Executor.Codex = &wave.CodexConfig{Sandbox: ptr(tc.agent)}
		}
		lane := testLane(t.TempDir())
		if tc.lane != "" {
			lane.Executors.Codex.Sandbox = ptr(tc.lane)
		}
		r, err := Resolve(&a, "implementation", lane, "", false)
		if err != nil {
			t.Fatal(err)
		}
		argv := codexArgv(r)
		want := cmp(tc.agent, cmp(tc.lane, DefaultCodexSandbox))
		i := slices.Index(argv, "--sandbox")
		if i < 0 || argv[i+1] != want {
			t.Errorf("agent %q lane %q: argv %q, want --sandbox %s", tc.agent, tc.lane, argv, want)
		}
		if got := slices.Contains(argv, "--dangerously-bypass-approvals-and-sandbox"); got != tc.bypass {
			t.Errorf("agent %q lane %q: bypass = %v in %q", tc.agent, tc.lane, got, argv)
		}
	}
}
