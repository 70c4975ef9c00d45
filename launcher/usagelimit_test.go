package launcher

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// limitedOn plays an agent whose account on executor exec is out for an
// hour (what claude 2.1.197 prints in stream-json at its session limit);
// on any other executor it is the local agent.
func limitedOn(exec string) play {
	return func(p *runtime.Payload, attempt int, log io.Writer) int {
		if p.ExecutorID != exec {
			return localPlay(p, attempt, log)
		}
		fmt.Fprintf(log, `{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":%d}}`+"\n", time.Now().Add(time.Hour).Unix())
		fmt.Fprintln(log, `{"type":"result","is_error":true,"api_error_status":429,"result":"You've hit your session limit · resets 5:47am (UTC)"}`)
		return 1
	}
}

// An agent whose executor's account runs out does not wait an hour for
// the reset when its executor names a fallback: it goes on on the
// fallback at once, without spending one of the wave's attempts, and
// the wave passes.
func TestAWaveAgentGoesOnOnItsFallbackExecutorDuringAUsageLimit(t *testing.T) {
	h := newHarness(t)
	a1 := implAgent("A1", "id: shell", "shell.command: sh -c true", "fallbacks: local")
	h.wave(0, "", append([]agentDoc{a1, implAgent("A2")}, closureAgents(0)...)...)
	h.runs.on("A1", limitedOn("shell"))
	res, err := h.launch(0, -1, func(o *Options) { o.MaxRetries = 0 })
	if err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("result %+v, %v\n%s", res, err, h.out.String())
	}
	wantStarts(t, h, map[string]int{"A1": 2, "A2": 1, "A8": 1, "A9": 1, "A0": 1})
	var execs []string
	for _, ev := range h.events(0, state.EntityAgentRun) {
		if ev.Action == state.AgentUsageLimited && !strings.HasPrefix(fmt.Sprint(ev.Data["detail"]), "usage limit: You've hit your session limit") {
			t.Errorf("the usage-limited run's detail %q does not give the CLI's words", ev.Data["detail"])
		}
		if ev.Action == "started" && ev.Data["agentId"] == "A1" {
			execs = append(execs, fmt.Sprint(ev.Data["executorId"]))
			if len(execs) == 2 && ev.Data["relaunchedFor"] != "usage-limit" {
				t.Errorf("A1's second start %v is not the usage limit's relaunch", ev.Data)
			}
		}
	}
	if strings.Join(execs, ",") != "shell,local" {
		t.Errorf("A1 ran on %v, want shell then local", execs)
	}
	if !strings.Contains(h.out.String(), "A1 goes on on local while the shell usage limit lasts") {
		t.Errorf("the launcher did not say A1 moved:\n%s", h.out.String())
	}
}

// An agent about to start while its executor is still paused starts on
// its fallback instead of waiting for the reset: the pause a later wave
// inherits from an earlier one.
func TestAWaveAgentStartsOnItsFallbackWhileItsExecutorIsPaused(t *testing.T) {
	h := newHarness(t)
	shell := []string{"id: shell", "shell.command: sh -c true", "fallbacks: local"}
	h.wave(0, "", append([]agentDoc{implAgent("A1", shell...)}, closureAgents(0)...)...)
	h.wave(1, "", append([]agentDoc{implAgent("B1", shell...)}, closureAgents(1)...)...)
	h.runs.on("A1", limitedOn("shell"))
	h.runs.on("B1", limitedOn("shell"))
	res, err := h.launch(0, -1, func(o *Options) { o.MaxRetries = 0 })
	if err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("result %+v, %v\n%s", res, err, h.out.String())
	}
	for _, ev := range h.events(1, state.EntityAgentRun) {
		if ev.Action == "started" && ev.Data["agentId"] == "B1" && ev.Data["executorId"] != "local" {
			t.Errorf("B1 started on %v while shell was paused, want its fallback local", ev.Data["executorId"])
		}
	}
}
