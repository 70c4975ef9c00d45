package dashboard

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

// questionsMsg delivers the lane's questions, read by Config.Questions
// after every state change.
type questionsMsg struct {
	qs  []questions.Question
	err error
}

// answeredMsg is the outcome of an answer, for the footer; the model
// reads the questions again then (a backlog answer changes no file the
// dashboard watches).
type answeredMsg string

// loadQuestions reads the lane's questions, nil without a hook.
func loadQuestions(cfg Config) tea.Cmd {
	if cfg.Questions == nil {
		return nil
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		qs, err := cfg.Questions(ctx)
		return questionsMsg{qs: qs, err: err}
	}
}

// maxAnswerInput bounds what the answer line takes; a longer answer is
// for `answer --file`.
const maxAnswerInput = 2000

// asksShown is how many waiting questions a view lists before "+N more".
const asksShown = 3

// contextShown is how many lines of the selected question's context the
// answer line shows above it.
const contextShown = 4

// asks is a view's list of the questions that wait for a person and the
// answer line: a opens it on the selected question, ↑/↓ choose another,
// enter sends through Config.Answer, esc cancels. backlog says which
// questions the view lists: its issues' or the waves'.
type asks struct {
	backlog bool
	waiting []questions.Question
	err     error
	sel     int
	typing  bool
	input   filterInput
}

func (a asks) receive(msg questionsMsg) asks {
	a.err = msg.err
	if msg.err != nil {
		return a
	}
	var keep string
	if a.sel < len(a.waiting) {
		keep = a.waiting[a.sel].ID
	}
	a.waiting = nil
	for _, q := range questions.PendingOf(msg.qs) {
		if (q.Issue != nil) == a.backlog {
			a.waiting = append(a.waiting, q)
		}
	}
	a.sel = 0
	for i, q := range a.waiting {
		if q.ID == keep {
			a.sel = i
		}
	}
	if len(a.waiting) == 0 {
		a.typing = false
	}
	return a
}

// open starts the answer line on the selected question.
func (a asks) open(cfg Config) (asks, tea.Cmd) {
	switch {
	case len(a.waiting) == 0:
		return a, Note("no question waits for an answer here")
	case cfg.Answer == nil:
		return a, Note("answering is not available here; run: wave-orchestrator answer %s TEXT", clean(a.waiting[a.sel].ID))
	}
	a.typing, a.input = true, filterInput{limit: maxAnswerInput}
	return a, nil
}

// key edits the answer line; enter sends it.
func (a asks) key(cfg Config, k tea.KeyMsg) (asks, tea.Cmd) {
	switch k.Type {
	case tea.KeyEsc:
		a.typing = false
		return a, Note("not answered")
	case tea.KeyUp:
		a.sel = max(0, a.sel-1)
		return a, nil
	case tea.KeyDown:
		a.sel = min(len(a.waiting)-1, a.sel+1)
		return a, nil
	case tea.KeyEnter:
		text := strings.TrimSpace(a.input.Value())
		if text == "" {
			return a, Note("type the answer first (esc cancels)")
		}
		q := a.waiting[a.sel]
		a.typing = false
		answer := cfg.Answer
		return a, func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
			defer cancel()
			said, err := answer(ctx, q.ID, text)
			if err != nil {
				return answeredMsg("answer " + q.ID + ": " + err.Error())
			}
			return answeredMsg(said)
		}
	}
	a.input = a.input.edit(k)
	return a, nil
}

// lines are the waiting questions and, while typing, the answer line.
func (a asks) lines(width int, p palette, now time.Time) []string {
	if a.err != nil {
		return []string{fit(p.bad.Render("reading the questions: ")+clean(a.err.Error()), width)}
	}
	if len(a.waiting) == 0 {
		return nil
	}
	hint := "a answers"
	if a.typing {
		hint = "↑/↓ question · enter sends · esc cancels"
	}
	out := []string{fit(p.warn.Render(fmt.Sprintf("Questions waiting for you (%d)", len(a.waiting)))+"  "+p.dim.Render(hint), width)}
	first := max(0, min(a.sel-asksShown+1, len(a.waiting)-asksShown))
	for i := first; i < min(len(a.waiting), first+asksShown); i++ {
		q := a.waiting[i]
		mark := "  "
		if i == a.sel {
			mark = "› "
		}
		line := fmt.Sprintf("%s%s  %s  %s  %s", mark, clean(q.ID), clean(q.Where()), ago(now.Sub(q.AskedAt)), clean(q.Text))
		if i == a.sel && a.typing {
			line = p.sel.Render(line)
		}
		out = append(out, fit(line, width))
	}
	if more := len(a.waiting) - asksShown; more > 0 {
		out = append(out, fit(p.dim.Render(fmt.Sprintf("  +%d more (↑/↓ while answering)", more)), width))
	}
	if a.typing {
		out = append(out, contextLines(a.waiting[a.sel], width, p)...)
		out = append(out, fit("answer "+clean(a.waiting[a.sel].ID)+": "+clean(a.input.Value())+"█", width))
	}
	return out
}

// contextLines are the first lines of what the asker gave as the
// question's context (`ask --context`, why an issue was parked): what a
// person needs to answer, shown while they type.
func contextLines(q questions.Question, width int, p palette) []string {
	text := strings.TrimSpace(q.Context)
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	var out []string
	for i, l := range lines {
		if i == contextShown {
			out = append(out, fit(p.dim.Render(fmt.Sprintf("  │ … %d more lines of context (questions --json has them all)", len(lines)-i)), width))
			break
		}
		out = append(out, fit(p.dim.Render("  │ "+clean(l)), width))
	}
	return out
}
