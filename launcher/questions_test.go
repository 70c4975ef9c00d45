package launcher

import (
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

// A finished run waits for its agent's pending blocking questions and is
// relaunched for answers it could not have read; anything else needs
// nothing.
func TestAFinishedRunWaitsForPendingQuestionsAndRerunsForLateAnswers(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	started, ended := t0, t0.Add(time.Minute)
	at := func(d time.Duration) *time.Time { x := t0.Add(d); return &x }
	q := func(agent string, blocking bool, state string, answered *time.Time) questions.Question {
		return questions.Question{ID: "q-" + agent + state, AgentID: agent, Blocking: blocking, State: state, AskedAt: t0.Add(10 * time.Second), AnsweredAt: answered}
	}
	for _, tc := range []struct {
		name          string
		qs            []questions.Question
		pending, late int
	}{
		{"no question", nil, 0, 0},
		{"pending blocking", []questions.Question{q("A1", true, questions.Pending, nil)}, 1, 0},
		{"given up still waits", []questions.Question{q("A1", true, questions.Unanswered, nil)}, 1, 0},
		{"pending non-blocking", []questions.Question{q("A1", false, questions.Pending, nil)}, 0, 0},
		{"another agent's", []questions.Question{q("A2", true, questions.Pending, nil)}, 0, 0},
		{"answered after the run ended", []questions.Question{q("A1", true, questions.Answered, at(2*time.Minute))}, 0, 1},
		{"answered while it waited (ask --wait)", []questions.Question{q("A1", true, questions.Answered, at(30*time.Second))}, 0, 0},
		{"answered before the run started (in its prompt)", []questions.Question{q("A1", true, questions.Answered, at(-time.Minute))}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, l := answerState(tc.qs, "A1", started, ended)
			if len(p) != tc.pending || len(l) != tc.late {
				t.Fatalf("pending %d late %d, want %d %d", len(p), len(l), tc.pending, tc.late)
			}
		})
	}
}

// The prompt heading the local agent and the docs name is the one
// questions writes.
func TestAnswersHeadingIsTheOnePromptsUse(t *testing.T) {
	if questions.HeadAnswers != "Answers from people:" {
		t.Fatalf("heading %q", questions.HeadAnswers)
	}
}
