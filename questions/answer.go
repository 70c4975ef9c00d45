package questions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/coord"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

// MaxAnswer bounds an answer: it goes into a record, a comment and a
// prompt.
const MaxAnswer = 64 << 10

// ErrAlreadyAnswered and ErrUnknownID are what AlreadyAnsweredError and
// UnknownIDError match with errors.Is.
var (
	ErrAlreadyAnswered = errors.New("already answered")
	ErrUnknownID       = errors.New("no such question")
)

// AlreadyAnsweredError refuses to answer an answered question without
// force.
type AlreadyAnsweredError struct{ Question Question }

func (e *AlreadyAnsweredError) Error() string {
	return fmt.Sprintf("question %s (%s) is already answered; answer again with --force", e.Question.ID, e.Question.Where())
}

func (e *AlreadyAnsweredError) Is(target error) bool { return target == ErrAlreadyAnswered }

// UnknownIDError is an id no question of the lane has; Pending are the
// questions that wait, for the message.
type UnknownIDError struct {
	ID      string
	Lane    string
	Pending []Question
}

func (e *UnknownIDError) Error() string {
	if len(e.Pending) == 0 {
		return fmt.Sprintf("no question %q in lane %s, and none is pending", e.ID, e.Lane)
	}
	ids := make([]string, len(e.Pending))
	for i, q := range e.Pending {
		ids[i] = q.ID + " (" + q.Where() + ")"
	}
	return fmt.Sprintf("no question %q in lane %s; pending: %s", e.ID, e.Lane, strings.Join(ids, ", "))
}

func (e *UnknownIDError) Is(target error) bool { return target == ErrUnknownID }

// AnswerOptions carry what answering may need besides the lane: the issue
// source for backlog questions (nil: answering one is an error) and its
// needs-input label.
type AnswerOptions struct {
	Issues          IssueAnswerer
	NeedsInputLabel string
	Now             func() time.Time
}

func (o AnswerOptions) now() time.Time {
	if o.Now != nil {
		return o.Now().UTC()
	}
	return time.Now().UTC()
}

// Find returns the question of the lane with id: a question id, or for a
// backlog question also "#12", "12" or "issue-12" (its newest question).
func Find(layout lanes.Layout, id string) (Question, []Question, error) {
	qs, _, err := List(layout)
	if err != nil {
		return Question{}, nil, err
	}
	for _, q := range qs {
		if q.ID == id {
			return q, qs, nil
		}
	}
	if n, ok := issueOf(id); ok {
		for i := len(qs) - 1; i >= 0; i-- {
			if q := qs[i]; q.Issue != nil && *q.Issue == n {
				return q, qs, nil
			}
		}
	}
	return Question{}, qs, &UnknownIDError{ID: id, Lane: layout.Lane, Pending: PendingOf(qs)}
}

// Answer answers question id of the lane with text by operator: a wave
// question gets a resolving update in its coordination log (which the
// live launcher sees and relaunches the agent that asked), a backlog
// question a comment on its issue and the needs-input label removed.
// An answered question is refused unless force.
func Answer(ctx context.Context, layout lanes.Layout, id, text, operator string, force bool, opt AnswerOptions) (Question, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return Question{}, errors.New("answer: the answer is empty")
	}
	if len(text) > MaxAnswer {
		return Question{}, fmt.Errorf("answer: longer than %d bytes", MaxAnswer)
	}
	operator = strings.TrimSpace(operator)
	q, _, err := Find(layout, id)
	if err != nil {
		return q, err
	}
	if q.State == Answered && !force {
		return q, &AlreadyAnsweredError{Question: q}
	}
	if q.Issue != nil {
		return answerBacklog(ctx, layout, q, text, operator, opt)
	}
	return answerWave(layout, q, text, operator, opt.now())
}

func answerWave(layout lanes.Layout, q Question, text, operator string, now time.Time) (Question, error) {
	path := layout.CoordinationPath(*q.Wave)
	recs, _, err := coord.Read(path)
	if err != nil {
		return q, fmt.Errorf("answer %s: %w", q.ID, err)
	}
	var rec *coord.Record
	for _, r := range coord.Materialize(recs) {
		if r.ID == q.ID {
			rec = &r
		}
	}
	if rec == nil {
		return q, &UnknownIDError{ID: q.ID, Lane: layout.Lane}
	}
	up := *rec
	up.Status, up.Answer, up.Operator, up.AnsweredAt = "resolved", text, operator, &now
	// The update is the whole record again: Materialize lets the later
	// line stand for the id.
	if _, err := coord.Post(path, up, &up.Blocking, now); err != nil {
		return q, fmt.Errorf("answer %s: %w", q.ID, err)
	}
	q.State, q.Answer, q.Operator, q.AnsweredAt = Answered, text, operator, &now
	return q, nil
}
