package control

import (
	"encoding/json"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/coord"
	"github.com/wave-orchestrator/wave-orchestrator/internal/docschema"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

func wave(status string, mut func(*state.Wave)) *state.Wave {
	w := &state.Wave{Wave: 3, Status: status, Phase: "implementation", Attempt: 1, MaxAttempts: 2,
		Closure: []state.Stage{{Phase: "cont-qa-closure", State: state.StagePending, Agents: []string{"A0"}}},
		Agents: []state.Agent{
			{ID: "A1", Role: "implementation", State: state.AgentRunning},
			{ID: "A0", Role: "cont-qa", State: state.AgentPending},
		},
		Failures: []state.Failure{}, Blockers: []state.Blocker{}}
	if mut != nil {
		mut(w)
	}
	return w
}

func TestControlStatusMapsTheReducedWave(t *testing.T) {
	question := state.Blocker{ID: "q-1", Kind: "human-feedback", AgentID: "A1", Summary: "which port?"}
	blocker := state.Blocker{ID: "b-1", Kind: "blocker", AgentID: "A1", Summary: "schema undecided"}
	cases := []struct {
		name                      string
		w                         *state.Wave
		exec, closure, ctrl, edge string
		agents                    []string // logical states of A1, A0
	}{
		{"not run", nil, ExecPending, ClosurePending, CtrlIdle, "", []string{AgentPlanned, AgentPlanned}},
		{"running", wave(state.WaveRunning, nil), ExecActive, ClosurePending, CtrlActive, "", []string{AgentWorking, AgentPlanned}},
		{"closure running", wave(state.WaveRunning, func(w *state.Wave) {
			w.Phase, w.Closure[0].State = "cont-qa-closure", state.StageRunning
			w.Agents[0].State, w.Agents[1].State = state.AgentCompleted, state.AgentRunning
		}), ExecActive, ClosureEvaluating, CtrlActive, "", []string{AgentSatisfied, AgentWorking}},
		{"interrupted", wave(state.WaveInterrupted, nil), ExecInterrupted, ClosurePending, CtrlRelaunch, "", []string{AgentWorking, AgentPlanned}},
		{"question", wave(state.WaveRunning, func(w *state.Wave) { w.Blockers = []state.Blocker{blocker, question} }),
			ExecActive, ClosureBlocked, CtrlWaitingUser, EdgeHuman + " q-1", []string{AgentBlocked, AgentPlanned}},
		{"blocker", wave(state.WaveBlocked, func(w *state.Wave) { w.Blockers = []state.Blocker{blocker} }),
			ExecSettled, ClosureBlocked, CtrlIdle, EdgeRecord + " b-1", []string{AgentBlocked, AgentPlanned}},
		{"completed", wave(state.WaveCompleted, func(w *state.Wave) {
			w.Phase, w.Closure[0].State = "completed", state.StagePassed
			w.Agents[0].State, w.Agents[1].State = state.AgentReused, state.AgentCompleted
		}), ExecSettled, ClosurePassed, CtrlIdle, "", []string{AgentSatisfied, AgentSatisfied}},
		{"failed gate", wave(state.WaveFailed, func(w *state.Wave) {
			w.Agents[0].State, w.Agents[0].StatusCode = state.AgentFailed, "missing-wave-proof"
			w.Failures = []state.Failure{{AgentID: "A1", Gate: "implementationGate", StatusCode: "missing-wave-proof"}}
		}), ExecSettled, ClosureFailed, CtrlIdle, EdgeGate + " implementationGate", []string{AgentRerun, AgentPlanned}},
		{"waiting for input", wave(state.WaveWaitingForInput, func(w *state.Wave) {
			w.Questions = []state.Question{{ID: "q-9", AgentID: "A1", Blocking: true, State: "pending"}}
		}), ExecActive, ClosureBlocked, CtrlWaitingUser, EdgeHuman + " q-9", []string{AgentWorking, AgentPlanned}},
		{"the asking agent's run ended", wave(state.WaveWaitingForInput, func(w *state.Wave) {
			w.Questions = []state.Question{{ID: "q-9", AgentID: "A1", Blocking: true, State: "pending"}}
			w.Agents[0].State = state.AgentWaitingForInput
		}), ExecActive, ClosureBlocked, CtrlWaitingUser, EdgeHuman + " q-9", []string{AgentBlocked, AgentPlanned}},
		{"stopped", wave(state.WaveStopped, func(w *state.Wave) { w.Agents[0].State = state.AgentTerminated }),
			ExecSettled, ClosurePending, CtrlIdle, "", []string{AgentStopped, AgentPlanned}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := FromWave(Input{Lane: "main", Wave: tc.w, Number: 3,
				Planned: []PlannedAgent{{"A1", "implementation"}, {"A0", "cont-qa"}}})
			if s.ExecutionState != tc.exec || s.ClosureState != tc.closure || s.ControllerState != tc.ctrl {
				t.Errorf("states = %s/%s/%s, want %s/%s/%s", s.ExecutionState, s.ClosureState, s.ControllerState, tc.exec, tc.closure, tc.ctrl)
			}
			edge := ""
			if s.BlockingEdge != nil {
				edge = s.BlockingEdge.Kind + " " + s.BlockingEdge.ID
			}
			if edge != tc.edge {
				t.Errorf("blockingEdge = %q, want %q", edge, tc.edge)
			}
			var got []string
			for _, a := range s.LogicalAgents {
				got = append(got, a.State)
			}
			if len(got) != 2 || got[0] != tc.agents[0] || got[1] != tc.agents[1] {
				t.Errorf("logical agent states = %v, want %v", got, tc.agents)
			}
		})
	}
}

func TestControlStatusAgentFilterKeepsOneAgentAndItsQuestions(t *testing.T) {
	recs := []coord.Record{
		{ID: "q-1", Kind: "human-feedback", AgentID: "A1", Status: "open", Summary: "which port?"},
		{ID: "q-2", Kind: "clarification-request", AgentID: "A2", Status: "resolved", Summary: "which db?"},
		{ID: "c-1", Kind: "claim", AgentID: "A1", Status: "open", Summary: "taking src"},
	}
	s := FromWave(Input{Lane: "main", Wave: wave(state.WaveRunning, nil), Number: 3, Records: recs, Agent: "A1"})
	if s.AgentID != "A1" || len(s.LogicalAgents) != 1 || s.LogicalAgents[0].AgentID != "A1" {
		t.Fatalf("agent filter: agentId %q, logicalAgents %+v", s.AgentID, s.LogicalAgents)
	}
	if len(s.FeedbackRequests) != 1 || s.FeedbackRequests[0].ID != "q-1" || s.FeedbackRequests[0].State != "pending" {
		t.Fatalf("feedbackRequests = %+v, want q-1 pending only", s.FeedbackRequests)
	}
	all := FromWave(Input{Lane: "main", Wave: wave(state.WaveRunning, nil), Number: 3, Records: recs})
	if len(all.FeedbackRequests) != 2 || all.FeedbackRequests[1].State != "answered" {
		t.Fatalf("feedbackRequests = %+v, want q-1 pending and q-2 answered", all.FeedbackRequests)
	}
}

// Every case above, encoded, matches the tables of docs/status-schema.md.
func TestControlStatusOfReducedWavesMatchesItsDocumentedSchema(t *testing.T) {
	sc, err := docschema.Parse("../docs/status-schema.md", "`control status")
	if err != nil {
		t.Fatal(err)
	}
	recs := []coord.Record{{ID: "q-1", Kind: "human-escalation", AgentID: "A1", Status: "open", Summary: "approve?"}}
	for _, w := range []*state.Wave{nil, wave(state.WaveRunning, nil), wave(state.WaveFailed, func(w *state.Wave) {
		w.Failures = []state.Failure{{Gate: "contQaGate", StatusCode: "cont-qa-fail"}}
	}), wave(state.WaveRunning, func(w *state.Wave) {
		w.Blockers = []state.Blocker{{ID: "q-1", Kind: "human-escalation", AgentID: "A1"}}
	})} {
		b, _ := json.Marshal(FromWave(Input{Lane: "main", Wave: w, Number: 3, Records: recs,
			Planned: []PlannedAgent{{"A1", "implementation"}}}))
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		for _, e := range sc.Validate(v, "ControlStatus") {
			t.Errorf("%s\n%s", e, b)
		}
	}
}
