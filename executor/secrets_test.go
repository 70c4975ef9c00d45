package executor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
)

// launcherEnv is a launching shell holding every kind of secret.
var launcherEnv = []string{
	"PATH=/bin", "HOME=/home/me", "TMUX=/tmp/t,1,0",
	"GITHUB_TOKEN=ghp_github", "GH_TOKEN=ghp_gh", "ACME_GH=ghp_acme", // github.tokenEnv: ACME_GH
	"CHAT_HOOK=https://hooks.example/services/T0/B0/x", // a webhook sink's urlEnv
	"ANTHROPIC_API_KEY=sk-ant", "CLAUDE_CODE_OAUTH_TOKEN=oauth", "OPENAI_API_KEY=sk-openai",
	"OPENROUTER_API_KEY=sk-or", "STRIPE_SECRET_KEY=sk_live", "DB_PASSWORD=hunter2", "NPM_TOKEN=npm",
}

// secretLane is a lane loaded from a config naming a webhook sink and a
// GitHub token variable, as the launcher loads it.
func secretLane(t *testing.T, extra string) *config.Lane {
	t.Helper()
	root := t.TempDir()
	cfg := "github:\n  owner: acme\n  repo: shop\n  tokenEnv: ACME_GH\n" +
		"notify:\n  - kind: webhook\n    urlEnv: CHAT_HOOK\n" +
		"executors:\n  shell:\n    command: my-agent {prompt_file}\n" + extra
	if err := os.WriteFile(filepath.Join(root, "wave.config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(root, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Lane(root, "")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// seen is the names of env an agent of id gets from launcherEnv.
func seen(t *testing.T, lane *config.Lane, id string, worker *WorkerInfo) []string {
	t.Helper()
	run := t.TempDir()
	prompt := filepath.Join(run, "prompt.md")
	if err := os.WriteFile(prompt, []byte("p"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := implAgent()
	a.Executor.ID = &id
	a.Executor.Fallbacks = nil
	r, err := Resolve(&a, "implementation", lane, "", false)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := Build(BuildInput{Agent: &a, Wave: testWave(), Resolved: r, Lane: lane, RunDir: run, PromptPath: prompt,
		Attempt: 1, Self: "/bin/wave-orchestrator", Worker: worker})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, kv := range spec.Environ(launcherEnv) {
		k, _, _ := strings.Cut(kv, "=")
		if _, ours := spec.Env[k]; !ours {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	return names
}

func TestAnAgentKeepsOnlyItsExecutorsCredentials(t *testing.T) {
	lane := secretLane(t, "")
	worker := &WorkerInfo{Issue: 3, Branch: "wave/x-i3", Target: "wave/x", Worktree: "/w", TokenEnv: "ACME_GH"}
	for _, tt := range []struct {
		id     string
		worker *WorkerInfo
		want   []string
	}{
		{Claude, nil, []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "HOME", "PATH"}},
		{Claude, worker, []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "HOME", "PATH"}},
		{Codex, nil, []string{"HOME", "OPENAI_API_KEY", "PATH"}},
		{Opencode, worker, []string{"ANTHROPIC_API_KEY", "HOME", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "PATH"}},
		{Shell, nil, []string{"HOME", "PATH"}},
		{Local, worker, []string{"HOME", "PATH"}},
	} {
		if got := seen(t, lane, tt.id, tt.worker); !slices.Equal(got, tt.want) {
			t.Errorf("%s (worker %v) sees %q, want %q", tt.id, tt.worker != nil, got, tt.want)
		}
	}
}

// executors.env.keep hands a named secret to every agent; a backlog
// worker still never gets the GitHub token or a sink's URL.
func TestWorkersNeverSeeGHTokenWhateverKeepSays(t *testing.T) {
	lane := secretLane(t, "  env:\n    keep: [GH_TOKEN, CHAT_HOOK, NPM_TOKEN]\n")
	if got := seen(t, lane, Shell, nil); !slices.Equal(got, []string{"CHAT_HOOK", "GH_TOKEN", "HOME", "NPM_TOKEN", "PATH"}) {
		t.Errorf("wave agent with keep sees %q", got)
	}
	worker := &WorkerInfo{Issue: 3, Branch: "wave/x-i3", Target: "wave/x", Worktree: "/w", TokenEnv: "ACME_GH"}
	if got := seen(t, lane, Shell, worker); !slices.Equal(got, []string{"HOME", "NPM_TOKEN", "PATH"}) {
		t.Errorf("worker with keep sees %q", got)
	}
}
