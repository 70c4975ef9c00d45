package submitted

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// defaultLaneEvery is how often a watcher whose next run waits for the
// lane looks at the lane lock again. The lock is a kernel lock with no
// change to watch for, and a look costs two system calls.
const defaultLaneEvery = 100 * time.Millisecond

// watcherPatience is how long a starting watcher tries for its lock.
const watcherPatience = 250 * time.Millisecond

// Watcher runs a lane's queue: the oldest queued run once the lane is
// free, one at a time, each as a launcher process, until none is left.
type Watcher struct {
	Queue Queue
	// Launcher is a run's command line before its command (launch or
	// resume) and args: the binary and the lane's flags.
	Launcher []string
	// Out gets the launchers' output and the watcher's own lines.
	Out io.Writer
	// LaneEvery is how often a busy lane is looked at again
	// (default 100 ms).
	LaneEvery time.Duration
}

// Run holds the watcher lock and runs queued runs until none is left;
// another watcher holding the lock makes it return at once. It gives the
// lock up under the queue lock, so a submit either sees it held (and its
// run is picked here) or starts a new watcher.
func (w Watcher) Run(ctx context.Context) error {
	q := w.Queue
	if w.Out == nil {
		w.Out = io.Discard
	}
	if err := jsonfile.MkdirAll(q.st.dir); err != nil {
		return err
	}
	wl := flock.New(q.watcherLock)
	// A probe (WatcherAlive) holds the lock for an instant: a watcher
	// starting then must not take it for another's and leave.
	lctx, cancel := context.WithTimeout(ctx, watcherPatience)
	ok, err := wl.TryLockContext(lctx, 5*time.Millisecond)
	cancel()
	if !ok {
		if errors.Is(err, context.DeadlineExceeded) {
			err = nil // another watcher runs the queue
		}
		return err
	}
	defer wl.Unlock()
	q.failOrphans(w.Out)
	for {
		r, err := w.take(ctx, wl)
		if err != nil || r == nil {
			return err
		}
		w.supervise(ctx, r)
	}
}

// take returns the oldest queued run, marked running, once no launcher
// or supervisor holds the lane: a run waits its turn behind a foreground
// `launch` or `backlog run` as it does behind a submitted one. It
// returns nil, having given the watcher lock up, when none is queued.
func (w Watcher) take(ctx context.Context, wl *flock.Flock) (*Run, error) {
	q := w.Queue
	waiting := ""
	for {
		unlock, err := q.lock(ctx)
		if err != nil {
			return nil, err
		}
		r := q.st.first(func(r *Run) bool { return r.State == Queued })
		if r == nil {
			_ = wl.Unlock()
			unlock()
			return nil, nil
		}
		if !lanes.Held(q.layout.LockPath()) {
			now := time.Now().UTC()
			r.State, r.StartedAt, r.Pid = Running, &now, 0
			err = q.st.write(r)
			unlock()
			return r, err
		}
		unlock()
		if waiting != r.RunID {
			waiting = r.RunID
			fmt.Fprintf(w.Out, "watcher: run %s waits for lane %s: %s\n", r.RunID, q.layout.Lane, holder(q.layout.LockPath()))
		}
		if err := w.waitLaneFree(ctx); err != nil {
			return nil, err
		}
	}
}

// holder names who holds the lane lock, as its body says.
func holder(path string) string {
	info, err := lanes.ReadLockInfo(path)
	if err != nil || info.Pid == 0 {
		return "another launcher holds it"
	}
	return fmt.Sprintf("pid %d holds it (%v)", info.Pid, info.Argv)
}

// waitLaneFree returns once the lane lock is free, or with ctx's error.
func (w Watcher) waitLaneFree(ctx context.Context) error {
	every := w.LaneEvery
	if every <= 0 {
		every = defaultLaneEvery
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for lanes.Held(w.Queue.layout.LockPath()) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// supervise runs r's launcher and records its end. One killed by a
// signal is started once more with the same command line (launch and
// resume adopt the agents still running); a second such death fails the
// run. A launcher that exits 32 found the lane taken between the look
// and its start, having done nothing: the run is queued again.
func (w Watcher) supervise(ctx context.Context, r *Run) {
	q := w.Queue
	argv := append(append(slices.Clone(w.Launcher), r.Command), r.Args...)
	events := jsonfile.NewTail[state.Event](q.layout.EventsPath())
	_, _, _, _ = events.Read() // what the lane's log held before this run
	started := time.Now()
	for {
		end, lastLine, err := w.launch(ctx, r, argv)
		switch {
		case err != nil:
			r.Finish(exitcode.Failed, false, err.Error())
		case end.Signal == 0 && end.Code == exitcode.LaneBusy && ctx.Err() == nil:
			r.State, r.StartedAt, r.Pid = Queued, nil, 0
			fmt.Fprintf(w.Out, "watcher: lane %s was taken before run %s's launcher got it; the run waits its turn again\n", q.layout.Lane, r.RunID)
		case end.Signal == 0 || ctx.Err() != nil:
			evs, _, _, _ := events.Read()
			stopped, why := verdict(end.Code, evs, stopAskedSince(q.layout.ControlPath(), started), lastLine)
			if ctx.Err() != nil && end.Signal != 0 {
				why = "watcher interrupted: " + ctx.Err().Error()
			}
			if why == "" {
				why = r.Why // a restart's note stays on a run that then passed
			}
			r.Finish(end.Code, stopped, why)
		case r.Restarts >= 1:
			r.Finish(128+int(end.Signal), false, fmt.Sprintf("launcher died twice (last: pid %d killed by %s); not restarted again", r.Pid, signalName(end.Signal)))
		default:
			r.Restarts++
			r.Why = fmt.Sprintf("launcher pid %d killed by %s; restarted once, adopting its live agents", r.Pid, signalName(end.Signal))
			fmt.Fprintln(w.Out, "watcher:", r.Why)
			continue
		}
		break
	}
	if err := q.record(ctx, r); err != nil {
		fmt.Fprintln(w.Out, "watcher:", err)
	}
}

// record writes r's end; a run queued again is written under the queue
// lock, as `stop` stops queued runs under it.
func (q Queue) record(ctx context.Context, r *Run) error {
	if r.State != Queued {
		return q.st.write(r)
	}
	unlock, err := q.lock(context.WithoutCancel(ctx))
	if err != nil {
		return err
	}
	defer unlock()
	return q.st.write(r)
}

// signalName is "signal 9 (killed)".
func signalName(s syscall.Signal) string { return fmt.Sprintf("signal %d (%s)", int(s), s) }

// launch starts one launcher, records its pid and waits for it; a
// watcher told to stop passes it on (the launcher ends its wave). The
// launcher's output goes to Out; lastLine is its stderr's last line.
func (w Watcher) launch(ctx context.Context, r *Run, argv []string) (end runtime.Ended, lastLine string, err error) {
	tail := &tailBuffer{max: 4 << 10}
	child, err := runtime.StartChild(argv, w.Out, io.MultiWriter(w.Out, tail))
	if err != nil {
		return end, "", fmt.Errorf("launcher not started: %w", err)
	}
	r.Pid = child.Pid()
	if err := w.Queue.st.write(r); err != nil {
		fmt.Fprintln(w.Out, "watcher:", err)
	}
	end, err = child.Wait(ctx)
	return end, tail.lastLine(), err
}

// failOrphans ends the runs a dead watcher left running: only a watcher
// holding the lock writes running, so none is live now.
func (q Queue) failOrphans(out io.Writer) {
	recs, _ := q.st.list()
	for _, r := range recs {
		if r.State != Running {
			continue
		}
		r.Finish(exitcode.Failed, false, fmt.Sprintf("its watcher died while launcher pid %d ran; resubmit to adopt the live agents", r.Pid))
		if err := q.st.write(r); err != nil {
			fmt.Fprintln(out, "watcher:", err)
		}
	}
}
