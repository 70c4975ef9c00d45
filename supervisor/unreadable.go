package supervisor

import (
	"context"
	"errors"
	"fmt"

	"github.com/wave-orchestrator/wave-orchestrator/gitops"
)

// unreadable parks issue n when err says its worker's checkout cannot be
// read as a worker's clone (gitops.CheckoutError: a HEAD on no branch, a
// ref or .git leading out of it, a forged index) or its branch shares no
// history with the wave branch: what a worker that broke or forged its
// git leaves is its failure, never the run's end or an outage to wait
// out (docs/security-model.md). handled reports that it parked n; any
// other err is returned as it is.
func (s *Supervisor) unreadable(ctx context.Context, n int, err error) (handled bool, _ error) {
	ce, isCE := gitops.IsCheckoutError(err)
	if !isCE && !errors.Is(err, gitops.ErrNoCommonHistory) || ctx.Err() != nil {
		return false, err
	}
	where := "its branch"
	if isCE {
		where = "its checkout " + ce.Dir
	}
	detail := "its worker's git cannot be merged from: " + oneLine(err.Error())
	s.printf("#%d: %s", n, detail)
	q := fmt.Sprintf("The worker for #%d left %s in a state this clone does not read (a worker that broke or forged its git). Look at it, then run #%d again?", n, where, n)
	return true, s.offLoop(ctx, n, func(ctx context.Context) error { return s.park(ctx, n, detail, q, nil) })
}
