package wavemode

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// Flags that mirror config keys go through the config's precedence:
// flag > WAVE_* > file > default, in the real binary.
func TestConfigFlagsBeatEnvAndFile(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.Write("wave.config.yaml", strings.Replace(e2etest.Config, "runtime:\n", "runtime:\n  timeoutMinutes: 30\n", 1)+"backlog:\n  width: 2\n")
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	ctx := e2etest.Context(t)
	launchJSON := filepath.Join(r.Root, ".wave", "lanes", "main", "dry-run", "waves", "0", "runs", "A1-a1", "launch.json")
	deadline := func() int {
		var p struct {
			DeadlineMinutes int `json:"deadlineMinutes"`
		}
		e2etest.ReadJSONFile(t, launchJSON, &p)
		return p.DeadlineMinutes
	}

	if res := r.Run(ctx, "launch", "--dry-run"); res.Code != 0 || deadline() != 30 {
		t.Fatalf("file over default: exit %d, deadline %d minutes, want 30\n%s", res.Code, deadline(), res.Stderr)
	}

	// The environment beats the file: its bad value is the variable's error.
	res := r.RunWith(ctx, []string{"WAVE_RUNTIME_TIMEOUT_MINUTES=0"}, "launch", "--dry-run")
	if res.Code == 0 || !strings.Contains(res.Stderr, "env WAVE_RUNTIME_TIMEOUT_MINUTES: runtime.timeoutMinutes: must be >= 1, got 0") {
		t.Fatalf("env over file: exit %d\n%s", res.Code, res.Stderr)
	}
	// The flag beats the environment, and reaches the agents' deadline.
	res = r.RunWith(ctx, []string{"WAVE_RUNTIME_TIMEOUT_MINUTES=0"}, "launch", "--dry-run", "--timeout-minutes", "5000")
	if res.Code != 0 {
		t.Fatalf("flag over env: exit %d\n%s", res.Code, res.Stderr)
	}
	if d := deadline(); d != 5000 {
		t.Errorf("deadline in %d minutes, want 5000 (the flag's)", d)
	}
	// A flag's bad value is the flag's error.
	res = r.RunWith(ctx, nil, "launch", "--dry-run", "--timeout-minutes", "0")
	if res.Code == 0 || !strings.Contains(res.Stderr, "flag --timeout-minutes: runtime.timeoutMinutes: must be >= 1, got 0") {
		t.Fatalf("--timeout-minutes 0: exit %d\n%s", res.Code, res.Stderr)
	}
	res = r.RunWith(ctx, []string{"WAVE_BACKLOG_WIDTH=3"}, "backlog", "run", "--issues", "1", "--width", "-1")
	if res.Code != 2 || !strings.Contains(res.Stderr, "--width -1: workers at once must be 1 or more") {
		t.Fatalf("backlog run --width -1: exit %d\n%s", res.Code, res.Stderr)
	}
}
