package supervisor

import (
	"context"
	"errors"
	"fmt"

	"github.com/wave-orchestrator/wave-orchestrator/gitops"
)

// unreadable parks w's issue, as a job of its own, when err says its
// worker's checkout cannot be read as a worker's clone
// (gitops.CheckoutError: a HEAD on no branch, a ref or .git leading out
// of it, an object git's checks refuse), what its pod pushed holds an
// object git's checks refuse, or its branch shares no history with the
// wave branch: what a worker that broke or forged its git
// leaves is its failure, never the run's end or an outage to wait out
// (docs/security-model.md). handled reports that it parks the issue;
// any other err is returned as it is. Called on the loop.
func (s *Supervisor) unreadable(ctx context.Context, w *worker, err error) (handled bool, _ error) {
	detail, q, ok := unreadableWhy(ctx, w.n, err)
	if !ok {
		return false, err
	}
	s.printf("#%d: %s", w.n, detail)
	return true, s.spawn(ctx, w, func(ctx context.Context, j *job) error { return s.park(ctx, j, detail, q, nil) })
}

// unreadableIn is unreadable in j, the job: the issue is parked
// now.
func (s *Supervisor) unreadableIn(ctx context.Context, j *job, err error) (handled bool, _ error) {
	detail, q, ok := unreadableWhy(ctx, j.w.n, err)
	if !ok {
		return false, err
	}
	s.printf("#%d: %s", j.w.n, detail)
	return true, s.park(ctx, j, detail, q, nil)
}

// unreadableWhy is the park reason and question for err, ok when err is
// a worker's broken checkout or branch (and the run is not stopping).
func unreadableWhy(ctx context.Context, n int, err error) (detail, question string, ok bool) {
	ce, isCE := gitops.IsCheckoutError(err)
	forged := errors.Is(err, gitops.ErrNoCommonHistory) || errors.Is(err, gitops.ErrRefusedObject)
	if !isCE && !forged || ctx.Err() != nil {
		return "", "", false
	}
	where := "its branch"
	if isCE {
		where = "its checkout " + ce.Dir
	}
	detail = "its worker's git cannot be merged from: " + oneLine(err.Error())
	question = fmt.Sprintf("The worker for #%d left %s in a state this clone does not read (a worker that broke or forged its git). Look at it, then run #%d again?", n, where, n)
	return detail, question, true
}
