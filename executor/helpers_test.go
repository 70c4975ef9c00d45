package executor

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

func ptr[T any](v T) *T { return &v }

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./executor -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden (go test ./executor -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// testWave is a small example wave, reduced to what the
// executor reads.
func testWave() *wave.Wave {
	return &wave.Wave{
		Number: 0,
		File:   "docs/plans/waves/wave-0.md",
		ComponentPromotions: []wave.ComponentPromotion{
			{ComponentID: "wave-parser-and-launcher", TargetLevel: "repo-landed"},
		},
		Agents: []wave.Agent{
			{ID: "A0", Title: "cont-QA", Prompt: "Judge closure for wave 0.", OwnedPaths: []string{"docs/reviews/wave-0-cont-qa.md"},
				RolePromptPaths: []string{"docs/agents/wave-cont-qa-role.md"}},
			{ID: "A7", Title: "Security Review", Prompt: "Threat-model the greeting service.",
				RolePromptPaths: []string{"docs/agents/wave-security-role.md"}, OwnedPaths: []string{".wave/security/wave-0-review.md"}},
			implAgent(),
		},
	}
}

func implAgent() wave.Agent {
	return wave.Agent{
		ID:    "A1",
		Title: "Greeting implementation",
		Prompt: "Primary goal:\n- Add a greet(name) helper with tests.\n\nFile ownership (only touch these paths):\n" +
			"- src/greet.js\n- test/greet.test.js\n- .tmp/wave-0-proof/",
		Executor: &wave.ExecutorConfig{
			ID: ptr("codex"), Model: ptr("gpt-5-codex"), Codex: &wave.CodexConfig{Config: []string{"model_reasoning_effort=medium"}},
			Budget: &wave.Budget{Minutes: ptr(30)}, Fallbacks: []string{"claude"}, RetryPolicy: ptr("fallback-allowed"),
		},
		Components:       []string{"wave-parser-and-launcher"},
		ComponentTargets: map[string]*string{"wave-parser-and-launcher": ptr("repo-landed")},
		Capabilities:     []string{"greeting-api"},
		ExitContract:     &wave.ExitContract{Completion: "integrated", Durability: "none", Proof: "unit", DocImpact: "owned"},
		Deliverables:     []string{"src/greet.js", "test/greet.test.js"},
		ProofArtifacts:   []wave.ProofArtifact{{Path: ".tmp/wave-0-proof/greet-run.json", Kind: ptr("command-output"), RequiredFor: []string{"pilot-live"}}},
		OwnedPaths:       []string{"src/greet.js", "test/greet.test.js", ".tmp/wave-0-proof/"},
	}
}

// testLane is a lane with the starter profiles and role defaults.
func testLane(root string) *config.Lane {
	return &config.Lane{
		Name:     "main",
		Project:  "demo",
		RepoRoot: root,
		Executors: config.Executors{
			Default: "codex",
			Profiles: map[string]config.Profile{
				"deep-review": {ID: "claude", Model: "claude-opus-4", Budget: &wave.Budget{Turns: ptr(40), Minutes: ptr(30)},
					Claude: &wave.ClaudeConfig{Effort: ptr("high")}},
				"security-review": {ID: "claude", Claude: &wave.ClaudeConfig{AllowedTools: []string{"Read", "Grep", "Glob"}}},
				"cheap":           {Model: "gpt-5-mini", Fallbacks: []string{"opencode"}, Tags: []string{"cheap"}},
			},
			Claude: config.ClaudeDefaults{ClaudeConfig: wave.ClaudeConfig{Model: ptr("claude-sonnet-4"), AllowedTools: []string{"Read"}}},
		},
		RuntimePolicy: config.RuntimePolicy{
			DefaultExecutorByRole: map[string]string{roles.RoleContQa: "claude", roles.RoleSecurity: "claude"},
			FallbackExecutorOrder: []string{"claude", "opencode", "codex"},
		},
		Runtime: config.Runtime{TimeoutMinutes: 90, RateLimitRetries: 2, RateLimitBaseDelayS: 20, RateLimitMaxDelayS: 180},
	}
}

func bindings(w *wave.Wave) roles.Bindings { return roles.Bind(w, config.Roles{}) }
