package state

import (
	"testing"
	"time"
)

// Question events hold a running wave in waiting-for-input while a
// blocking question waits, and release it once answered; a non-blocking
// question never holds it, and a new wave run keeps what still waits.
func TestQuestionEventsMoveTheWaveThroughWaitingForInput(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ev := func(entity, id, action string, data any) Event {
		e := NewEvent("main", 0, entity, id, action, 1, Data(data))
		e.RecordedAt = at
		return e
	}
	started := ev(EntityWaveRun, "wave-0", "started", WaveStarted{Agents: []AgentInfo{{ID: "A1"}}})
	asked := ev(EntityQuestion, "q-1", QuestionAsked, QuestionData{AgentID: "A1", Text: "Which?", Blocking: true})
	soft := ev(EntityQuestion, "q-2", QuestionAsked, QuestionData{AgentID: "A1", Text: "Later?"})
	answered := ev(EntityQuestion, "q-1", QuestionAnswered, QuestionData{AgentID: "A1", Answer: "this", Operator: "ana"})
	given := ev(EntityQuestion, "q-1", QuestionUnanswered, QuestionData{AgentID: "A1"})
	done := ev(EntityWaveRun, "wave-0", WaveCompleted, nil)
	for _, tc := range []struct {
		name   string
		events []Event
		status string
		states []string
	}{
		{"no question", []Event{started}, WaveRunning, nil},
		{"blocking asked", []Event{started, asked}, WaveWaitingForInput, []string{"pending"}},
		{"non-blocking asked", []Event{started, soft}, WaveRunning, []string{"pending"}},
		{"answered", []Event{started, asked, answered}, WaveRunning, []string{"answered"}},
		{"given up still waits", []Event{started, asked, given}, WaveWaitingForInput, []string{"unanswered"}},
		{"a new wave run keeps the waiting one", []Event{started, asked, started}, WaveWaitingForInput, []string{"pending"}},
		{"a new wave run drops the answered one", []Event{started, asked, answered, started}, WaveRunning, nil},
		{"finished waves are not waiting", []Event{started, asked, done}, WaveCompleted, []string{"pending"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := Reduce(tc.events, nil, nil, at)
			if len(ws) != 1 {
				t.Fatalf("waves %+v", ws)
			}
			w := ws[0]
			var states []string
			for _, q := range w.Questions {
				states = append(states, q.State)
			}
			if w.Status != tc.status || len(states) != len(tc.states) {
				t.Fatalf("status %q questions %v, want %q %v", w.Status, states, tc.status, tc.states)
			}
			for i := range states {
				if states[i] != tc.states[i] {
					t.Fatalf("questions %v, want %v", states, tc.states)
				}
			}
		})
	}
}
