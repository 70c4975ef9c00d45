package supervisor

import (
	"context"
	"fmt"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// Two timers stop a worker that is not getting anywhere, both run from
// facts that outlive the supervisor, so a restarted one keeps their
// clocks: the output time its runner records (lastOutputAt, the agent's
// own output: the runner's notices do not count) and the last change of
// its checkout the supervisor saw, recorded as a progress event.
//
//   - silence (backlog.silenceMinutes): no output and no checkout change
//     for the limit. The checkout is looked at only once output is older
//     than a quarter of the limit, then every tenth of it at most, so a
//     worker that prints costs no git at all; a stall is declared at most
//     a quarter of the limit and one look late, never early.
//   - no progress (backlog.noProgressMinutes): output keeps coming, but
//     the checkout has neither a new commit nor a changed file for the
//     limit (a worker silent since is left to the silence timer). The
//     checkout is looked at every tenth of the limit (at most every five
//     minutes).
//
// The first look at a run's checkout counts as a change (what happened
// before it is not known); it is recorded, so no later supervisor
// counts it again. Each stop is recorded before the worker is
// terminated (TERM, grace, KILL); its salvage relaunch is told why.

// progress is what this process knows of a worker's checkout: when it
// last looked (looks are cheap to repeat after a restart).
type progress struct {
	lookedAt time.Time
}

// stuck decides whether a running worker is to be stopped, by silence or
// for want of progress. It records the stop before the caller terminates.
func (s *Supervisor) stuck(ctx context.Context, w *worker, obs runtime.Observation, now time.Time) bool {
	silence, brake := s.o.Config.Backlog.Silence(), s.o.Config.Backlog.NoProgress()
	if silence <= 0 && brake <= 0 {
		return false
	}
	is := w.is
	if is.Outcome == backlog.OutcomeStalled || is.Outcome == backlog.OutcomeNoProgress {
		return true // recorded already; the stop did not take: again
	}
	started := startedAt(obs)
	if started.IsZero() {
		return false // no record yet: nothing to time
	}
	quiet := latest(outputAt(obs), progressAt(is))
	look := silence > 0 && now.Sub(quiet) >= silence/4 && now.Sub(w.progress.lookedAt) >= lookEvery(silence) ||
		brake > 0 && now.Sub(latest(started, w.progress.lookedAt)) >= brakeLookEvery(brake)
	if look {
		s.lookAtCheckout(ctx, w, obs, now)
		quiet = latest(outputAt(obs), progressAt(is))
	}
	switch {
	case silence > 0 && now.Sub(quiet) >= silence:
		s.printf("#%d: no output and no worktree change for %s; stopping the worker as stalled", is.Number, silence)
		_ = s.emit(backlog.Event{Kind: backlog.EvWorkerFinished, Issue: is.Number, Attempt: is.Attempts, Outcome: backlog.OutcomeStalled,
			Detail: fmt.Sprintf("stalled: silent for %s", silence)})
		return true
	case brake > 0 && is.ProgressAt != nil && now.Sub(*is.ProgressAt) >= brake && outputAt(obs).After(*is.ProgressAt):
		// It printed since its checkout last changed: busy, not silent
		// (a silent worker is the silence timer's).
		detail := fmt.Sprintf("no progress: it went on for %s with neither a new commit nor a changed file (backlog.noProgressMinutes)", brake)
		s.printf("#%d: %s; stopping the worker", is.Number, detail)
		_ = s.emit(backlog.Event{Kind: backlog.EvWorkerFinished, Issue: is.Number, Attempt: is.Attempts, Outcome: backlog.OutcomeNoProgress,
			Detail: detail})
		return true
	}
	return false
}

// lookAtCheckout looks at the worker's checkout and records a change
// (or the first look of the run) as a progress event.
func (s *Supervisor) lookAtCheckout(ctx context.Context, w *worker, obs runtime.Observation, now time.Time) {
	w.progress.lookedAt = now
	mark, err := s.co.Mark(ctx, w.is, obs)
	if err != nil || mark == "" || mark == w.is.ProgressMark {
		return // unreadable (a worktree being deleted): no change seen
	}
	_ = s.emit(backlog.Event{Kind: backlog.EvProgress, Issue: w.n, Attempt: w.is.Attempts, Ref: mark, At: now.UTC()})
}

// outputAt is when the worker last printed as its runner recorded it, or
// when it started; zero without a record.
func outputAt(obs runtime.Observation) time.Time {
	if obs.Record == nil {
		return time.Time{}
	}
	if t := obs.Record.LastOutputAt; t != nil && t.After(obs.Record.StartedAt) {
		return *t
	}
	return obs.Record.StartedAt
}

// progressAt is the last change of the run's checkout seen, or zero.
func progressAt(is *backlog.IssueRun) time.Time {
	if is.ProgressAt == nil {
		return time.Time{}
	}
	return *is.ProgressAt
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// lookEvery is how often a quiet worker's worktree is looked at: a tenth
// of the silence limit, between one second and thirty.
func lookEvery(limit time.Duration) time.Duration {
	return min(max(limit/10, time.Second), 30*time.Second)
}

// brakeLookEvery is how often a worker's checkout is looked at for the
// no-progress brake: a tenth of its limit, between one second and five
// minutes.
func brakeLookEvery(limit time.Duration) time.Duration {
	return min(max(limit/10, time.Second), 5*time.Minute)
}
