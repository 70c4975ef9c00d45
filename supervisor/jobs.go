package supervisor

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// Jobs: the slow part of starting a worker (claim, claim hooks, the
// issue's copies, fetch, worktree, payload, the runner's start) runs in a
// goroutine per issue, up to the width at once, so the loop goes on
// seeing exits, merging and starting others meanwhile. So do a merge's
// gates and verify, a look at an issue's CI checks, and the look for
// answers.
//
// The loop goroutine owns the run's state: its log, the reduced run and
// its workers (worker.go). A job is a value of its own type, and what
// changes that state from a job is a method of it: onLoop hands a
// function to the loop and waits until it ran, record writes an event
// that way, sendBack hands the worker back. So every event is still
// written (intent first) and applied by one goroutine, in one order, and
// a function that records or touches the loop's state from a job says
// so by taking the job: code in a job cannot record without one, and
// code on the loop emits directly or, where it does a job's work itself,
// says so with s.inline. While an issue
// has a job the loop leaves that issue alone (it is not observed,
// renewed, merged or dispatched again): only its job changes it, and the
// fields of its IssueRun change only inside the job's own onLoop calls.

// job is one background job: an issue's (its worker's start, its merge,
// a look at its checks) or the run's (the look for answers).
type job struct {
	s *Supervisor
	// w is the issue's worker; nil for a job of the run's.
	w *worker
	// inline: the loop does the job itself, on its own goroutine (while
	// a transient failure is waited out, or when the loop calls a job's
	// verb itself): onLoop runs its function at once.
	inline bool
}

// jobEnd is a job's last word to the loop.
type jobEnd struct {
	issue int
	err   error
}

// jobs is the loop's side of its jobs; every field but the channels is
// the loop's alone.
type jobs struct {
	calls  chan func()
	ended  chan jobEnd
	active map[int]bool
	// merge is the issue whose merge job runs (0: none): the train is
	// one merge at a time.
	merge int
	// err is the first failure of a job not yet taken up by the loop.
	err error
}

func newJobs() jobs {
	return jobs{calls: make(chan func()), ended: make(chan jobEnd), active: map[int]bool{}}
}

// onLoop runs f on the loop goroutine: handed over and waited for, or
// at once when the loop does the job itself.
func (j *job) onLoop(f func()) {
	if j.inline {
		f()
		return
	}
	done := make(chan struct{})
	j.s.jobs.calls <- func() {
		defer close(done)
		f()
	}
	<-done
}

// record writes ev to the run's log, on the loop.
func (j *job) record(ev backlog.Event) error {
	var err error
	j.onLoop(func() { err = j.s.emit(ev) })
	return err
}

// sendBack leaves the worker of an issue a merge sent back (its state is
// claimed again, with the conflict or the rework recorded) to the loop's
// refill, which starts it from that record as its own job once a slot of
// the width is free and its group's surface is its own: the train goes
// on to the next merge meanwhile.
func (j *job) sendBack(workerStart) error { return nil }

// inline is a job for w (nil: the run's) that the loop does itself, in
// place. Called on the loop only.
func (s *Supervisor) inline(w *worker) *job { return &job{s: s, w: w, inline: true} }

// spawn runs body as w's job. Called on the loop only, for an issue with
// no job. While a transient failure is being waited out the work runs
// inline instead: the sweep that goes through is what ends the wait, so
// it must be the one that did the work.
func (s *Supervisor) spawn(ctx context.Context, w *worker, body func(context.Context, *job) error) error {
	return s.goJob(ctx, w.n, w, body)
}

// goJob runs body as the job keyed key (an issue, or answersJob) of w
// (nil: the run's), as spawn does.
func (s *Supervisor) goJob(ctx context.Context, key int, w *worker, body func(context.Context, *job) error) error {
	if s.waiting != nil {
		return body(ctx, s.inline(w))
	}
	s.jobs.active[key] = true
	j := &job{s: s, w: w}
	go func() {
		err := body(ctx, j)
		s.jobs.ended <- jobEnd{issue: key, err: err}
	}()
	return nil
}

// busyJob: issue n has a job; the loop leaves it alone.
func (s *Supervisor) busyJob(n int) bool { return s.jobs.active[n] }

// serve does one thing a job asks for, or takes up a job's end; it
// reports whether a job ended (the loop then sweeps again).
func (s *Supervisor) serve(f func(), end *jobEnd) bool {
	if f != nil {
		f()
		return false
	}
	delete(s.jobs.active, end.issue)
	if end.issue == s.jobs.merge {
		s.jobs.merge = 0
	}
	if end.err != nil && s.jobs.err == nil {
		s.jobs.err = end.err
	}
	return true
}

// takeJobErr returns (and forgets) the first failure of a job.
func (s *Supervisor) takeJobErr() error {
	err := s.jobs.err
	s.jobs.err = nil
	return err
}

// settle waits until every job ended, doing what they ask meanwhile. A
// failure is kept for the loop (takeJobErr).
func (s *Supervisor) settle() {
	for len(s.jobs.active) > 0 {
		select {
		case f := <-s.jobs.calls:
			s.serve(f, nil)
		case end := <-s.jobs.ended:
			s.serve(nil, &end)
		}
	}
}

// await waits for a reason to sweep again: a watched run changed, a job
// ended, the tick. What jobs ask of the loop meanwhile is done at once.
// With more to merge it only does what is asked already and returns, so
// exits and job calls are taken up between two merges.
func (s *Supervisor) await(ctx context.Context, tick *time.Ticker, more bool) error {
	for {
		if more {
			select {
			case f := <-s.jobs.calls:
				s.serve(f, nil)
				continue
			case end := <-s.jobs.ended:
				s.serve(nil, &end)
				continue
			default:
				return ctx.Err()
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.o.Runs.Changed():
			return nil
		case <-tick.C:
			return nil
		case f := <-s.jobs.calls:
			s.serve(f, nil)
			if s.train.poke {
				return nil // the merge train can go on (a merge commit known, a verdict)
			}
		case end := <-s.jobs.ended:
			s.serve(nil, &end)
			return nil
		}
	}
}

// lockedWriter serialises the output lines of the loop and its jobs.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
