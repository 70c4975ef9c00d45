package launcher

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/preflight"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// IS_SANDBOX=1 given through executors.claude.env reaches the preflight's
// view of the agent's environment, so claude as root passes the check
// there without IS_SANDBOX in the launcher's environment; an agent's own
// env.IS_SANDBOX wins over the vendor's.
func TestNeedsCarriesExecutorEnvIntoTheRootCheck(t *testing.T) {
	root := t.TempDir()
	yaml := "executors:\n  default: local\n  claude:\n    env:\n      IS_SANDBOX: \"1\"\n"
	if err := os.WriteFile(filepath.Join(root, "wave.config.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(root, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	lane, err := cfg.Lane(root, "main")
	if err != nil {
		t.Fatal(err)
	}
	claude := "claude"
	agent := func(id string, env map[string]string) wave.Agent {
		return wave.Agent{ID: id, Executor: &wave.ExecutorConfig{ID: &claude, Env: env}}
	}
	asRoot := preflight.Host{
		LookPath:    func(name string) (string, error) { return "/usr/bin/" + name, nil },
		Getenv:      func(string) string { return "" },
		Euid:        func() int { return 0 },
		TmuxVersion: func(context.Context) (string, error) { return "tmux 3.4", nil },
	}
	check := func(a wave.Agent, sandbox string) []preflight.Problem {
		t.Helper()
		n, err := Needs([]*wave.Wave{{Number: 0, Agents: []wave.Agent{a}}}, lane, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(n.Executors) != 1 || n.Executors[0].Env["IS_SANDBOX"] != sandbox {
			t.Fatalf("%s: needs %+v, want IS_SANDBOX=%s in its env", a.ID, n.Executors, sandbox)
		}
		n.Tmux = false
		return asRoot.Check(context.Background(), n)
	}
	if ps := check(agent("A1", nil), "1"); len(ps) != 0 {
		t.Fatalf("claude as root with executors.claude.env IS_SANDBOX=1: %v, want no problem", ps)
	}
	if ps := check(agent("A2", map[string]string{"IS_SANDBOX": "0"}), "0"); len(ps) != 1 || ps[0].Kind != preflight.KindExecutor {
		t.Fatalf("agent env.IS_SANDBOX=0 over the vendor's 1: %v, want the root problem", ps)
	}
}
