package launcher

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/gate"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/spend"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// errBudgetReached: the wave's or the lane's runtime.budget is spent, so
// no agent is started; the agents already running finish (onExceeded:
// finish) or were stopped (stop).
var errBudgetReached = errors.New("budget reached")

// budgetCheck compares what the wave and the lane spent (every run
// directory once, package spend) with runtime.budget. over names the
// first cap reached with the spend ("runtime.budget.wave: tokens 1.2M of
// 1.0M"); warnings name the caps past warnAtPercent.
func (r *waveRun) budgetCheck() (over string, warnings []string) {
	b := r.l.opt.Lane.Runtime.Budget
	if !b.Wave.Set() && !b.Lane.Set() {
		return "", nil
	}
	if r.budgetLog == nil {
		r.budgetLog = newSpendLog(r.l.opt.Layout.EventsPath())
	}
	runs := spend.WaveRunsFrom(r.l.opt.Layout, r.budgetLog.runs(), nil)
	var wave, lane usage.Usage
	for _, run := range runs {
		if run.Usage == nil {
			continue
		}
		lane = usage.Add(lane, *run.Usage)
		if run.Wave != nil && *run.Wave == r.n {
			wave = usage.Add(wave, *run.Usage)
		}
	}
	for _, c := range []struct {
		key string
		cap usage.Cap
		u   usage.Usage
	}{{"runtime.budget.wave", b.Wave, wave}, {"runtime.budget.lane", b.Lane, lane}} {
		o, w := c.cap.Check(c.u, b.Warn())
		if o != "" && over == "" {
			over = c.key + ": " + o
		}
		if w != "" {
			warnings = append(warnings, c.key+": "+w)
		}
	}
	return over, warnings
}

// spendLog is what the budget check needs of the lane's event log: the
// check runs every second of a wave, so it folds only the lines appended
// since the last check (state.Fold, the reducer status uses), and the log
// again from its start, the rotated generation too, when it was replaced
// or truncated.
type spendLog struct {
	path string
	tail *jsonfile.Tail[state.Event]
	fold *state.Fold
}

func newSpendLog(path string) *spendLog {
	return &spendLog{path: path, tail: jsonfile.NewTail[state.Event](path), fold: &state.Fold{}}
}

// runs returns the run directories the log names with the usage their
// events last recorded. A reset reads the rotated generation after the
// tail read the current log, so a rotation in between brings lines again:
// harmless, as a run's later usage replaces its earlier.
func (s *spendLog) runs() []state.LoggedRun {
	evs, _, reset, err := s.tail.Read()
	if err != nil {
		return s.fold.LoggedRuns() // unreadable for now: the last known, read again next check
	}
	if reset {
		// The tail gave the current log from its start; the rotated
		// generation comes before it.
		old, _, err := jsonfile.ReadLines[state.Event](s.path + ".1")
		s.fold = &state.Fold{}
		if err != nil {
			s.tail = jsonfile.NewTail[state.Event](s.path) // so the next check reads it whole again
			return nil
		}
		evs = append(old, evs...)
	}
	for _, ev := range evs {
		if ev.EntityType == state.EntityAgentRun {
			s.fold.Apply(ev)
		}
	}
	return s.fold.LoggedRuns()
}

// checkBudget emits a budget event the first time each warning or the
// cap is seen, and reports the cap reached ("" when none).
func (r *waveRun) checkBudget(attempt int) string {
	over, warnings := r.budgetCheck()
	for _, w := range warnings {
		r.budgetEvent(attempt, "warning", w)
	}
	if over != "" {
		r.budgetEvent(attempt, "exceeded", over)
	}
	return over
}

func (r *waveRun) budgetEvent(attempt int, action, what string) {
	if r.budgetSeen == nil {
		r.budgetSeen = map[string]bool{}
	}
	scope, _, _ := strings.Cut(what, ":")
	key := action + " " + scope
	if r.budgetSeen[key] {
		return
	}
	r.budgetSeen[key] = true
	r.l.printf("wave %d: budget %s: %s", r.n, action, what)
	r.l.emit(r.n, state.EntityBudget, fmt.Sprintf("wave-%d-budget", r.n), action, attempt, map[string]any{"detail": what})
}

// budgetFailure is the failure of a wave that reached its budget.
func budgetFailure(over string) gate.Failure {
	return gate.Failure{Gate: "budget", StatusCode: codeBudgetExceeded,
		Detail: over + "; nothing new is started: raise the cap in wave.config.yaml, then resume"}
}

// budgetWhileWaiting runs on the wait loop's sweep: it gives the budget's
// warning and exceeded events as running agents spend, and with
// runtime.budget.onExceeded: stop terminates the running agents once a
// cap is reached (TERM, grace, KILL, as for a stall).
func (r *waveRun) budgetWhileWaiting(ctx context.Context, attempt int, pending map[string]string) {
	over := r.checkBudget(attempt)
	if over == "" || !r.l.opt.Lane.Runtime.Budget.Stops() {
		return
	}
	r.budgetOver = over
	grace := time.Duration(r.l.opt.Lane.Runtime.TerminateGraceMs) * time.Millisecond
	for d := range pending {
		if o := r.l.outcome(ctx, d, r.l.now()); !o.Done {
			r.l.printf("wave %d: stopping %s: %s (runtime.budget.onExceeded: stop)", r.n, pending[d], over)
			_ = r.l.runs.Terminate(ctx, d, grace, r.l.opt.KeepSessions)
		}
	}
}
