package launcher

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// maxDrain bounds the changes the wait loop handles between two flushes.
const maxDrain = 64

// sweepEvery is how many 1 s ticks pass between two full looks at every
// pending run: the watcher wakes the loop on every change of a run (and
// its own sweep finds lost runners), so a tick only checks deadlines,
// input timeouts and stop requests; the full look is the safety net for a
// change dropped under load.
const sweepEvery = 10

// waiter follows one batch of runs of a wave run until each is done:
// it terminates runs past their deadline, holds a finished run whose
// agent asked a person a blocking question until the answer comes (and
// relaunches the agent with it), and holds an agent stopped by its
// executor's usage limit until the limit passes (and relaunches it). The
// other runs go on meanwhile.
type waiter struct {
	r       *waveRun
	attempt int
	// pending are the runs not seen done: run dir → agent.
	pending map[string]string
	// deadlines are the pending runs' launch.json deadlines.
	deadlines map[string]time.Time
	// asking are agents whose finished run waits for a person: agent →
	// that run's dir.
	asking map[string]string
	// limited are agents stopped by a usage limit: agent → when it may
	// run again.
	limited map[string]time.Time
}

// wait blocks until every run in dirs (agent → run dir) is done, woken by
// the watcher's changes, the coordination log's and a 1 s tick.
func (r *waveRun) wait(ctx context.Context, attempt int, dirs map[string]string) error {
	w := &waiter{r: r, attempt: attempt, pending: map[string]string{}, deadlines: map[string]time.Time{},
		asking: map[string]string{}, limited: map[string]time.Time{}}
	for id, d := range dirs {
		w.track(id, d)
	}
	return w.run(ctx)
}

func (w *waiter) run(ctx context.Context) error {
	l := w.r.l
	for d := range w.pending {
		if err := w.check(ctx, d, w.expired(d)); err != nil {
			return err
		}
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for n := 1; len(w.pending) > 0 || len(w.asking) > 0 || len(w.limited) > 0; {
		l.flush()
		var err error
		select {
		case <-ctx.Done():
			return ctx.Err()
		case d := <-l.runs.Changed():
			if err = w.changed(ctx, d); err == nil {
				err = w.drain(ctx)
			}
		case <-w.r.ask.changes:
			err = w.answers(ctx)
		case <-tick.C:
			if stopRequested(l.opt.Layout.ControlPath()) {
				return ErrStopped
			}
			n++
			err = w.tick(ctx, n%sweepEvery == 0)
		}
		if err != nil {
			return err
		}
	}
	if stopRequested(l.opt.Layout.ControlPath()) {
		return ErrStopped
	}
	return nil
}

// track starts following agent id's run in dir.
func (w *waiter) track(id, dir string) {
	w.pending[dir] = id
	if p, err := runtime.ReadPayload(filepath.Join(dir, lanes.LaunchFile)); err == nil && p.DeadlineAt != nil {
		w.deadlines[dir] = *p.DeadlineAt
	}
}

func (w *waiter) expired(dir string) bool {
	dl, ok := w.deadlines[dir]
	return ok && w.r.l.now().After(dl)
}

// changed handles a change the watcher reported, of a run followed or not.
func (w *waiter) changed(ctx context.Context, dir string) error {
	if _, ok := w.pending[dir]; !ok {
		return nil
	}
	return w.check(ctx, dir, w.expired(dir))
}

// drain handles the changes already waiting before state.json catches
// up, so runs finishing together cost it one write (Launcher.flush); it
// is bounded, so a stream of changes does not keep the loop from its
// tick (deadlines, stop requests).
func (w *waiter) drain(ctx context.Context) error {
	for range maxDrain {
		select {
		case d := <-w.r.l.runs.Changed():
			if err := w.changed(ctx, d); err != nil {
				return err
			}
		default:
			return nil
		}
	}
	return nil
}

// tick is the loop's 1 s look: the budget and the no-progress brake,
// expired runs (every pending run on a full sweep), usage limits that
// passed, questions past their input timeout, and the coordination log
// when it cannot be watched.
func (w *waiter) tick(ctx context.Context, sweep bool) error {
	r := w.r
	r.budgetWhileWaiting(ctx, w.attempt, w.pending)
	r.brakeNoProgress(ctx, w.pending)
	for d := range w.pending {
		if e := w.expired(d); e || sweep {
			if err := w.check(ctx, d, e); err != nil {
				return err
			}
		}
	}
	for id, at := range w.limited {
		if !r.l.now().Before(at) {
			r.resumed(r.p.Agents[id].Resolved.ID, w.attempt)
			if err := w.relaunch(ctx, id); err != nil {
				return err
			}
		}
	}
	for id := range w.asking {
		if qs := r.inputExpired(id); len(qs) > 0 {
			r.giveUp(qs)
			delete(w.asking, id)
		}
	}
	if r.ask.changes == nil {
		return w.answers(ctx)
	}
	return nil
}

// check looks at the pending run in dir and, once it is done (or past its
// deadline: expired), records its result and decides what follows.
func (w *waiter) check(ctx context.Context, dir string, expired bool) error {
	r, l := w.r, w.r.l
	id := w.pending[dir]
	grace := time.Duration(l.opt.Lane.Runtime.TerminateGraceMs) * time.Millisecond
	o := r.noProgressOutcome(dir, l.outcome(ctx, dir, l.now()))
	if o.Terminate && o.Done {
		// The runner is gone but its agent is not: stop the agent before
		// its result is used or a retry starts next to it.
		_ = l.runs.Terminate(ctx, dir, grace, l.opt.KeepSessions)
	}
	if !o.Done {
		if !expired {
			return nil
		}
		_ = l.runs.Terminate(ctx, dir, grace, l.opt.KeepSessions)
		o = Outcome{Done: true, State: state.AgentTimedOut, Detail: fmt.Sprintf("deadline %s passed", w.deadlines[dir].Format(time.RFC3339))}
		if after := l.outcome(ctx, dir, l.now()); after.ExitCode != nil {
			o.ExitCode, o.Signal = after.ExitCode, after.Signal
		}
	}
	delete(w.pending, dir)
	r.finalize(id, dir, w.attempt, o)
	if stopRequested(l.opt.Layout.ControlPath()) {
		return nil
	}
	if o.State == state.AgentUsageLimited && o.Limit != nil {
		w.limited[id] = r.pauseFor(id, w.attempt, o)
		if r.offPause(id, w.attempt) {
			return w.relaunch(ctx, id)
		}
		return nil
	}
	return w.after(ctx, id, dir)
}

// after decides what agent id's finished run in dir needs: to wait for a
// person, a relaunch with the answers, or nothing.
func (w *waiter) after(ctx context.Context, id, dir string) error {
	switch wait, again := w.r.afterRun(id, dir); {
	case wait:
		w.asking[id] = dir
	case again:
		return w.relaunch(ctx, id)
	default:
		delete(w.asking, id)
	}
	return nil
}

// answers looks at the coordination log after it changed: new questions
// and answers go to the event log, answered agents run again.
func (w *waiter) answers(ctx context.Context) error {
	if len(w.asking) == 0 {
		w.r.syncQuestions()
	}
	for id, d := range w.asking {
		if err := w.after(ctx, id, d); err != nil {
			return err
		}
	}
	return nil
}

// relaunch starts agent id again, after its usage limit or with the
// answers to its questions: neither is a failed attempt.
func (w *waiter) relaunch(ctx context.Context, id string) error {
	r := w.r
	if _, ok := w.limited[id]; ok {
		delete(w.limited, id)
		r.limitRelaunch[id] = true
	} else {
		delete(w.asking, id)
		r.ask.relaunch[id] = true
	}
	r.offPause(id, w.attempt)
	p, err := r.payload(id, w.attempt)
	if err != nil {
		return err
	}
	if err := r.start(ctx, []*runtime.Payload{p}, w.attempt); err != nil {
		return err
	}
	w.track(id, p.RunDir)
	return nil
}
