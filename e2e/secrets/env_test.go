package secrets

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// launcherSecrets are the launching shell's secrets: name → value. The
// values are unique, so finding one anywhere means it leaked.
var launcherSecrets = map[string]string{
	"GITHUB_TOKEN":        "ghp_githubTokenLeak0001",
	"GH_TOKEN":            "ghp_ghTokenLeak0002",
	"CHAT_HOOK_URL":       "https://hooks.example.invalid/services/HOOKLEAK0003",
	"ANTHROPIC_API_KEY":   "sk-ant-leak0004",
	"OPENAI_API_KEY":      "sk-openai-leak0005",
	"DEPLOY_DB_PASSWORD":  "hunter2-leak0006",
	"ACME_SERVICE_SECRET": "acme-leak0007",
}

func secretEnv() []string {
	var env []string
	for k, v := range launcherSecrets {
		env = append(env, k+"="+v)
	}
	return env
}

const notifySink = "notify:\n  - kind: webhook\n    urlEnv: CHAT_HOOK_URL\n    events: [final-pr-opened]\n"

// envDump is an agent CLI that prints its environment into its log, then
// runs the rest of its argv (a real agent's work, when there is one).
const envDump = `#!/bin/sh
env | sed 's/^/env: /'
[ $# -gt 0 ] && exec "$@"
exit 0
`

func writeScript(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// seenIn is the env names printed in an agent log by envDump.
func seenIn(t *testing.T, log string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, line := range strings.Split(strings.ReplaceAll(string(b), "\r", ""), "\n") {
		if kv, ok := strings.CutPrefix(line, "env: "); ok {
			k, v, _ := strings.Cut(kv, "=")
			seen[k] = v
		}
	}
	if len(seen) == 0 {
		t.Fatalf("%s printed no environment:\n%s", log, b)
	}
	return seen
}

// A wave agent gets none of the launcher's secrets but its executor's
// own: a shell agent none, a claude agent its Anthropic key.
func TestNoAgentSeesANotifySinksURL(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	dump := writeScript(t, "claude", envDump+"\n")
	r.Write("wave.config.yaml", strings.Replace(e2etest.Config, "executors:\n  default: local\n",
		"executors:\n  default: local\n  claude:\n    command: "+dump+"\n    env:\n      IS_SANDBOX: \"1\"\n", 1)+notifySink)
	shell := e2etest.Agent{Id: "A1", Title: "env probe", Owns: []string{"src/a1.txt"}, Knobs: []string{"id: shell", "shell.command: " + dump}}
	claude := e2etest.Agent{Id: "A2", Title: "claude env probe", Owns: []string{"src/a2.txt"}, Knobs: []string{"id: claude"}}
	r.WriteWave(0, append([]e2etest.Agent{shell, claude}, e2etest.ClosureAgents()...)...)
	cmd := r.LaunchEnv(e2etest.Context(t), secretEnv()...)
	cmd.Args = append(cmd.Args, "--max-retries-per-wave", "0")
	out, err := cmd.CombinedOutput()
	t.Logf("launch: %v\n%s", err, out)
	a1 := seenIn(t, filepath.Join(r.Layout().RunDir(0, "A1", 1), "agent.log"))
	a2 := seenIn(t, filepath.Join(r.Layout().RunDir(0, "A2", 1), "agent.log"))
	for k := range launcherSecrets {
		if _, ok := a1[k]; ok {
			t.Errorf("the shell agent sees $%s", k)
		}
		if _, ok := a2[k]; ok && k != "ANTHROPIC_API_KEY" {
			t.Errorf("the claude agent sees $%s", k)
		}
	}
	if a2["ANTHROPIC_API_KEY"] != launcherSecrets["ANTHROPIC_API_KEY"] {
		t.Errorf("the claude agent lost its own key: ANTHROPIC_API_KEY=%q\nlaunch output:\n%s", a2["ANTHROPIC_API_KEY"], out)
	}
}

// A backlog worker never gets the GitHub token (in any of its names) nor
// a sink's URL, nor any other secret its executor does not read.
func TestWorkersNeverSeeGHToken(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	dump := writeScript(t, "dump.sh", envDump)
	cfg, err := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	block := fmt.Sprintf("  executor:\n    id: shell\n    shell.command: %q", fmt.Sprintf("%s %s local-worker --prompt-file {prompt_file}", dump, e2etest.Bin()))
	r.Write("wave.config.yaml", e2etest.WorkerExecutor.ReplaceAllLiteralString(string(cfg), block)+notifySink)
	r.Issue(1, "Add a greeting", "Files: src/greet/**")
	run := r.RunWith(e2etest.Context(t), append(r.Env(), secretEnv()...), "backlog", "run", "--issues", "1", "--no-dashboard")
	if run.Code != 0 {
		t.Fatalf("run: %d\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	logs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*", "runs", "*", "agent.log"))
	if len(logs) == 0 {
		t.Fatal("no worker log")
	}
	for _, log := range logs {
		seen := seenIn(t, log)
		for k := range launcherSecrets {
			if _, ok := seen[k]; ok {
				t.Errorf("worker %s sees $%s", filepath.Base(filepath.Dir(log)), k)
			}
		}
	}
}
