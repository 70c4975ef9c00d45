package state

import (
	"testing"
	"time"
)

// An agent whose run ended with a blocking question reads as
// waiting-for-input in every view while the question holds the wave, and
// as its run's outcome again once answered (also when the answer comes
// from the coordination log's overlay, after the fold); the relaunch with
// the answer is its second attempt, and a retry after it its third.
func TestAnAgentHeldByItsQuestionWaitsForInputAndItsRelaunchIsAnotherAttempt(t *testing.T) {
	s := new(script).add(EntityWaveRun, "started", 0, started("A1", "A2")).
		add(EntityAttempt, "running", 1, map[string]any{"phase": "implementation"}).
		add(EntityAgentRun, "started", 1, AgentRunData{AgentID: "A1", RunDir: "/r/A1-a1"}).
		add(EntityAgentRun, "started", 1, AgentRunData{AgentID: "A2", RunDir: "/r/A2-a1"}).
		add(EntityAgentRun, AgentCompleted, 1, AgentRunData{AgentID: "A1", ExitCode: code(0), StatusCode: "0"})
	asked := NewEvent("main", 0, EntityQuestion, "q-1", QuestionAsked, 1, Data(QuestionData{AgentID: "A1", Text: "Which?", Blocking: true}))
	asked.RecordedAt = s.at
	s.evs = append(s.evs, asked)
	s.at = s.at.Add(time.Second)

	agent := func(ws []Wave, id string) Agent {
		t.Helper()
		for _, a := range ws[0].Agents {
			if a.ID == id {
				return a
			}
		}
		t.Fatalf("no agent %s in %+v", id, ws[0].Agents)
		return Agent{}
	}
	ws := Reduce(s.evs, nil, nil, s.at)
	if a := agent(ws, "A1"); a.State != AgentWaitingForInput || a.Attempt != 1 || a.ExitCode == nil || *a.ExitCode != 0 {
		t.Fatalf("A1 while its question waits: %s attempt %d exit %v, want waiting-for-input attempt 1 exit 0", a.State, a.Attempt, a.ExitCode)
	}
	if a := agent(ws, "A2"); a.State != AgentLaunching {
		t.Fatalf("A2, which asked nothing: %s", a.State)
	}
	if ws[0].Status != WaveWaitingForInput {
		t.Fatalf("wave %s, want waiting-for-input", ws[0].Status)
	}
	// The fold itself keeps the run's outcome: only views are marked.
	if f := FoldEvents(s.evs); f.waves[0].Agents[0].State != AgentCompleted {
		t.Fatalf("the fold holds A1 as %s, want completed", f.waves[0].Agents[0].State)
	}

	// Answered in the coordination log, not yet in the event log: the
	// overlay's SetWaiting gives A1 its outcome back.
	w := ws[0]
	w.Questions[0].State, w.Questions[0].Answer = "answered", "this one"
	w.SetWaiting()
	if a := agent([]Wave{w}, "A1"); a.State != AgentCompleted || w.Status != WaveRunning {
		t.Fatalf("after the answer: A1 %s, wave %s; want completed, running", a.State, w.Status)
	}

	answered := NewEvent("main", 0, EntityQuestion, "q-1", QuestionAnswered, 1, Data(QuestionData{AgentID: "A1", Answer: "this one"}))
	answered.RecordedAt = s.at
	s.evs = append(s.evs, answered)
	relaunch := Data(AgentRunData{AgentID: "A1", RunDir: "/r/A1-a2"})
	relaunch["relaunchedFor"], relaunch["adopted"] = "answer", false
	s.add(EntityAgentRun, "started", 1, relaunch)
	if a := agent(Reduce(s.evs, nil, nil, s.at), "A1"); a.State != AgentLaunching || a.Attempt != 2 || a.RunDir != "/r/A1-a2" {
		t.Fatalf("A1 relaunched with the answer: %s attempt %d run %s, want launching attempt 2 /r/A1-a2", a.State, a.Attempt, a.RunDir)
	}
	s.add(EntityAgentRun, AgentFailed, 1, AgentRunData{AgentID: "A1", ExitCode: code(1), StatusCode: "1"}).
		add(EntityAgentRun, "started", 2, AgentRunData{AgentID: "A1", RunDir: "/r/A1-a3"})
	if a := agent(Reduce(s.evs, nil, nil, s.at), "A1"); a.Attempt != 3 {
		t.Fatalf("A1 retried after its relaunch: attempt %d, want 3", a.Attempt)
	}
	adopted := Data(AgentRunData{AgentID: "A1", RunDir: "/r/A1-a3"})
	adopted["adopted"] = true
	s.add(EntityAgentRun, "started", 2, adopted)
	if a := agent(Reduce(s.evs, nil, nil, s.at), "A1"); a.Attempt != 3 {
		t.Fatalf("A1's run adopted: attempt %d, want 3 (the same run)", a.Attempt)
	}
}

// A finished wave holds nobody: its agents keep their outcome even when a
// question of theirs was never answered.
func TestAFinishedWaveShowsNoAgentWaitingForInput(t *testing.T) {
	s := new(script).add(EntityWaveRun, "started", 0, started("A1")).
		add(EntityAgentRun, "started", 1, AgentRunData{AgentID: "A1", RunDir: "/r/A1-a1"}).
		add(EntityAgentRun, AgentCompleted, 1, AgentRunData{AgentID: "A1", ExitCode: code(0)})
	asked := NewEvent("main", 0, EntityQuestion, "q-1", QuestionAsked, 1, Data(QuestionData{AgentID: "A1", Text: "Which?", Blocking: true}))
	s.evs = append(s.evs, asked)
	s.add(EntityWaveRun, WaveBlocked, 1, nil)
	if a := Reduce(s.evs, nil, nil, s.at)[0].Agents[0]; a.State != AgentCompleted {
		t.Fatalf("A1 in a blocked wave: %s, want completed", a.State)
	}
}
