package launcher

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/executor"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// A usage limit is a pause, not a failed attempt: an agent whose CLI said
// its account is out is relaunched once the limit resets (or after a
// capped backoff when the CLI named no reset), without spending one of
// the wave's attempts, and no agent of that executor starts before then;
// the wave's other agents run on. The person is told once per pause
// (a usage_limit event, which notify and status read). Meanwhile an
// agent whose executor has fallbacks (the `fallbacks` of its `###
// Executor`, else the lane's fallbackExecutorOrder; none under a sticky
// retry policy) runs on the first of them that is available, not paused
// itself and within the lane's runtime mix, and stays there.

// usagePauses are the launcher's paused executors.
type usagePauses struct {
	until    map[string]time.Time // executor → when its agents may start
	backoffs map[string]int       // pauses without a reset so far
}

// pauseFor records that agent id's run ended on its executor's usage
// limit and returns when it may run again. A new pause, or one pushed
// later, is an event (told once; status shows it).
func (r *waveRun) pauseFor(id string, attempt int, o Outcome) time.Time {
	l := r.l
	if l.pauses.until == nil {
		l.pauses = usagePauses{until: map[string]time.Time{}, backoffs: map[string]int{}}
	}
	exec := o.Executor
	if exec == "" {
		exec = r.p.Agents[id].Resolved.ID
	}
	until := o.Limit.ResumeAt()
	if until.IsZero() {
		until = l.now().Add(runtime.UsageBackoff(l.pauses.backoffs[exec]))
		l.pauses.backoffs[exec]++
	}
	prev, open := l.pauses.until[exec]
	if open && !until.After(prev) {
		until = prev
	}
	l.pauses.until[exec] = until
	l.emit(r.n, state.EntityUsageLimit, fmt.Sprintf("wave-%d-usage-limit-%s", r.n, exec), state.UsagePaused, attempt,
		map[string]any{"executor": exec, "until": until.UTC().Format(time.RFC3339), "detail": o.Limit.Line, "agentId": id,
			"opened": !open})
	if !open {
		l.printf("wave %d: paused: %s usage limit until %s (%s hit it: %s); the wave waits, its attempts are not spent",
			r.n, exec, until.Local().Format("15:04:05"), id, o.Limit.Line)
	} else {
		l.printf("wave %d: %s stopped at the same %s usage limit; it goes on after it", r.n, id, exec)
	}
	return until
}

// resumed ends exec's pause once its time passed, saying so once.
func (r *waveRun) resumed(exec string, attempt int) {
	until, ok := r.l.pauses.until[exec]
	if !ok || r.l.now().Before(until) {
		return
	}
	delete(r.l.pauses.until, exec)
	r.l.emit(r.n, state.EntityUsageLimit, fmt.Sprintf("wave-%d-usage-limit-%s", r.n, exec), state.UsageResumed, attempt,
		map[string]any{"executor": exec})
	r.l.printf("wave %d: the %s usage limit passed; its agents go on", r.n, exec)
}

// holdForPause waits, before agents start, until none of their
// executors is paused; a stop request or ctx ends the wait.
func (r *waveRun) holdForPause(ctx context.Context, attempt int, execs []string) error {
	for {
		var wait time.Duration
		for _, e := range execs {
			if until, ok := r.l.pauses.until[e]; ok {
				wait = max(wait, until.Sub(r.l.now()))
			}
		}
		if wait <= 0 {
			for _, e := range execs {
				r.resumed(e, attempt)
			}
			return nil
		}
		r.l.flush()
		t := time.NewTimer(min(wait, time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if stopRequested(r.l.opt.Layout.ControlPath()) {
			return ErrStopped
		}
	}
}

// paused reports whether exec's agents wait for its usage limit now.
func (l *Launcher) paused(exec string) bool {
	until, ok := l.pauses.until[exec]
	return ok && l.now().Before(until)
}

// offPause moves agent id, whose executor is paused, onto the first of
// its fallbacks that can take the work now, saying so (its next
// agent_run started event names the fallback); false leaves it waiting
// for the reset.
func (r *waveRun) offPause(id string, attempt int) bool {
	ap := r.p.Agents[id]
	from := ap.Resolved.ID
	if !r.l.paused(from) {
		return false
	}
	fits := r.mixFits()
	for _, to := range ap.Resolved.Fallbacks {
		to = strings.TrimSpace(to)
		if to == "" || to == from || r.l.paused(to) || !executor.Available(ap.Resolved, to, r.l.available) ||
			fits != nil && !fits(to) {
			continue
		}
		ap.Resolved = executor.UsageFallback(ap.Resolved, to, attempt)
		r.l.printf("wave %d: %s goes on on %s while the %s usage limit lasts", r.n, id, to, from)
		return true
	}
	return false
}
