package supervisor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
)

// An open run takes the answers to its workers' questions itself: a
// needs-input issue answered on its source (`backlog answer`, a person's
// comment after the question, the needs-input label removed) goes back
// to its worker in the same worktree with the answer in its prompt, and
// a run with nothing left but questions waits backlog.inputWaitMinutes
// for them before it ends.

// answerPollGitHub is how often an open run asks GitHub whether its
// questions were answered (Options.AnswerPoll overrides): each look is
// two API calls per waiting issue, some 240 an hour for one question.
// The local source is read at every sweep: it costs a file read.
const answerPollGitHub = 30 * time.Second

func (s *Supervisor) answerPoll() time.Duration {
	if s.o.AnswerPoll > 0 {
		return s.o.AnswerPoll
	}
	if s.o.Source.Kind() == forge.KindGitHub {
		return answerPollGitHub
	}
	return 0
}

// asked are the run's issues whose worker asked a question, unanswered
// so far, whose claim the run still holds.
func (s *Supervisor) asked() []*backlog.IssueRun {
	var out []*backlog.IssueRun
	for _, is := range s.run().List() {
		if is.State == backlog.StateNeedsInput && !is.Released {
			out = append(out, is)
		}
	}
	return out
}

// askMarker ends the comment that asks issue n's question after the
// given number of answers: the first keeps the marker runs always had,
// later rounds carry their number, so each is posted once.
func (s *Supervisor) askMarker(n, answers int) string {
	if answers == 0 {
		return s.marker("needs-input", n)
	}
	return fmt.Sprintf("<!-- wave-orchestrator:needs-input run=%s issue=%d round=%d -->", s.run().Info.ID, n, answers+1)
}

// askIntent names the writes of issue n's question in its round.
func askIntent(what string, n, answers int) string {
	id := what + "-needs-input-" + strconv.Itoa(n)
	if answers > 0 {
		id += "-r" + strconv.Itoa(answers+1)
	}
	return id
}

// ask posts a worker's question on its issue and adds the needs-input
// label, each once per round of questions (a worker that was answered
// may ask again).
func (s *Supervisor) ask(ctx context.Context, j *job, q string) error {
	n, k := j.w.n, j.w.is.Answers
	m := s.askMarker(n, k)
	if _, err := s.writeOnce(ctx, j, backlog.Intent{ID: askIntent("comment", n, k), Op: backlog.OpComment, Issue: n, Marker: m,
		Body: backlog.NeedsInputComment(q) + "\n\n" + m}); err != nil {
		return err
	}
	_, err := s.writeOnce(ctx, j, backlog.Intent{ID: askIntent("label", n, k), Op: backlog.OpLabel, Issue: n,
		Label: s.o.Config.Backlog.NeedsInputLabel})
	return err
}

// answersJob is the job key of the look for answers (not an issue).
const answersJob = -1

// takeAnswers looks for the answers to the run's open questions (every
// sweep on the local source, every answerPoll on GitHub) and sends each
// answered issue back to its worker. The look is a job of its own: a
// GitHub rate-limit wait in it never holds the loop (exits, merges and
// starts go on). The answer is recorded before anything acts on it, and
// an issue once answered is no longer asked about, so a supervisor
// killed at any point records it once.
func (s *Supervisor) takeAnswers(ctx context.Context) error {
	asked := s.asked()
	if len(asked) == 0 || s.run().Finishing || s.busyJob(answersJob) {
		return nil
	}
	if p := s.answerPoll(); p > 0 && s.o.Now().Sub(s.answersAt) < p {
		return nil
	}
	s.answersAt = s.o.Now()
	type ask struct {
		n, answers int
		question   string
	}
	var look []ask
	for _, is := range asked {
		look = append(look, ask{is.Number, is.Answers, is.Question})
	}
	actx, cancel := context.WithCancel(ctx)
	s.stopAnswers = cancel
	lookAll := func(ctx context.Context, j *job) error {
		defer cancel()
		var took bool
		for _, a := range look {
			ok, err := s.lookForAnswer(ctx, j, a.n, a.answers, a.question)
			if err != nil && actx.Err() != nil {
				return nil // a stop cut the look short: the next run looks again
			}
			if err != nil {
				return err
			}
			took = took || ok
		}
		if took {
			j.onLoop(func() { s.checkpoint("answered") })
		}
		return nil
	}
	if s.o.Source.Kind() != forge.KindGitHub {
		return lookAll(actx, s.inline(nil)) // a file read: no rate limit to wait out
	}
	return s.goJob(actx, answersJob, nil, lookAll)
}

// cancelAnswers ends a look for answers under way, if any.
func (s *Supervisor) cancelAnswers() {
	if s.stopAnswers != nil {
		s.stopAnswers()
	}
}

// lookForAnswer reads issue n and records the answer to its question
// (asked after answers earlier ones), if it has one; in the look's job.
func (s *Supervisor) lookForAnswer(ctx context.Context, j *job, n, answers int, question string) (bool, error) {
	self := ""
	if sl, ok := s.o.Source.(selfLogin); ok {
		login, err := sl.Self(ctx)
		if err != nil {
			return false, fmt.Errorf("look for answers: %w", err)
		}
		self = login
	}
	fresh, err := s.o.Source.Get(ctx, n)
	if errors.Is(err, forge.ErrNotFound) {
		return false, nil // gone from the source: the run's end releases it
	}
	if err != nil {
		return false, fmt.Errorf("#%d: look for an answer: %w", n, err)
	}
	if fresh.State != "" && fresh.State != "open" {
		return false, nil
	}
	a, ok := backlog.FindAnswer(fresh, s.askMarker(n, answers), self, s.o.Config.Backlog.NeedsInputLabel)
	if !ok {
		return false, nil
	}
	var took bool
	j.onLoop(func() {
		is := s.run().Issues[n]
		if is == nil || is.State != backlog.StateNeedsInput || is.Answers != answers {
			return // answered (or gone) since the look began
		}
		s.issues[n] = fresh // the worker's prompt quotes the issue as it is now
		if err = s.emit(backlog.Event{Kind: backlog.EvAnswered, Issue: n, Question: question, Answer: a.Text,
			By: a.By, Outcome: a.Via}); err != nil {
			return
		}
		s.printf("#%d answered %s; its worker goes on in %s", n, answeredHow(a), firstNonEmpty(is.Worktree, "its worktree"))
		took = true
	})
	return took, err
}

// answeredHow says who answered and how, for the supervisor's output.
func answeredHow(a backlog.Answer) string {
	by := ""
	if a.By != "" {
		by = " by " + oneLine(a.By)
	}
	switch a.Via {
	case backlog.AnsweredLabel:
		return "(its needs-input label was removed, with no answer in words)"
	case backlog.AnsweredCommand:
		return "with `backlog answer`" + by + ": " + oneLine(a.Text)
	}
	return "in a comment" + by + ": " + oneLine(a.Text)
}

// unlabelAnswered takes the needs-input label off an answered issue
// before its worker goes on: answered by a comment, the label is still
// there, and dispatch would take it for a new question. Once per answer;
// a restart between the answer and the worker's start does it then.
func (s *Supervisor) unlabelAnswered(ctx context.Context, j *job) error {
	is := j.w.is
	if is.Outcome != backlog.OutcomeAnswered {
		return nil
	}
	_, err := s.writeOnce(ctx, j, backlog.Intent{ID: fmt.Sprintf("unlabel-needs-input-%d-a%d", is.Number, is.Answers),
		Op: backlog.OpUnlabel, Issue: is.Number, Label: s.o.Config.Backlog.NeedsInputLabel})
	return err
}

// awaitAnswers is asked when the run has nothing left to do: true while
// it should go on waiting for answers to its questions. The wait starts
// with an input_wait event (so a restarted supervisor keeps its end),
// lasts backlog.inputWaitMinutes (negative: until answered) and ends
// with an answer or with a gave-up event, after which the run ends.
func (s *Supervisor) awaitAnswers() (bool, error) {
	r := s.run()
	limit := s.o.Config.Backlog.InputWait()
	asked := s.asked()
	if r.Finishing || limit == 0 || len(asked) == 0 {
		return false, nil
	}
	now := s.o.Now().UTC()
	w := r.WaitingForAnswers()
	if w == nil {
		var until *time.Time
		if limit > 0 {
			u := now.Add(limit)
			until = &u
		}
		if err := s.emit(backlog.Event{Kind: backlog.EvInputWait, At: now, Outcome: backlog.InputWaiting, Until: until}); err != nil {
			return false, err
		}
		s.printf("%s; answer with `backlog answer N TEXT`, a comment on the issue, or by removing the %s label",
			backlog.InputWaitLine(*backlog.NewAnswerWait(r)), s.o.Config.Backlog.NeedsInputLabel)
		return true, nil
	}
	if w.Until == nil || now.Before(*w.Until) {
		return true, nil
	}
	if err := s.emit(backlog.Event{Kind: backlog.EvInputWait, Outcome: backlog.InputGaveUp}); err != nil {
		return false, err
	}
	s.printf("no answer to %s by %s (backlog.inputWaitMinutes); ending the run: an answer later is taken by the next `backlog run`",
		strings.Join(issueRefs(issueNumbers(asked)), " "), w.Until.UTC().Format(time.RFC3339))
	return false, nil
}

func issueNumbers(iss []*backlog.IssueRun) []int {
	out := make([]int, len(iss))
	for i, is := range iss {
		out[i] = is.Number
	}
	return out
}

func issueRefs(ns []int) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = "#" + strconv.Itoa(n)
	}
	return out
}
