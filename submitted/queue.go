package submitted

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

// ErrBusy is Submit's refusal with noQueue while a run is active on the
// lane (exit 32).
var ErrBusy = errors.New("has an active run")

// Queue is a lane's submitted runs and the two locks around them:
// queue.lock serialises a submit (and `stop`'s sweep of queued runs)
// against the watcher's pick of the next run; watcher.lock is held by
// the live watcher for its whole life.
type Queue struct {
	layout                 lanes.Layout
	st                     store
	queueLock, watcherLock string
}

// Open is the queue of the lane laid out by layout; nothing is created
// until a run is submitted.
func Open(layout lanes.Layout) Queue {
	dir := layout.SubmittedDir()
	return Queue{layout: layout, st: store{dir: dir},
		queueLock: filepath.Join(dir, "queue.lock"), watcherLock: filepath.Join(dir, "watcher.lock")}
}

// Path is run id's record file.
func (q Queue) Path(id string) string { return q.st.path(id) }

// Read is run id's record.
func (q Queue) Read(id string) (*Run, error) { return q.st.read(id) }

// Runs is every readable record, oldest submission first, and the
// records that could not be read.
func (q Queue) Runs() ([]*Run, []error) { return q.st.list() }

// Active is the oldest queued or running run, nil when none.
func (q Queue) Active() *Run { return q.st.first(func(r *Run) bool { return !r.Terminal() }) }

// WatcherAlive reports whether a watcher holds its lock.
func (q Queue) WatcherAlive() bool {
	fl := flock.New(q.watcherLock)
	ok, err := fl.TryLock()
	if err != nil {
		return false
	}
	if ok {
		_ = fl.Unlock()
		return false
	}
	return true
}

// lock takes the queue lock, waiting at most until ctx ends.
func (q Queue) lock(ctx context.Context) (unlock func(), err error) {
	if err := jsonfile.MkdirAll(q.st.dir); err != nil {
		return nil, fmt.Errorf("submitted runs %s: %w", q.st.dir, err)
	}
	fl := flock.New(q.queueLock)
	ok, err := fl.TryLockContext(ctx, 5*time.Millisecond)
	if err != nil || !ok {
		return nil, fmt.Errorf("submitted-run queue lock %s: %w", q.queueLock, err)
	}
	return func() { _ = fl.Unlock() }, nil
}

// Submit records a queued run of command (launch or resume) with the
// launcher's args and makes sure the lane's watcher runs: startWatcher
// starts one when none holds its lock. busy says the run waits behind
// another (a submitted run, or a launcher or supervisor holding the
// lane). With noQueue a busy lane is refused with ErrBusy, recording
// nothing.
func (q Queue) Submit(ctx context.Context, command string, args []string, noQueue bool, startWatcher func(context.Context) error) (*Run, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	unlock, err := q.lock(ctx)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	// A queued record whose watcher is still starting counts: it runs first.
	busy := q.WatcherAlive() || lanes.Held(q.layout.LockPath()) || q.Active() != nil
	if busy && noQueue {
		return nil, busy, fmt.Errorf("lane %s %w (a submitted run or a launcher); --no-queue: not queued", q.layout.Lane, ErrBusy)
	}
	rec := NewRun(q.layout.Lane, Queued, command, args, time.Now())
	if err := q.st.write(rec); err != nil {
		return nil, busy, err
	}
	if !q.WatcherAlive() {
		if err := startWatcher(ctx); err != nil {
			rec.Finish(exitcode.Failed, false, "watcher not started: "+err.Error())
			_ = q.st.write(rec)
			return nil, busy, err
		}
	}
	return rec, busy, nil
}

// StopQueued marks the lane's queued runs stopped (by `stop`), under the
// queue lock so the watcher cannot start one meanwhile, and returns
// their ids.
func (q Queue) StopQueued(ctx context.Context) ([]string, error) {
	if _, err := os.Stat(q.st.dir); err != nil {
		return nil, nil
	}
	unlock, err := q.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	recs, _ := q.st.list()
	var ids []string
	var errs []error
	for _, r := range recs {
		if r.State != Queued {
			continue
		}
		r.Finish(exitcode.Failed, true, "stopped on request by `stop` before it started")
		if err := q.st.write(r); err != nil {
			errs = append(errs, err)
			continue
		}
		ids = append(ids, r.RunID)
	}
	return ids, errors.Join(errs...)
}
