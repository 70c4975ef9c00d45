package secrets

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// fakeClaude reports what it was started with: the mode and content of
// its --settings file and its environment.
const fakeClaude = `#!/bin/sh
while [ $# -gt 0 ]; do
  if [ "$1" = --settings ]; then settings=$2; fi
  shift
done
echo "settings-mode: $(stat -c %a "$settings")"
echo "settings: $(tr -d '\n' < "$settings")"
env | sed 's/^/env: /'
`

// The key a claude settingsJson carries, and a value that is secret
// only because it sits in the settings' env.
const (
	settingsKey   = "sk-ant-settings-leak0008"
	settingsProxy = "proxy-settings-leak0009"
)

func claudeSettingsConfig(claude string) string {
	return strings.Replace(e2etest.Config, "executors:\n  default: local\n",
		"executors:\n  default: local\n  claude:\n    command: "+claude+"\n    env:\n      IS_SANDBOX: \"1\"\n"+
			"    settingsJson:\n      permissions:\n        defaultMode: bypassPermissions\n"+
			"      env:\n        ANTHROPIC_API_KEY: "+settingsKey+"\n        MY_PROXY_URL: "+settingsProxy+"\n", 1)
}

// filesHolding lists the files under dir whose content holds any of
// secrets, but skip.
func filesHolding(t *testing.T, dir string, skip map[string]bool, secrets ...string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || skip[d.Name()] {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				rel, _ := filepath.Rel(dir, p)
				out = append(out, rel+" holds "+s)
			}
		}
		return nil
	})
	return out
}

// A claude settingsJson's env reaches the agent as its environment; the
// settings file it reads is 0600, holds no key, and is gone once the run
// ends; launch.json holds no key either.
func TestClaudeSettingsAreWrittenPrivateAndRemovedAfterTheRun(t *testing.T) {
	withUmask(t, 0o022)
	r := e2etest.NewRepo(t)
	r.Write("wave.config.yaml", claudeSettingsConfig(writeScript(t, "claude", fakeClaude)))
	claude := e2etest.Agent{Id: "A1", Title: "claude settings probe", Owns: []string{"src/a1.txt"}, Knobs: []string{"id: claude"}}
	r.WriteWave(0, append([]e2etest.Agent{claude}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r, "--max-retries-per-wave", "0")
	dir := r.Layout().RunDir(0, "A1", 1)
	log, err := os.ReadFile(filepath.Join(dir, "agent.log"))
	if err != nil {
		t.Fatalf("%v\nlaunch: %d\n%s\n%s", err, res.Code, res.Stdout, res.Stderr)
	}
	text := strings.ReplaceAll(string(log), "\r", "")
	for _, want := range []string{"settings-mode: 600\n", `"defaultMode": "bypassPermissions"`,
		"env: ANTHROPIC_API_KEY=" + settingsKey + "\n", "env: MY_PROXY_URL=" + settingsProxy + "\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("agent.log lacks %q:\n%s", want, text)
		}
	}
	if settings, _, _ := strings.Cut(text[strings.Index(text, "settings: "):], "\n"); strings.Contains(settings, settingsKey) {
		t.Errorf("the settings file held the key: %s", settings)
	}
	if _, err := os.Stat(filepath.Join(dir, "claude-settings.json")); !os.IsNotExist(err) {
		t.Errorf("claude-settings.json is still in the run directory after the run: %v", err)
	}
	for _, f := range filesHolding(t, filepath.Join(r.Root, ".wave"), map[string]bool{"agent.log": true}, settingsKey, settingsProxy) {
		t.Errorf("a secret at rest: .wave/%s", f)
	}
}
