package executor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// fakeVendor records its arguments (NUL-separated, exactly as received),
// its environment and its standard input, then exits 0. It is a shell
// script, but "$@" is expanded as words, never evaluated.
const fakeVendor = `#!/bin/sh
rec="$FAKE_REC/$(basename "$0")"
mkdir -p "$rec"
for a in "$@"; do printf '%s\0' "$a"; done > "$rec/argv"
env -0 > "$rec/env"
if [ -t 0 ]; then : > "$rec/stdin"; else cat > "$rec/stdin"; fi
echo "fake $(basename "$0") done"
`

// TestVendorsThroughRunner starts each vendor's launch spec through the
// real runner with fake claude/codex/opencode first on PATH and checks
// what the program received: the exact argv, no scrubbed variable, and
// the prompt byte for byte, hostile or 200 KB.
func TestVendorsThroughRunner(t *testing.T) {
	bin, rec := t.TempDir(), t.TempDir()
	for _, name := range []string{"claude", "codex", "opencode"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(fakeVendor), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_REC", rec)
	t.Setenv("ANTHROPIC_BASE_URL", "http://wrong.example")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Wrong: 1")
	t.Setenv("TMUX", "")

	hostile := "Say \"it's\" done; $(touch PWNED) `touch PWNED2` $HOME \\n\n-- --model evil\n"
	large := hostile + strings.Repeat("0123456789abcdef\n", 200<<10/17)
	for _, id := range []string{Claude, Codex, Opencode} {
		for name, prompt := range map[string]string{"hostile": hostile, "200KB": large} {
			t.Run(id+"/"+name, func(t *testing.T) {
				root := t.TempDir()
				runDir := filepath.Join(root, "run")
				os.MkdirAll(runDir, 0o755)
				promptPath := filepath.Join(runDir, "prompt.md")
				if err := os.WriteFile(promptPath, []byte(prompt), 0o644); err != nil {
					t.Fatal(err)
				}
				a := implAgent()
				a.Executor = &wave.ExecutorConfig{ID: ptr(id), Model: ptr("pinned-model")}
				lane := testLane(root)
				r, err := Resolve(&a, "implementation", lane, "", false)
				if err != nil {
					t.Fatal(err)
				}
				spec, err := Build(BuildInput{Agent: &a, Wave: testWave(), Resolved: r, Lane: lane, RunDir: runDir,
					PromptPath: promptPath, LogPath: filepath.Join(runDir, "agent.log"), Attempt: 1})
				if err != nil {
					t.Fatal(err)
				}
				p := runtime.Payload{SchemaVersion: runtime.SchemaVersion, RunID: "w0-A1-a1", Lane: "main", Attempt: 1, AgentID: "A1",
					ExecutorID: id, Argv: spec.Argv, Env: spec.Env, EnvFilter: spec.EnvFilter, Stdin: spec.Stdin, Cwd: root,
					RunDir: runDir, PromptPath: promptPath, HeartbeatIntervalMs: 50, RateLimit: spec.RateLimit}
				payloadPath := filepath.Join(runDir, "launch.json")
				if err := runtime.WriteJSON(payloadPath, p); err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				if code := runtime.RunAgent(context.Background(), payloadPath, runtime.Stdio{Out: &out}); code != 0 {
					t.Fatalf("runner exit %d\n%s", code, out.String())
				}

				got := readRec(t, rec, id, "argv")
				argv := strings.Split(strings.TrimSuffix(got, "\x00"), "\x00")
				if !slices.Equal(argv, spec.Argv[1:]) {
					t.Errorf("argv differs from the spec:\n got %q\nwant %q", argv, spec.Argv[1:])
				}
				if !slices.Contains(argv, "pinned-model") {
					t.Errorf("model not pinned: %q", argv)
				}
				delivered := readRec(t, rec, id, "stdin")
				if spec.Stdin == "" {
					delivered = argv[len(argv)-1]
				}
				if delivered != prompt {
					t.Errorf("prompt not delivered intact: got %d bytes, want %d", len(delivered), len(prompt))
				}
				env := strings.Split(readRec(t, rec, id, "env"), "\x00")
				for _, kv := range env {
					if strings.HasPrefix(kv, "ANTHROPIC_BASE_URL=") || strings.HasPrefix(kv, "ANTHROPIC_CUSTOM_HEADERS=") {
						t.Errorf("scrubbed variable reached the agent: %q", kv)
					}
				}
				if !slices.Contains(env, "WAVE_AGENT_ID=A1") {
					t.Error("spec env not passed to the agent")
				}
				if id == Opencode && !slices.Contains(env, "OPENCODE_CONFIG="+filepath.Join(runDir, "opencode.json")) {
					t.Error("OPENCODE_CONFIG not set")
				}
				for _, f := range []string{"PWNED", "PWNED2"} {
					if _, err := os.Stat(filepath.Join(root, f)); err == nil {
						t.Errorf("%s created: the prompt was evaluated", f)
					}
				}
			})
		}
	}
}

func readRec(t *testing.T, rec, id, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(rec, id, name))
	if err != nil {
		t.Fatalf("fake %s did not record %s: %v", id, name, err)
	}
	return string(b)
}
