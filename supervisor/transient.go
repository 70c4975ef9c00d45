package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// WaitingFile, in a run directory, says which transient failure the
// supervisor is waiting out; it exists only while it waits.
const WaitingFile = "waiting.json"

// waitOut is the transient failure the supervisor is waiting out: what
// `backlog status` shows of it ("waiting: <cause> since <time>", from
// the run's WaitingFile), and the cause the run's log has for the wait
// ("" until its start is recorded).
type waitOut struct {
	backlog.Waiting
	logged string
}

// GaveUpError ends a run whose transient failure outlasted
// backlog.transientRetryMinutes.
type GaveUpError struct {
	Cause string
	Since time.Time
	After time.Duration
	Err   error
}

func (e *GaveUpError) Error() string {
	return fmt.Sprintf("gave up after waiting %s: %s since %s (backlog.transientRetryMinutes): %v",
		e.After, e.Cause, e.Since.UTC().Format(time.RFC3339), e.Err)
}

func (e *GaveUpError) Unwrap() error { return e.Err }

// span is a transient window the supervisor lived through: a worker that
// failed inside one (or just before it was noticed) failed because of the
// supervisor's environment, not its own work.
type span struct {
	since, until time.Time
	cause        string
}

// transientCause is the one place the supervisor asks whether a failure
// may pass by itself. Each package that runs the command classifies its
// own errors (git's words in gitops, HTTP in forge); the supervisor's own
// file writes fail with a typed ENOSPC. "" is permanent.
func transientCause(err error) string {
	if err == nil || errors.Is(err, ErrStopped) {
		return ""
	}
	if c, ok := gitops.TransientCause(err); ok {
		return c
	}
	if c, ok := forge.TransientCause(err); ok {
		return c
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return gitops.CauseDiskFull
	}
	return ""
}

// defaultBackoff is the wait before the try-th retry of a failed sweep
// (0-based): 2 s doubling, capped at a minute.
func defaultBackoff(try int) time.Duration {
	if try > 5 {
		return time.Minute
	}
	return min(2*time.Second<<try, time.Minute)
}

// ride decides what a failed sweep means. A transient failure within
// the window is waited out: nil, with s.waiting saying until when. A
// permanent one, or one that outlasted the window, is returned: the run
// ends on it. The wait is an event in the run's log (once the run has
// one), so a supervisor restarted mid-outage keeps its window.
func (s *Supervisor) ride(err error) error {
	cause := transientCause(err)
	if cause == "" {
		return err
	}
	now := s.o.Now()
	w := s.waiting
	if w == nil {
		w = &waitOut{Waiting: backlog.Waiting{Cause: cause, Since: now}}
		s.waiting = w
		s.printf("waiting: %s since %s; workers keep running, nothing is dispatched or merged until it passes (%s)",
			cause, now.UTC().Format(time.RFC3339), oneLine(err.Error()))
	} else if w.Cause != cause {
		s.printf("waiting: now %s (%s)", cause, oneLine(err.Error()))
		w.Cause = cause
	}
	limit := s.o.Config.Backlog.TransientRetry()
	w.Detail, w.GiveUpAt = oneLine(err.Error()), w.Since.Add(limit)
	s.recordWait(w, now)
	if !now.Before(w.GiveUpAt) {
		if err := s.endWaiting(now, backlog.WaitGaveUp); err != nil {
			s.o.Logger.Warn("backlog: could not record the end of the wait", "err", err)
		}
		return &GaveUpError{Cause: w.Cause, Since: w.Since, After: limit, Err: err}
	}
	wait := s.o.Backoff(w.Tries)
	w.Tries++
	w.NextTry = now.Add(wait)
	s.waitFor = wait
	if s.log == nil {
		return nil // no run yet: the output says it
	}
	if err := jsonfile.Write(s.waitingPath(), w.Waiting); err != nil {
		s.o.Logger.Warn("backlog: could not record the wait for status", "err", err) // the disk may be why
	}
	return nil
}

// recordWait puts the wait (or its new cause) in the run's log. A write
// that fails (the disk may be why) is tried again at the next failure.
func (s *Supervisor) recordWait(w *waitOut, now time.Time) {
	if s.log == nil || w.logged == w.Cause {
		return
	}
	at := now // the cause changed: the window goes on
	if w.logged == "" {
		at = w.Since
	}
	if err := s.emit(backlog.Event{Kind: backlog.EvWaitStarted, At: at.UTC(), Cause: w.Cause, Detail: w.Detail}); err != nil {
		s.o.Logger.Warn("backlog: could not record the wait", "err", err)
		return
	}
	w.logged = w.Cause
}

// recovered ends a wait once a sweep (begun at began) went through. The
// window ends when that sweep began: workers it started came after it.
func (s *Supervisor) recovered(began time.Time) error {
	if s.waiting == nil {
		return nil
	}
	cause, since := s.waiting.Cause, s.waiting.Since
	if err := s.endWaiting(began, backlog.WaitRecovered); err != nil {
		return err
	}
	s.printf("recovered: %s passed after %s", cause, began.Sub(since).Round(time.Second))
	return nil
}

// endWaiting closes the wait at the given time, in the log first: the
// wait stays open (in memory and on disk) until that is recorded.
func (s *Supervisor) endWaiting(at time.Time, outcome string) error {
	if s.log != nil && s.waiting.logged != "" {
		if err := s.emit(backlog.Event{Kind: backlog.EvWaitEnded, At: at.UTC(), Outcome: outcome}); err != nil {
			return err
		}
	}
	s.waiting = nil
	if s.log != nil {
		_ = os.Remove(s.waitingPath())
	}
	return nil
}

// restoreWait takes up the wait a supervisor killed while waiting left
// open in the log: the window (and its give-up time) goes on from when
// the outage was first seen, and a worker that failed inside it keeps
// its salvage.
func (s *Supervisor) restoreWait() {
	w := s.run().OpenWait()
	if w == nil {
		return
	}
	limit := s.o.Config.Backlog.TransientRetry()
	s.waiting = &waitOut{Waiting: backlog.Waiting{Cause: w.Cause, Detail: w.Detail, Since: w.Since, GiveUpAt: w.Since.Add(limit)},
		logged: w.Cause}
	s.printf("the supervisor before this one was waiting out %s since %s; the wait goes on (gives up at %s)",
		oneLine(w.Cause), w.Since.UTC().Format(time.RFC3339), s.waiting.GiveUpAt.UTC().Format(time.RFC3339))
}

// windows are the transient windows the run lived through (recorded, so
// those of a supervisor before this one count too).
func (s *Supervisor) windows() []span {
	var out []span
	for _, w := range s.run().Waits {
		if w.Until != nil {
			out = append(out, span{since: w.Since, until: *w.Until, cause: w.Cause})
		}
	}
	return out
}

// retry runs op until it goes through, waiting out its transient
// failures as the loop waits out a sweep's: the same window, the same
// status line, the same backoff. A permanent failure, or one that
// outlasted the window, is returned. op must be safe to run again after
// it failed (every step of opening and ending a run is: each resumes
// after a kill -9 too). A `backlog stop` during the wait stops the
// workers and returns ErrStopped.
func (s *Supervisor) retry(ctx context.Context, op func(context.Context) error) error {
	tick := time.NewTicker(s.o.Tick)
	defer tick.Stop()
	for {
		began := s.o.Now()
		err := op(ctx)
		if err == nil {
			if err = s.recovered(began); err == nil {
				return nil
			}
		}
		if ctx.Err() != nil {
			return err
		}
		if err := s.ride(err); err != nil {
			return err
		}
		if err := s.pause(ctx, tick); err != nil {
			return err
		}
		if s.log != nil && s.stopRequested() {
			return s.stopWhileWaiting(ctx)
		}
	}
}

// stopWhileWaiting carries out a `backlog stop` asked while the run was
// opening or ending: the workers stop now. A --finish is left for the
// next `backlog run` (the early end needs what is being waited for); a
// run already ending needs none.
func (s *Supervisor) stopWhileWaiting(ctx context.Context) error {
	finish, err := s.halt(ctx)
	if err != nil {
		return err
	}
	if !finish {
		return s.paused()
	}
	if !s.run().Finishing {
		if err := RequestStop(s.log.dir, true); err != nil {
			return fmt.Errorf("keep the finish request for the next backlog run: %w", err)
		}
	}
	return ErrStopped
}

func (s *Supervisor) waitingPath() string { return filepath.Join(s.log.dir, WaitingFile) }

// readWaiting reads a run's wait, nil when it is not waiting (or the
// file cannot be read: status must not fail on it).
func readWaiting(dir string) *backlog.Waiting {
	b, err := os.ReadFile(filepath.Join(dir, WaitingFile))
	if err != nil {
		return nil
	}
	var w backlog.Waiting
	if json.Unmarshal(b, &w) != nil || w.Cause == "" {
		return nil
	}
	return &w
}

// envSlack is how long before a window was noticed a worker's failure
// still counts as the window's doing: the supervisor notices only at its
// next git or API call.
const envSlack = time.Minute

// maxEnvRelaunches bounds the relaunches that do not spend the salvage:
// an environment that keeps failing the worker gets the ordinary rule.
const maxEnvRelaunches = 3

// environmental is the cause when a worker run that lasted from started
// to ended failed because of the supervisor's environment: the run
// overlapped a transient window the supervisor observed (a span, or the
// wait going on now) — it ended no earlier than envSlack before the
// window was noticed and started before the window passed — or its log's
// tail says git failed for an environmental reason. "" otherwise.
func environmental(started, ended time.Time, spans []span, current *waitOut, logTail string) string {
	if current != nil && !ended.Before(current.Since.Add(-envSlack)) {
		return current.Cause
	}
	for _, sp := range spans {
		if !ended.Before(sp.since.Add(-envSlack)) && started.Before(sp.until) {
			return sp.cause
		}
	}
	return gitops.TransientText(logTail)
}
