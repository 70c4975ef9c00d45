package telemetry

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// tree renders ops as the spans they open and close, "+name key <parent"
// and "-key [error]", for table tests.
func tree(ops []op) string {
	var b strings.Builder
	for _, o := range ops {
		key := strings.ReplaceAll(o.Key, "\x00", "/")
		if o.End {
			fmt.Fprintf(&b, "-%s", key)
			if o.Err != "" {
				fmt.Fprintf(&b, " [%s]", o.Err)
			}
		} else {
			fmt.Fprintf(&b, "+%s %s <%s", o.Name, key, strings.ReplaceAll(o.Parent, "\x00", "/"))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func laneEv(wave int, entity, action string, attempt int, data map[string]any) state.Event {
	ev := state.NewEvent("main", wave, entity, "id", action, attempt, data)
	return ev
}

func TestAWaveRunIsOneTraceWithItsClosureStagesAndAgents(t *testing.T) {
	m := newLaneModel("main")
	var ops []op
	for _, ev := range []state.Event{
		laneEv(0, state.EntityWaveRun, "started", 0, nil),
		laneEv(0, state.EntityAgentRun, "started", 1, map[string]any{"agentId": "A1", "runDir": "/s/A1-a1", "executorId": "local"}),
		laneEv(0, state.EntityAgentRun, state.AgentReused, 1, map[string]any{"agentId": "A2", "runDir": "/s/A2-a1"}),
		laneEv(0, state.EntityAgentRun, state.AgentCompleted, 1, map[string]any{"agentId": "A1", "runDir": "/s/A1-a1", "exitCode": 0.0}),
		laneEv(0, state.EntityClosure, state.StageSkipped, 1, map[string]any{"phase": "cont-eval"}),
		laneEv(0, state.EntityClosure, state.StageRunning, 1, map[string]any{"phase": "integrating"}),
		laneEv(0, state.EntityAgentRun, "started", 1, map[string]any{"agentId": "A8", "runDir": "/s/A8-a1"}),
		laneEv(0, state.EntityAgentRun, state.AgentFailed, 1, map[string]any{"agentId": "A8", "runDir": "/s/A8-a1", "exitCode": 3.0}),
		laneEv(0, state.EntityClosure, state.StageFailed, 1, map[string]any{"phase": "integrating", "detail": "3"}),
		laneEv(0, state.EntityWaveRun, state.WaveFailed, 1, nil),
	} {
		ops = append(ops, m.apply(ev)...)
	}
	want := `+wave root <
+wave.agent agent//s/A1-a1 <root
-agent//s/A1-a1
+wave.closure closure/integrating/1 <root
+wave.agent agent//s/A8-a1 <closure/integrating/1
-agent//s/A8-a1 [agent run failed]
-closure/integrating/1 [closure stage failed: 3]
-root [wave run failed]
`
	if got := tree(ops); got != want {
		t.Errorf("ops:\n%s\nwant:\n%s", got, want)
	}
}

func TestAWaveRunStoppedMidAgentClosesWhatItOpened(t *testing.T) {
	m := newLaneModel("main")
	var ops []op
	for _, ev := range []state.Event{
		laneEv(1, state.EntityWaveRun, "started", 0, nil),
		laneEv(1, state.EntityAgentRun, "started", 1, map[string]any{"agentId": "A1", "runDir": "/s/A1-a1"}),
		laneEv(1, state.EntityWaveRun, state.WaveStopped, 1, nil),
		laneEv(1, state.EntityAgentRun, state.AgentTerminated, 1, map[string]any{"agentId": "A1", "runDir": "/s/A1-a1"}),
	} {
		ops = append(ops, m.apply(ev)...)
	}
	want := "+wave root <\n+wave.agent agent//s/A1-a1 <root\n-agent//s/A1-a1 [ended with the wave run (stopped)]\n-root [wave run stopped]\n"
	if got := tree(ops); got != want {
		t.Errorf("ops:\n%s\nwant:\n%s", got, want)
	}
}

func TestABacklogRunIsOneTraceOfIssuesWorkersMergesAndVerifies(t *testing.T) {
	m := newBacklogModel("main", "run-1")
	t0 := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	code0, code1 := 0, 1
	var ops []op
	for _, ev := range []backlog.Event{
		{At: at(0), Kind: backlog.EvRunStarted, Run: &backlog.RunInfo{ID: "run-1", StartedAt: at(0)}},
		{At: at(1), Kind: backlog.EvIssue, Issue: 1},
		{At: at(1), Kind: backlog.EvIssue, Issue: 2},
		{At: at(2), Kind: backlog.EvClaimed, Issue: 1},
		{At: at(3), Kind: backlog.EvWorkerStarted, Issue: 1, Attempt: 1, RunDir: "/b/runs/i1-a1"},
		{At: at(3), Kind: backlog.EvWorkerStarted, Issue: 2, Attempt: 1, RunDir: "/b/runs/i2-a1"},
		{At: at(4), Kind: backlog.EvWorkerFinished, Issue: 1, Outcome: backlog.OutcomeReady, ExitCode: &code0},
		{At: at(5), Kind: backlog.EvMergeStarted, Issue: 1},
		{At: at(5), Kind: backlog.EvVerify, Issue: 1, Outcome: "running"},
		{At: at(6), Kind: backlog.EvVerify, Issue: 1, Outcome: "passed"},
		{At: at(7), Kind: backlog.EvMerged, Issue: 1, Commit: "abc"},
		{At: at(8), Kind: backlog.EvWorkerFinished, Issue: 2, Outcome: backlog.OutcomeFailed, ExitCode: &code1},
		{At: at(9), Kind: backlog.EvParked, Issue: 2, Detail: "failed twice"},
		{At: at(10), Kind: backlog.EvRunFinished, Outcome: "finished", ExitCode: &code1, Detail: "parked #2"},
	} {
		ops = append(ops, m.apply(ev)...)
	}
	want := `+backlog.run root <
+backlog.issue issue/1/1 <root
+backlog.issue issue/2/1 <root
+backlog.worker worker/1/i1-a1 <issue/1/1
+backlog.worker worker/2/i2-a1 <issue/2/1
-worker/1/i1-a1
+backlog.merge merge/1/1 <issue/1/1
+backlog.verify verify/1/1 <merge/1/1
-verify/1/1
-merge/1/1
-issue/1/1
-worker/2/i2-a1 [worker failed]
-issue/2/1 [parked: failed twice]
-root [backlog run failed: parked #2]
`
	if got := tree(ops); got != want {
		t.Errorf("ops:\n%s\nwant:\n%s", got, want)
	}
}
