package supervisor

import (
	"context"
	"fmt"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/spend"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// ReasonBudget is why an issue was dropped without a worker: the run's
// backlog.budget.run was spent before its turn came.
const ReasonBudget = "budget"

// budgetState is what the supervisor knows of backlog.budget: the cap
// that stopped new work ("" while within budget) and the warnings given.
type budgetState struct {
	over   string
	warned map[string]bool
}

// spendCheck compares the run's spend, and issue n's when n > 0, with
// backlog.budget: over names the first cap reached with the spend.
func (s *Supervisor) spendCheck(n int) (over string) {
	b := s.o.Config.Backlog.Budget
	if !b.Run.Set() && !b.PerIssue.Set() {
		return ""
	}
	runs := spend.BacklogRuns(s.o.Lane.Name, s.log.dir)
	check := func(key string, c usage.Cap, u usage.Usage) string {
		o, w := c.Check(u, b.Warn())
		if w != "" && !s.budget.warned[key] {
			if s.budget.warned == nil {
				s.budget.warned = map[string]bool{}
			}
			s.budget.warned[key] = true
			s.printf("budget warning: %s: %s", key, w)
		}
		if o != "" {
			return key + ": " + o
		}
		return ""
	}
	if o := check("backlog.budget.run", b.Run, spend.Total(runs)); o != "" {
		if s.budget.over == "" {
			s.budget.over, s.capped = o, true
			s.printf("budget reached: %s; no new worker starts, finishing work in flight", o)
		}
		return o
	}
	if n > 0 {
		return check(fmt.Sprintf("backlog.budget.perIssue (#%d)", n), b.PerIssue, spend.ByIssue(runs)[n])
	}
	return ""
}

// overBudget parks j's issue instead of starting its next worker when
// the run's or the issue's budget is spent; it reports whether it did.
func (s *Supervisor) overBudget(ctx context.Context, j *job) (bool, error) {
	var over string
	j.onLoop(func() { over = s.spendCheck(j.w.n) }) // the budget is the loop's
	if over == "" {
		return false, nil
	}
	return true, s.park(ctx, j, "not started: "+over, "", nil)
}

// dropForBudget drops w's planned issue, not yet claimed, once the run's
// budget is spent: it never got a run, so nothing of it is kept.
func (s *Supervisor) dropForBudget(w *worker) (bool, error) {
	if s.spendCheck(0) == "" {
		return false, nil
	}
	n := w.n
	s.printf("#%d not started: %s", n, s.budget.over)
	return true, s.emit(backlog.Event{Kind: backlog.EvDropped, Issue: n, Outcome: ReasonBudget, Detail: s.budget.over})
}

// stopForBudget terminates the running workers once the run's budget is
// spent and backlog.budget.onExceeded is stop.
func (s *Supervisor) stopForBudget(ctx context.Context) {
	if !s.o.Config.Backlog.Budget.Stops() || s.spendCheck(0) == "" {
		return
	}
	grace := time.Duration(s.o.Lane.Runtime.TerminateGraceMs) * time.Millisecond
	for _, is := range s.run().Issues {
		if is.State == backlog.StateRunning && is.RunDir != "" {
			s.printf("#%d: stopping its worker: %s (backlog.budget.onExceeded: stop)", is.Number, s.budget.over)
			_ = s.o.Runs.Terminate(ctx, is.RunDir, grace, false)
		}
	}
}
