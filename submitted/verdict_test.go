package submitted

import (
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

func TestVerdict(t *testing.T) {
	waveEnd := func(n int, action string, fs ...state.Failure) state.Event {
		var data map[string]any
		if fs != nil {
			data = map[string]any{"failures": fs}
		}
		return state.NewEvent("main", n, state.EntityWaveRun, "wave", action, 1, data)
	}
	agentRun := state.NewEvent("main", 1, state.EntityAgentRun, "wave-1-agent-A1", "completed", 1, nil)
	many := []state.Failure{{AgentID: "A1", StatusCode: "a"}, {AgentID: "A2", StatusCode: "b"}, {AgentID: "A3", StatusCode: "c"}, {AgentID: "A4", StatusCode: "d"}, {AgentID: "A5", StatusCode: "e"}}
	for _, tc := range []struct {
		name      string
		code      int
		evs       []state.Event
		stopAsked bool
		lastLine  string
		stopped   bool
		why       string
	}{
		{"exit 0 is completed whatever was asked", 0, []state.Event{waveEnd(1, state.WaveCompleted)}, true, "", false, ""},
		{"a failed wave names its failures", 1, []state.Event{waveEnd(0, state.WaveCompleted), waveEnd(1, state.WaveFailed,
			state.Failure{AgentID: "A1", Gate: "implementation", StatusCode: "missing-marker", Detail: "no marker\nin output."}), agentRun}, false, "",
			false, "wave 1 failed: A1: missing-marker (no marker in output)"},
		{"a blocked wave too, its gate when no agent", 43, []state.Event{waveEnd(3, state.WaveBlocked, state.Failure{Gate: "budget", StatusCode: "budget-exceeded"})}, false, "x",
			false, "wave 3 blocked: budget: budget-exceeded"},
		{"past three failures the rest are counted", 1, []state.Event{waveEnd(2, state.WaveFailed, many...)}, false, "",
			false, "wave 2 failed: A1: a; A2: b; A3: c; and 2 more (`status -w 2`)"},
		{"a failed wave with no failures recorded points at status", 1, []state.Event{waveEnd(2, state.WaveFailed)}, false, "",
			false, "wave 2 failed; `status -w 2` shows why"},
		{"no wave ended: the launcher's last line", 43, nil, false, "executor codex: not on PATH", false, "executor codex: not on PATH"},
		{"a wave that completed before a later failure is not the why", 1, []state.Event{waveEnd(0, state.WaveCompleted)}, false, "boom", false, "boom"},
		{"nothing said at all", 2, nil, false, "", false, "launcher exited 2 without saying why"},
		{"a wave stopped is stopped", 1, []state.Event{waveEnd(4, state.WaveStopped)}, false, "", true, "wave 4 stopped on request"},
		{"a stop asked of the lane is stopped, in the launcher's words", 1, nil, true, "lane main stopped on request", true, "lane main stopped on request"},
		{"a stop asked with nothing said", 1, nil, true, "", true, "stopped on request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stopped, why := verdict(tc.code, tc.evs, tc.stopAsked, tc.lastLine)
			if stopped != tc.stopped || why != tc.why {
				t.Fatalf("verdict = %v %q, want %v %q", stopped, why, tc.stopped, tc.why)
			}
		})
	}
}
