package wavemode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// A wave agent whose CLI says its account is out (what claude 2.1.197
// prints in stream-json at its session limit, the reset 3 s away) does not
// burn the wave's attempts: with no retries at all, the wave waits for the
// reset, relaunches the agent, and passes; the pause is in the lane's log
// once, opened and ended.
func TestAWaveWaitsForAUsageLimitInsteadOfSpendingItsRetries(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	script := filepath.Join(t.TempDir(), "limited.sh")
	body := `if [ "$WAVE_ATTEMPT" = 1 ]; then
  reset=$(( $(date +%s) + 3 ))
  printf '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":%s,"rateLimitType":"five_hour","isUsingOverage":false}}\n' "$reset"
  printf '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"num_turns":1,"result":"You'"'"'ve hit your session limit · resets 5:47am (UTC)","total_cost_usd":0}\n'
  exit 1
fi
exec ` + e2etest.Bin() + ` local --prompt-file "$1"
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	a1 := e2etest.ImplAgent("A1", "id: shell", "shell.command: sh "+script+" {prompt_file}")
	r.WriteWave(0, append([]e2etest.Agent{a1, e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r, "--max-retries-per-wave", "0")
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var starts []time.Time
	var paused, resumed []state.Event
	for _, ev := range r.Events() {
		switch {
		case ev.EntityType == state.EntityAgentRun && ev.Action == "started" && ev.Data["agentId"] == "A1":
			starts = append(starts, ev.RecordedAt)
			if len(starts) == 2 && ev.Data["relaunchedFor"] != "usage-limit" {
				t.Errorf("A1's second start %v is not marked as the usage limit's relaunch", ev.Data)
			}
		case ev.EntityType == state.EntityUsageLimit && ev.Action == state.UsagePaused:
			paused = append(paused, ev)
		case ev.EntityType == state.EntityUsageLimit && ev.Action == state.UsageResumed:
			resumed = append(resumed, ev)
		}
	}
	if len(starts) != 2 || len(paused) != 1 || len(resumed) != 1 {
		t.Fatalf("A1 started %d times, %d pauses, %d ends; want 2, 1, 1\n%s", len(starts), len(paused), len(resumed), res.Stdout)
	}
	until, err := time.Parse(time.RFC3339, paused[0].Data["until"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if starts[1].Before(until) {
		t.Errorf("A1 started again at %s, before the reset %s", starts[1], until)
	}
	if !strings.Contains(res.Stdout, "paused: shell usage limit until") {
		t.Errorf("the launcher did not say it paused:\n%s", res.Stdout)
	}
}

// runtime.noProgressSeconds: a wave agent that keeps printing while its
// owned files never change is stopped as no-progress, and the wave's
// report says so (not a timeout at the deadline, hours later).
func TestAWaveAgentBusyWithoutTouchingItsFilesIsStoppedAsNoProgress(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.Write("wave.config.yaml", strings.Replace(e2etest.Config, "  terminateGraceMs: 500\n", "  terminateGraceMs: 500\n  noProgressSeconds: 3\n", 1))
	script := filepath.Join(t.TempDir(), "spin.sh")
	if err := os.WriteFile(script, []byte("while :; do echo thinking; sleep 0.1; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a1 := e2etest.ImplAgent("A1", "id: shell", "shell.command: sh "+script)
	r.WriteWave(0, append([]e2etest.Agent{a1}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r, "--max-retries-per-wave", "0", "--timeout-minutes", "2")
	if res.Code != 1 || !strings.Contains(res.Stdout, "A1: no-progress") {
		t.Fatalf("exit %d, want 1 with A1 stopped as no-progress\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
}
