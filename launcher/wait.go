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

// wait blocks until every run in dirs is done, terminating runs past their
// deadline. It wakes on watcher events and on a 1 s sweep. A finished run
// whose agent asked a person a blocking question waits for the answer
// (the coordination log's fsnotify events wake it) and is relaunched with
// it; the other runs go on meanwhile.
// maxDrain bounds the changes the wait loop handles between two flushes.
const maxDrain = 64

func (r *waveRun) wait(ctx context.Context, attempt int, dirs map[string]string) error {
	l := r.l
	pending := map[string]string{} // run dir → agent
	deadlines := map[string]time.Time{}
	waiting := map[string]string{}    // agent → its finished run, waiting for a person
	limited := map[string]time.Time{} // agent → when its usage limit lets it run again
	track := func(id, d string) {
		pending[d] = id
		if p, err := runtime.ReadPayload(filepath.Join(d, lanes.LaunchFile)); err == nil && p.DeadlineAt != nil {
			deadlines[d] = *p.DeadlineAt
		}
	}
	for id, d := range dirs {
		track(id, d)
	}
	relaunch := func(id string) error {
		if _, ok := limited[id]; ok {
			delete(limited, id)
			r.limitRelaunch[id] = true
		} else {
			delete(waiting, id)
			r.ask.relaunch[id] = true
		}
		p, err := r.payload(id, attempt)
		if err != nil {
			return err
		}
		if err := r.start(ctx, []*runtime.Payload{p}, attempt); err != nil {
			return err
		}
		track(id, p.RunDir)
		return nil
	}
	after := func(id, d string) error {
		switch wait, again := r.afterRun(id, d); {
		case wait:
			waiting[id] = d
		case again:
			return relaunch(id)
		default:
			delete(waiting, id)
		}
		return nil
	}
	check := func(d string, expired bool) error {
		id := pending[d]
		o := r.noProgressOutcome(d, l.outcome(ctx, d, l.now()))
		if o.Terminate && o.Done {
			// The runner is gone but its agent is not: stop the agent
			// before its result is used or a retry starts next to it.
			grace := time.Duration(l.opt.Lane.Runtime.TerminateGraceMs) * time.Millisecond
			_ = l.runs.Terminate(ctx, d, grace, l.opt.KeepSessions)
		}
		if !o.Done {
			if !expired {
				return nil
			}
			grace := time.Duration(l.opt.Lane.Runtime.TerminateGraceMs) * time.Millisecond
			_ = l.runs.Terminate(ctx, d, grace, l.opt.KeepSessions)
			o = Outcome{Done: true, State: state.AgentTimedOut, Detail: fmt.Sprintf("deadline %s passed", deadlines[d].Format(time.RFC3339))}
			if after := l.outcome(ctx, d, l.now()); after.ExitCode != nil {
				o.ExitCode, o.Signal = after.ExitCode, after.Signal
			}
		}
		delete(pending, d)
		r.finalize(id, d, attempt, o)
		if stopRequested(l.opt.Layout.ControlPath()) {
			return nil
		}
		if o.State == state.AgentUsageLimited && o.Limit != nil {
			limited[id] = r.pauseFor(id, attempt, o)
			return nil
		}
		return after(id, d)
	}
	// answers looks at the coordination log after it changed: new
	// questions and answers go to the event log, answered agents run again.
	answers := func() error {
		if len(waiting) == 0 {
			r.syncQuestions()
		}
		for id, d := range waiting {
			if err := after(id, d); err != nil {
				return err
			}
		}
		return nil
	}
	expired := func(d string) bool {
		dl, ok := deadlines[d]
		return ok && l.now().After(dl)
	}
	for d := range pending {
		if err := check(d, expired(d)); err != nil {
			return err
		}
	}
	// The watcher wakes us on every change of a run (and its own sweep
	// finds lost runners), so the 1 s tick only checks deadlines, input
	// timeouts and stop requests; a full look at every run every
	// sweepEvery ticks is the safety net for a change dropped under load.
	const sweepEvery = 10
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	// Changes already waiting are handled before state.json catches up,
	// so runs finishing together cost it one write (Launcher.flush).
	drain := func() error {
		// Bounded: a stream of changes must not keep the loop from its
		// tick (deadlines, stop requests).
		for range maxDrain {
			select {
			case d := <-l.runs.Changed():
				if _, ok := pending[d]; ok {
					if err := check(d, expired(d)); err != nil {
						return err
					}
				}
			default:
				return nil
			}
		}
		return nil
	}
	for n := 1; len(pending) > 0 || len(waiting) > 0 || len(limited) > 0; {
		l.flush()
		var err error
		select {
		case <-ctx.Done():
			return ctx.Err()
		case d := <-l.runs.Changed():
			if _, ok := pending[d]; ok {
				err = check(d, expired(d))
			}
			if err == nil {
				err = drain()
			}
		case <-r.ask.changes:
			err = answers()
		case <-tick.C:
			if stopRequested(l.opt.Layout.ControlPath()) {
				return ErrStopped
			}
			n++
			r.budgetWhileWaiting(ctx, attempt, pending)
			r.brakeNoProgress(ctx, pending)
			for d := range pending {
				if e := expired(d); e || n%sweepEvery == 0 {
					if err = check(d, e); err != nil {
						break
					}
				}
			}
			for id, at := range limited {
				if err == nil && !l.now().Before(at) {
					r.resumed(r.p.Agents[id].Resolved.ID, attempt)
					err = relaunch(id)
				}
			}
			for id := range waiting {
				if qs := r.inputExpired(id); len(qs) > 0 {
					r.giveUp(qs)
					delete(waiting, id)
				}
			}
			if err == nil && r.ask.changes == nil {
				err = answers()
			}
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
