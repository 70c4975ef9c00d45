package secrets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// Secrets in an agent's env.NAME, a claude settingsJson's env and an
// opencode provider's apiKey appear in no dry-run file, manifest or
// output.
func TestDryRunNeverPrintsASecret(t *testing.T) {
	t.Parallel()
	const agentKey, providerKey = "sk-agent-leak0010", "sk-provider-leak0011"
	r := e2etest.NewRepo(t)
	cfg := claudeSettingsConfig("claude") + "" // the dry run starts nothing
	cfg = strings.Replace(cfg, "  claude:\n", "  opencode:\n    configJson:\n      provider:\n        acme:\n          options:\n            apiKey: "+providerKey+"\n  claude:\n", 1)
	r.Write("wave.config.yaml", cfg)
	claude := e2etest.Agent{Id: "A1", Title: "claude", Owns: []string{"src/a1.txt"}, Knobs: []string{"id: claude", "env.ACME_API_KEY: " + agentKey}}
	opencode := e2etest.Agent{Id: "A2", Title: "opencode", Owns: []string{"src/a2.txt"}, Knobs: []string{"id: opencode"}}
	r.WriteWave(0, append([]e2etest.Agent{claude, opencode}, e2etest.ClosureAgents()...)...)
	out := filepath.Join(t.TempDir(), "manifest.json")
	res := r.Run(e2etest.Context(t), "launch", "--lane", "main", "--dry-run", "--manifest-out", out)
	if res.Code != 0 {
		t.Fatalf("dry run: %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	secrets := []string{settingsKey, settingsProxy, agentKey, providerKey}
	for _, f := range append(filesHolding(t, filepath.Join(r.Root, ".wave"), nil, secrets...), filesHolding(t, filepath.Dir(out), nil, secrets...)...) {
		t.Errorf("a secret in the dry run's files: %s", f)
	}
	for _, s := range secrets {
		if strings.Contains(res.Stdout+res.Stderr, s) {
			t.Errorf("the dry run printed %s:\n%s\n%s", s, res.Stdout, res.Stderr)
		}
	}
	if b, err := os.ReadFile(out); err != nil || !strings.Contains(string(b), `"ACME_API_KEY": "<redacted>"`) {
		t.Errorf("the manifest does not show the agent's key redacted (%v):\n%s", err, b)
	}
}
