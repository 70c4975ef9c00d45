package dashboard

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

// questionHooks wires a model to a real lane's questions.
func questionHooks(layout lanes.Layout) Config {
	return Config{
		Questions: func(context.Context) ([]questions.Question, error) {
			qs, _, err := questions.List(layout)
			return qs, err
		},
		Answer: func(ctx context.Context, id, text string) (string, error) {
			q, err := questions.Answer(ctx, layout, id, text, "dashboard", false, questions.AnswerOptions{})
			if err != nil {
				return "", err
			}
			return "answered " + q.ID, nil
		},
	}
}

// A question an agent asked is listed in the wave view; a, the answer,
// enter answers it through the questions package — keys the dashboard
// binds (q quits) are text while the answer line is open.
func TestDashboardAnswersTheSelectedQuestion(t *testing.T) {
	layout := lanes.New(t.TempDir(), ".wave", "p", "main")
	first, err := questions.Post(layout, questions.Ask{Wave: 3, AgentID: "A1", Text: "first?"}, clock.Add(-2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	second, err := questions.Post(layout, questions.Ask{Wave: 3, AgentID: "A2", Text: "which colour?\x1b[31m red", Blocking: true}, clock.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	m := newTestModel(t, questionHooks(layout), runningLane(), 120, 40)
	m = drive(t, m, runCmd(loadQuestions(m.cfg))[0])
	view := m.View()
	if !strings.Contains(view, "Questions waiting for you (2)") || !strings.Contains(view, first.ID) || !strings.Contains(view, second.ID) {
		t.Fatalf("the wave view does not list both questions:\n%s", view)
	}
	if strings.Contains(view, "\x1b[31m") {
		t.Fatal("a question's escape sequence reached the terminal raw")
	}
	m = press(t, m, "a", "down", "b", "l", "u", "e", " ", "q", "?", "tab", "enter")
	if m.UserQuit() {
		t.Fatal("q in the answer line quit the dashboard")
	}
	qs, _, err := questions.List(layout)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, q := range qs {
		got[q.ID] = q.State + ":" + q.Answer + ":" + q.Operator
	}
	if got[second.ID] != "answered:blue q?:dashboard" || got[first.ID] != "pending::" {
		t.Fatalf("after answering the second question: %v", got)
	}
	view = m.View()
	if !strings.Contains(view, "answered "+second.ID) || !strings.Contains(view, "Questions waiting for you (1)") {
		t.Fatalf("the view after the answer:\n%s", view)
	}
	// esc leaves the line without answering.
	m = press(t, m, "a", "n", "o", "esc")
	if qs, _, _ := questions.List(layout); questions.PendingOf(qs)[0].ID != first.ID {
		t.Fatal("esc answered the question")
	}
}

func TestAnswerKeyWithoutAQuestionOrAHookSaysWhatToDo(t *testing.T) {
	layout := lanes.New(t.TempDir(), ".wave", "p", "main")
	cfg := questionHooks(layout)
	m := newTestModel(t, cfg, runningLane(), 120, 40)
	if m = press(t, m, "a"); !strings.Contains(m.View(), "no question waits for an answer here") {
		t.Fatalf("a with no question:\n%s", m.View())
	}
	q, _ := questions.Post(layout, questions.Ask{Wave: 3, AgentID: "A1", Text: "which?"}, clock)
	cfg.Answer = nil
	m = newTestModel(t, cfg, runningLane(), 120, 40)
	m = drive(t, m, runCmd(loadQuestions(m.cfg))[0])
	if m = press(t, m, "a"); !strings.Contains(m.View(), "run: wave-orchestrator answer "+q.ID+" TEXT") {
		t.Fatalf("a without an answer hook:\n%s", m.View())
	}
}
