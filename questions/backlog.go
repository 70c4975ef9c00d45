package questions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

// IssueAnswerer is what answering a backlog question needs from the
// issue source (forge.Source has it): the answer as a comment (once, by
// its marker) and the needs-input label removed.
type IssueAnswerer interface {
	EnsureComment(ctx context.Context, n int, marker, body string) (backlog.Comment, error)
	RemoveLabel(ctx context.Context, n int, label string) error
}

// backlogAnswer is one answer `answer` gave a backlog question, kept in
// the lane state (questions/backlog-answers.jsonl) so `questions` knows
// it was answered without asking the issue source.
type backlogAnswer struct {
	ID       string    `json:"id"`
	Issue    int       `json:"issue"`
	Answer   string    `json:"answer"`
	Operator string    `json:"operator"`
	At       time.Time `json:"at"`
}

func answersPath(layout lanes.Layout) string {
	return filepath.Join(layout.StateDir, "questions", "backlog-answers.jsonl")
}

// backlogID names issue n's question text: the same words asked again
// are the same question, a new question a new id.
func backlogID(n int, text string) string {
	sum := sha256.Sum256([]byte(text))
	return fmt.Sprintf("issue-%d-%s", n, hex.EncodeToString(sum[:3]))
}

// Kinds of a backlog question: its worker asked (needs-input), or the run
// set the issue aside with a question for a person (parked).
const (
	KindNeedsInput = "needs-input"
	KindParked     = "parked"
)

// asking is the kind of question issue is waiting on in its run, "" when
// none: needs-input always, parked when the run left a question.
func asking(is *backlog.IssueRun) string {
	switch {
	case is.State == backlog.StateNeedsInput:
		return KindNeedsInput
	case is.State == backlog.StateParked && strings.TrimSpace(is.Question) != "":
		return KindParked
	}
	return ""
}

// backlogQuestions are the needs-input and parked issues (those parked
// with a question) of the lane's backlog runs: the newest run that has an
// issue says whether it still waits (a later run that took it again means
// it was answered).
func backlogQuestions(layout lanes.Layout) ([]Question, []string) {
	dirs, err := runlog.List(layout.StateDir)
	if err != nil {
		return nil, []string{err.Error()}
	}
	answers, bad, _ := jsonfile.ReadLines[backlogAnswer](answersPath(layout))
	var problems []string
	for _, b := range bad {
		problems = append(problems, fmt.Sprintf("%s: unreadable line: %s", answersPath(layout), b))
	}
	answered := map[string]backlogAnswer{}
	for _, a := range answers {
		answered[a.ID] = a
	}
	latest := map[int]*Question{}
	var order []int
	for _, d := range dirs {
		r, _, err := runlog.Read(d)
		if err != nil {
			problems = append(problems, fmt.Sprintf("backlog run %s: %v", d, err))
			continue
		}
		for _, is := range r.List() {
			prev, seen := latest[is.Number]
			if !seen {
				order = append(order, is.Number)
			}
			kind := asking(is)
			if kind == "" && is.Answer != nil {
				// Answered while its run was open (the run's answered event).
				q := answeredInRun(layout, r.Info.ID, r.Info.StartedAt, is)
				if a, ok := answered[q.ID]; ok && strings.TrimSpace(a.Operator) != "" {
					// Who answered, as recorded; the event has the
					// comment's author, the issue source's account.
					q.Operator = a.Operator
				}
				latest[is.Number] = q
				continue
			}
			if kind == "" {
				if prev != nil && prev.State != Answered {
					// Taken again by a later run: answered somewhere.
					at := r.Info.StartedAt
					prev.State, prev.AnsweredAt = Answered, &at
				}
				continue
			}
			text := strings.TrimSpace(cmpOr(is.Question, is.Title))
			n := is.Number
			q := &Question{ID: backlogID(n, text), Lane: layout.Lane, Issue: &n, RunID: r.Info.ID,
				Kind: kind, Text: text, Blocking: true, State: Pending, AskedAt: r.Info.StartedAt,
				Attempt: is.Attempts}
			if kind == KindParked {
				q.Context = strings.TrimSpace(is.Detail) // why it was parked
			}
			if a, ok := answered[q.ID]; ok {
				at := a.At
				q.State, q.Answer, q.Operator, q.AnsweredAt = Answered, a.Answer, a.Operator, &at
			}
			latest[n] = q
		}
	}
	var out []Question
	for _, n := range order {
		if q := latest[n]; q != nil {
			out = append(out, *q)
		}
	}
	return out, problems
}

// IssueAnswered is issue is's answered question as `questions --json`
// prints it, for a worker started again with the answer
// ($WAVE_ANSWERS_FILE); is.Answer must be set.
func IssueAnswered(layout lanes.Layout, runID string, asked time.Time, is *backlog.IssueRun) Question {
	return *answeredInRun(layout, runID, asked, is)
}

// answeredInRun is the question an open run saw answered (a comment, the
// label removed, or `backlog answer`), with the answer and who gave it.
func answeredInRun(layout lanes.Layout, runID string, asked time.Time, is *backlog.IssueRun) *Question {
	a := is.Answer
	text := strings.TrimSpace(cmpOr(a.Question, cmpOr(is.Question, is.Title)))
	n, at := is.Number, a.At
	return &Question{ID: backlogID(n, text), Lane: layout.Lane, Issue: &n, RunID: runID,
		Kind: KindNeedsInput, Text: text, Blocking: true, State: Answered, AskedAt: asked,
		Attempt: is.Attempts, Answer: a.Text, Operator: a.By, AnsweredAt: &at}
}

func cmpOr(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}

// issueOf reads "#12", "12" or "issue-12" as issue 12.
func issueOf(id string) (int, bool) {
	s := strings.TrimPrefix(strings.TrimPrefix(id, "#"), "issue-")
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

// answerBacklog records the answer (intent first: the local record is
// what `questions` reads, and the source's writes are idempotent by the
// comment marker), then comments and removes the needs-input label.
func answerBacklog(ctx context.Context, layout lanes.Layout, q Question, text, operator string, opt AnswerOptions) (Question, error) {
	if opt.Issues == nil {
		return q, fmt.Errorf("answer %s: issue #%d is a backlog question and no issue source was given", q.ID, *q.Issue)
	}
	now := opt.now()
	if err := jsonfile.Append(answersPath(layout), backlogAnswer{ID: q.ID, Issue: *q.Issue, Answer: text, Operator: operator, At: now}); err != nil {
		return q, fmt.Errorf("answer %s: %w", q.ID, err)
	}
	body, marker := backlog.AnswerComment(text)
	if _, err := opt.Issues.EnsureComment(ctx, *q.Issue, marker, body); err != nil {
		return q, fmt.Errorf("answer #%d: %w", *q.Issue, err)
	}
	if opt.NeedsInputLabel != "" {
		if err := opt.Issues.RemoveLabel(ctx, *q.Issue, opt.NeedsInputLabel); err != nil {
			return q, fmt.Errorf("answer #%d: remove the %s label: %w", *q.Issue, opt.NeedsInputLabel, err)
		}
	}
	q.State, q.Answer, q.Operator, q.AnsweredAt = Answered, text, operator, &now
	return q, nil
}
