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
// seeing exits, merging and starting others meanwhile.
//
// The loop goroutine owns the run's state: its log, the reduced run and
// its workers (worker.go). A job touches that state only through
// onLoop, which hands a function to the loop and waits until it ran, so
// every event is still written (intent first) and applied by one
// goroutine, in one order. While an issue has a job the loop leaves that
// issue alone (it is not observed, renewed, merged or dispatched again):
// only its job changes it, and the fields of its IssueRun change only
// inside the job's own onLoop calls.

// jobKey marks a job's context: onLoop called with it goes through the loop.
type jobKey struct{}

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

// inJob: ctx is a job's.
func inJob(ctx context.Context) bool {
	_, ok := ctx.Value(jobKey{}).(int)
	return ok
}

// onLoop runs f on the loop goroutine: directly when the caller is the
// loop, else handed over and waited for.
func (s *Supervisor) onLoop(ctx context.Context, f func()) {
	if !inJob(ctx) {
		f()
		return
	}
	done := make(chan struct{})
	s.jobs.calls <- func() {
		defer close(done)
		f()
	}
	<-done
}

// record is emit from the loop or a job.
func (s *Supervisor) record(ctx context.Context, ev backlog.Event) error {
	var err error
	s.onLoop(ctx, func() { err = s.emit(ev) })
	return err
}

// spawn runs body as issue n's job. Called on the loop only, for an
// issue with no job. While a transient failure is being waited out the
// work runs inline instead: the sweep that goes through is what ends
// the wait, so it must be the one that did the work.
func (s *Supervisor) spawn(ctx context.Context, n int, body func(ctx context.Context) error) error {
	// inJob first: a job (dispatch starting its worker) must not read
	// s.waiting, which the loop writes.
	if inJob(ctx) || s.waiting != nil {
		return body(ctx)
	}
	s.jobs.active[n] = true
	jctx := context.WithValue(ctx, jobKey{}, n)
	go func() {
		err := body(jctx)
		s.jobs.ended <- jobEnd{issue: n, err: err}
	}()
	return nil
}

// sendBack leaves the worker of an issue a merge sent back (its state is
// claimed again, with the conflict or the rework recorded) to the loop's
// refill, which starts it from that record as its own job once a slot of
// the width is free and its group's surface is its own: the train goes
// on to the next merge meanwhile.
func (s *Supervisor) sendBack(context.Context, int, workerStart) error { return nil }

// offLoop runs f, which writes to the issue tracker, as issue n's job
// when called on the loop, so that a GitHub rate-limit wait in it never
// holds the loop; inside a job it runs at once. n has no job (the loop
// leaves issues with one alone).
func (s *Supervisor) offLoop(ctx context.Context, n int, f func(context.Context) error) error {
	if inJob(ctx) {
		return f(ctx)
	}
	return s.spawn(ctx, n, f)
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
