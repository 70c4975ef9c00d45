package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Flags that mirror config keys go through the config's precedence:
// flag > WAVE_* > file > default, in the real binary.
func TestConfigFlagsBeatEnvAndFile(t *testing.T) {
	r := newRepo(t)
	r.write("wave.config.yaml", strings.Replace(testConfig, "runtime:\n", "runtime:\n  timeoutMinutes: 30\n", 1)+"backlog:\n  width: 2\n")
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	ctx := ctxFor(t)
	launchJSON := filepath.Join(r.root, ".wave", "lanes", "main", "dry-run", "waves", "0", "runs", "A1-a1", "launch.json")
	deadline := func() int {
		var p struct {
			DeadlineMinutes int `json:"deadlineMinutes"`
		}
		readJSONFile(t, launchJSON, &p)
		return p.DeadlineMinutes
	}

	if res := r.run(ctx, "launch", "--dry-run"); res.code != 0 || deadline() != 30 {
		t.Fatalf("file over default: exit %d, deadline %d minutes, want 30\n%s", res.code, deadline(), res.stderr)
	}

	// The environment beats the file: its bad value is the variable's error.
	res := r.runWith(ctx, []string{"WAVE_RUNTIME_TIMEOUT_MINUTES=0"}, "launch", "--dry-run")
	if res.code == 0 || !strings.Contains(res.stderr, "env WAVE_RUNTIME_TIMEOUT_MINUTES: runtime.timeoutMinutes: must be >= 1, got 0") {
		t.Fatalf("env over file: exit %d\n%s", res.code, res.stderr)
	}
	// The flag beats the environment, and reaches the agents' deadline.
	res = r.runWith(ctx, []string{"WAVE_RUNTIME_TIMEOUT_MINUTES=0"}, "launch", "--dry-run", "--timeout-minutes", "5000")
	if res.code != 0 {
		t.Fatalf("flag over env: exit %d\n%s", res.code, res.stderr)
	}
	if d := deadline(); d != 5000 {
		t.Errorf("deadline in %d minutes, want 5000 (the flag's)", d)
	}
	// A flag's bad value is the flag's error.
	res = r.runWith(ctx, nil, "launch", "--dry-run", "--timeout-minutes", "0")
	if res.code == 0 || !strings.Contains(res.stderr, "flag --timeout-minutes: runtime.timeoutMinutes: must be >= 1, got 0") {
		t.Fatalf("--timeout-minutes 0: exit %d\n%s", res.code, res.stderr)
	}
	res = r.runWith(ctx, []string{"WAVE_BACKLOG_WIDTH=3"}, "backlog", "run", "--issues", "1", "--width", "-1")
	if res.code != 2 || !strings.Contains(res.stderr, "--width -1: workers at once must be 1 or more") {
		t.Fatalf("backlog run --width -1: exit %d\n%s", res.code, res.stderr)
	}
}
