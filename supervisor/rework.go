package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/gate"
)

// verifyTail bounds the end of a failed verify's output sent back to the
// worker: enough for a test failure and its summary.
const verifyTail = 4000

// verifyFailure is backlog.verify failing: its output is the feedback.
type verifyFailure struct {
	err error
	log string // the verify log (its tail goes to the worker)
}

func (e *verifyFailure) Error() string { return e.err.Error() }
func (e *verifyFailure) Unwrap() error { return e.err }

// reviewRejection is the reviewer's fail verdict: its detail is the
// feedback. A reviewer that gave no verdict is not one (nothing to act on).
type reviewRejection struct {
	n      int
	detail string
}

func (e *reviewRejection) Error() string {
	return fmt.Sprintf("review #%d: verdict fail: %s", e.n, oneLine(e.detail))
}

// changeRequests is the forge's view of worker PR reviews (GitHub only).
type changeRequests interface {
	ChangesRequested(ctx context.Context, pr int) ([]forge.Review, error)
}

// reworkOfMerge is the rework a failed verify asks for: the source, a
// one-line detail and the feedback; ok false when the failure is none
// the worker can act on (a reviewer that never answered).
func reworkOfMerge(err error) (from, detail, feedback string, ok bool) {
	var rj *reviewRejection
	if errors.As(err, &rj) {
		return backlog.ReworkReview, rj.Error(), "The reviewer's verdict is fail: " + rj.detail, true
	}
	var vf *verifyFailure
	if errors.As(err, &vf) {
		tail, _ := tailOf(vf.log, verifyTail)
		fb := "The verify step failed: " + vf.err.Error() + ".\nThe end of its output:\n\n" + tail
		return backlog.ReworkVerify, "verify failed: " + oneLine(err.Error()), fb, true
	}
	return "", "", "", false
}

// tailOf is the last n bytes of the file at path, from a line start,
// without terminal escapes.
func tailOf(path string, n int64) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if int64(len(b)) > n {
		b = b[int64(len(b))-n:]
		if i := strings.IndexByte(string(b), '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return strings.TrimRight(gate.StripANSI(string(b)), "\n"), nil
}

// reviewThreads is the forge's view of worker PR review threads (GitHub
// only): the unresolved, current ones.
type reviewThreads interface {
	UnresolvedThreads(ctx context.Context, pr int) ([]forge.Thread, error)
}

// prReviewRework looks at the worker PR's reviews and review threads
// before its merge: a review asking for changes or an unresolved thread
// that no earlier round answered sends the issue back, in one round. It
// reports whether it did (or parked the issue).
func (s *Supervisor) prReviewRework(ctx context.Context, j *job) (bool, error) {
	is := j.w.is
	src, ok := s.o.Source.(changeRequests)
	if !ok || is.PR == nil || is.PR.Number == 0 {
		return false, nil
	}
	reviews, err := src.ChangesRequested(ctx, is.PR.Number)
	if err != nil {
		return false, fmt.Errorf("#%d: reviews of its worker PR #%d: %w", is.Number, is.PR.Number, err)
	}
	var fresh []forge.Review
	var ids []int64
	for _, rv := range reviews {
		if !slices.Contains(is.Reviewed, rv.ID) {
			fresh, ids = append(fresh, rv), append(ids, rv.ID)
		}
	}
	threads, err := s.freshThreads(ctx, j)
	if err != nil {
		return false, err
	}
	if len(fresh) == 0 && len(threads) == 0 {
		return false, nil
	}
	var who, tids []string
	for _, rv := range fresh {
		who = append(who, rv.Author)
	}
	for _, th := range threads {
		tids = append(tids, th.ID)
	}
	from, detail := backlog.ReworkPRReview, fmt.Sprintf("worker PR #%d: changes requested by %s", is.PR.Number, strings.Join(who, ", "))
	switch {
	case len(fresh) == 0:
		from, detail = backlog.ReworkPRThread, fmt.Sprintf("worker PR #%d: %d unresolved review thread(s)", is.PR.Number, len(threads))
	case len(threads) > 0:
		detail += fmt.Sprintf(", and %d unresolved review thread(s)", len(threads))
	}
	feedback := reviewFeedback(fresh)
	if len(threads) > 0 {
		if feedback != "" {
			feedback += "\n\n"
		}
		feedback += threadFeedback(threads)
	}
	return true, s.reworkAnswering(ctx, j, from, detail, feedback, ids, tids)
}

// freshThreads are the worker PR's unresolved review threads that no
// earlier round answered. A token that may not read them (403) is said
// once and the merge goes on without thread checks.
func (s *Supervisor) freshThreads(ctx context.Context, j *job) ([]forge.Thread, error) {
	is := j.w.is
	src, ok := s.o.Source.(reviewThreads)
	var denied bool
	j.onLoop(func() { denied = s.threadsDenied })
	if !ok || denied {
		return nil, nil
	}
	threads, err := src.UnresolvedThreads(ctx, is.PR.Number)
	if errors.Is(err, forge.ErrNoThreadAccess) {
		j.onLoop(func() { s.threadsDenied = true })
		s.printf("warning: #%d: review threads of worker PR #%d: %v; merging without looking at unresolved threads "+
			"(give the token read access to pull requests over GraphQL)", is.Number, is.PR.Number, err)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("#%d: review threads of its worker PR #%d: %w", is.Number, is.PR.Number, err)
	}
	var fresh []forge.Thread
	for _, th := range threads {
		if !slices.Contains(is.Threads, th.ID) {
			fresh = append(fresh, th)
		}
	}
	return fresh, nil
}

// threadFeedback is the threads' words for the worker's prompt.
func threadFeedback(threads []forge.Thread) string {
	var b strings.Builder
	for i, th := range threads {
		if i > 0 {
			b.WriteString("\n\n")
		}
		at := th.Path
		if th.Line > 0 {
			at += ":" + strconv.Itoa(th.Line)
		}
		fmt.Fprintf(&b, "Unresolved review thread on %s:", at)
		for _, c := range th.Comments {
			fmt.Fprintf(&b, "\n- %s: %s", c.Author, strings.TrimSpace(c.Body))
		}
	}
	return b.String()
}

// reviewFeedback is the reviews' words for the worker's prompt.
func reviewFeedback(reviews []forge.Review) string {
	var b strings.Builder
	for i, rv := range reviews {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "Review by %s (changes requested):\n%s", rv.Author, strings.TrimSpace(rv.Body))
		for _, c := range rv.Comments {
			at := c.Path
			if c.Line > 0 {
				at += ":" + strconv.Itoa(c.Line)
			}
			fmt.Fprintf(&b, "\n- on %s: %s", at, strings.TrimSpace(c.Body))
		}
	}
	return b.String()
}

// rework sends j's issue back to its worker, in the same worktree, with
// the feedback in its prompt — or, its rounds spent, parks it with the
// feedback as its question. The round is recorded before the relaunch, so
// a supervisor killed in between relaunches it (dispatch) and never
// counts it twice.
func (s *Supervisor) rework(ctx context.Context, j *job, from, detail, feedback string, reviews []int64) error {
	return s.reworkAnswering(ctx, j, from, detail, feedback, reviews, nil)
}

// reworkAnswering is rework that also records the worker PR review
// threads the round answers, so none is answered twice, across restarts.
func (s *Supervisor) reworkAnswering(ctx context.Context, j *job, from, detail, feedback string, reviews []int64, threads []string) error {
	is, n, rounds := j.w.is, j.w.n, s.o.Config.Backlog.ReworkRounds
	if is.Reworks >= rounds {
		if is.Reworks > 0 {
			detail += fmt.Sprintf(" (after %d rework round(s))", is.Reworks)
		}
		q := fmt.Sprintf("%s still asks for changes to #%d after %d rework round(s):\n\n%s",
			backlog.ReworkWhat(from), n, is.Reworks, feedback)
		return s.park(ctx, j, detail, q, nil)
	}
	if err := j.record(backlog.Event{Kind: backlog.EvRework, Issue: n, Attempt: is.Attempts, Outcome: from,
		Detail: detail, Feedback: feedback, Reviews: reviews, Threads: threads}); err != nil {
		return err
	}
	s.printf("#%d: %s; sending it back to its worker (rework round %d of %d)", n, oneLine(detail), is.Reworks, rounds)
	return j.sendBack(workerStart{}) // InRework: with the feedback
}

// reworkOf is the prompt's rework section for is's last round.
func (s *Supervisor) reworkOf(is *backlog.IssueRun) *backlog.Rework {
	return &backlog.Rework{Round: is.Reworks, Rounds: s.o.Config.Backlog.ReworkRounds, From: is.ReworkFrom, Feedback: is.Feedback}
}
