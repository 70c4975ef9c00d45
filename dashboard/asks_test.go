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

// The wave view lists the waves' questions, the backlog view its
// issues'; answered ones are in neither.
func TestEachViewListsItsOwnWaitingQuestions(t *testing.T) {
	n, issue := 2, 12
	qs := []questions.Question{
		{ID: "q-wave", Wave: &n, AgentID: "A1", State: questions.Pending, Text: "wave?"},
		{ID: "issue-12-abc", Issue: &issue, State: questions.Pending, Text: "issue?"},
		{ID: "q-done", Wave: &n, AgentID: "A2", State: questions.Answered, Text: "done"},
		{ID: "q-late", Wave: &n, AgentID: "A3", State: questions.Unanswered, Text: "late"},
	}
	ids := func(a asks) []string {
		var out []string
		for _, q := range a.waiting {
			out = append(out, q.ID)
		}
		return out
	}
	if got := ids(asks{}.receive(questionsMsg{qs: qs})); strings.Join(got, " ") != "q-wave q-late" {
		t.Fatalf("wave view lists %v", got)
	}
	b := asks{backlog: true}.receive(questionsMsg{qs: qs})
	if got := ids(b); strings.Join(got, " ") != "issue-12-abc" {
		t.Fatalf("backlog view lists %v", got)
	}
	lines := strings.Join(b.lines(100, newPalette(false), clock), "\n")
	if !strings.Contains(lines, "issue-12-abc  issue #12") || !strings.Contains(lines, "a answers") {
		t.Fatalf("backlog view's question lines:\n%s", lines)
	}
}

// The backlog view lists an issue's question and its a key answers it
// through the hook, the keys typed being text.
func TestBacklogViewAnswersAnIssueQuestion(t *testing.T) {
	issue := 12
	var answered []string
	cfg := Config{
		Questions: func(context.Context) ([]questions.Question, error) {
			st := questions.Pending
			if len(answered) > 0 {
				st = questions.Answered
			}
			return []questions.Question{{ID: "issue-12-abc", Issue: &issue, State: st, Text: "Which API?", AskedAt: clock}}, nil
		},
		Answer: func(_ context.Context, id, text string) (string, error) {
			answered = append(answered, id+"="+text)
			return "answered " + id, nil
		},
	}
	m := newBacklogModel(t, cfg, oneRun(t), 120, 40)
	m = drive(t, m, runCmd(loadQuestions(m.cfg))[0])
	if v := m.View(); !strings.Contains(v, "Questions waiting for you (1)") || !strings.Contains(v, "issue-12-abc  issue #12") {
		t.Fatalf("the backlog view does not list the issue's question:\n%s", v)
	}
	m = press(t, m, "a", "v", "2", " ", "q", "tab", "enter")
	if strings.Join(answered, ",") != "issue-12-abc=v2 q" || m.UserQuit() || m.views[m.active].Name() != BacklogViewName {
		t.Fatalf("answered %v (quit %v, view %d)", answered, m.UserQuit(), m.active)
	}
	if v := m.View(); strings.Contains(v, "Questions waiting for you") || !strings.Contains(v, "answered issue-12-abc") {
		t.Fatalf("after the answer:\n%s", v)
	}
}

// While a person types an answer, the question's context (`ask
// --context`) is shown above the answer line, escaped and cut to a few
// lines.
func TestTheAnswerLineShowsTheQuestionsContext(t *testing.T) {
	layout := lanes.New(t.TempDir(), ".wave", "p", "main")
	ctx := "The API has two versions.\nv1 is frozen \x1b[2J since May.\nv2 needs a migration.\nline four\nline five\nline six"
	if _, err := questions.Post(layout, questions.Ask{Wave: 3, AgentID: "A1", Text: "Which API?", Context: ctx, Blocking: true}, clock.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	m := newTestModel(t, questionHooks(layout), runningLane(), 120, 40)
	m = drive(t, m, runCmd(loadQuestions(m.cfg))[0])
	if strings.Contains(m.View(), "two versions") {
		t.Fatalf("the context shows before the answer line opens:\n%s", m.View())
	}
	view := press(t, m, "a").View()
	for _, want := range []string{"│ The API has two versions.", "│ v1 is frozen", "│ v2 needs a migration.", "│ line four", "2 more lines of context"} {
		if !strings.Contains(view, want) {
			t.Fatalf("the answer line lacks %q of the context:\n%s", want, view)
		}
	}
	if strings.Contains(view, "\x1b[2J") || strings.Contains(view, "line five") {
		t.Fatalf("the context is not escaped or not cut:\n%s", view)
	}
}
