package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// WaitingFile, in a run directory, says which transient failure the
// supervisor is waiting out; it exists only while it waits.
const WaitingFile = "waiting.json"

// Waiting is a transient failure the supervisor is waiting out: its
// sweeps fail, so nothing is dispatched or merged, while the workers keep
// running. `backlog status` shows it as "waiting: <cause> since <time>".
type Waiting struct {
	Cause    string    `json:"cause"`  // in words: "origin unreachable", "no space left on device"
	Detail   string    `json:"detail"` // the last failure, one line
	Since    time.Time `json:"since"`
	Tries    int       `json:"tries"` // failed sweeps so far
	NextTry  time.Time `json:"nextTryAt"`
	GiveUpAt time.Time `json:"giveUpAt"` // since + backlog.transientRetryMinutes
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
// ends on it.
func (s *Supervisor) ride(err error) error {
	cause := transientCause(err)
	if cause == "" {
		return err
	}
	now := s.o.Now()
	w := s.waiting
	if w == nil {
		w = &Waiting{Cause: cause, Since: now}
		s.waiting = w
		s.printf("waiting: %s since %s; workers keep running, nothing is dispatched or merged until it passes (%s)",
			cause, now.UTC().Format(time.RFC3339), oneLine(err.Error()))
	} else if w.Cause != cause {
		s.printf("waiting: now %s (%s)", cause, oneLine(err.Error()))
		w.Cause = cause
	}
	limit := s.o.Config.Backlog.TransientRetry()
	w.Detail, w.GiveUpAt = oneLine(err.Error()), w.Since.Add(limit)
	if !now.Before(w.GiveUpAt) {
		s.endWaiting(now)
		return &GaveUpError{Cause: w.Cause, Since: w.Since, After: limit, Err: err}
	}
	wait := s.o.Backoff(w.Tries)
	w.Tries++
	w.NextTry = now.Add(wait)
	s.waitFor = wait
	if err := jsonfile.Write(s.waitingPath(), w); err != nil {
		s.o.Logger.Warn("backlog: could not record the wait for status", "err", err) // the disk may be why
	}
	return nil
}

// recovered ends a wait once a sweep (begun at began) went through. The
// window ends when that sweep began: workers it started came after it.
func (s *Supervisor) recovered(began time.Time) {
	if s.waiting == nil {
		return
	}
	s.printf("recovered: %s passed after %s", s.waiting.Cause, began.Sub(s.waiting.Since).Round(time.Second))
	s.endWaiting(began)
}

func (s *Supervisor) endWaiting(now time.Time) {
	s.spans = append(s.spans, span{since: s.waiting.Since, until: now, cause: s.waiting.Cause})
	s.waiting = nil
	_ = os.Remove(s.waitingPath())
}

func (s *Supervisor) waitingPath() string { return filepath.Join(s.log.dir, WaitingFile) }

// readWaiting reads a run's wait, nil when it is not waiting (or the
// file cannot be read: status must not fail on it).
func readWaiting(dir string) *Waiting {
	b, err := os.ReadFile(filepath.Join(dir, WaitingFile))
	if err != nil {
		return nil
	}
	var w Waiting
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
func environmental(started, ended time.Time, spans []span, current *Waiting, logTail string) string {
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
