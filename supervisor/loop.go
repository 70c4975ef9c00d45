package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
)

// replanEvery is how often an unbounded run looks for new issues while
// nothing in it ended.
const replanEvery = time.Minute

// ErrStopped is returned when `backlog stop` asked the run to stop. The
// run stays open: `backlog run` resumes it.
var ErrStopped = errors.New("backlog run stopped")

// loop drives the run until every issue it took is final and no more
// work is to be taken: observe workers, merge what is ready, refill.
func (s *Supervisor) loop(ctx context.Context, resumed bool) error {
	if resumed && s.stopRequested() {
		// `backlog stop` while no supervisor was alive: its workers were
		// stopped then; record them as stopped and go on (or finish). A
		// request written once this supervisor held the lane (while it
		// was opening the run) is a stop of this one: it pauses as asked.
		ours := s.stopAskedOfUs()
		finish, err := s.halt(ctx)
		if err != nil {
			return err
		}
		if finish {
			return s.finishEarly(ctx)
		}
		if ours {
			return ErrStopped
		}
	}
	for _, is := range s.run().List() {
		if is.State == backlog.StateRunning && is.RunDir != "" {
			s.o.Runs.Watch(is.RunDir)
		}
	}
	if s.waiting == nil {
		_ = os.Remove(s.waitingPath()) // a wait of a supervisor that died
	}
	tick := time.NewTicker(s.o.Tick)
	defer tick.Stop()
	// The jobs' context ends with the loop: a loop that returns takes
	// its jobs down with it and waits for them (settle).
	jctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		s.settle()
	}()
	for {
		if s.stopRequested() {
			s.cancelAnswers()
			s.settle() // a start under way finishes before the stop
			return s.stop(ctx)
		}
		if s.run().Foreign != nil && !s.halted {
			if err := s.haltForeign(ctx); err != nil {
				return err
			}
		}
		began := s.o.Now()
		err := s.takeJobErr()
		if err == nil {
			err = s.step(jctx)
		}
		if err == nil {
			err = s.recovered(began) // recorded, or the sweep is tried again
		}
		if err != nil {
			// A transient failure is waited out (workers keep running);
			// the next sweep is the retry.
			if err := s.ride(err); err != nil {
				return err
			}
			if err := s.pause(ctx, tick); err != nil {
				return err
			}
			continue
		}
		if s.complete() {
			if wait, err := s.awaitAnswers(); err != nil || !wait {
				return err
			}
		}
		if err := s.await(ctx, tick, s.trainWants()); err != nil {
			return err
		}
	}
}

// pause waits out the backoff of a failed sweep, looking for a stop
// request at every tick.
func (s *Supervisor) pause(ctx context.Context, tick *time.Ticker) error {
	t := time.NewTimer(s.waitFor)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		case <-tick.C:
			if s.log != nil && s.stopRequested() {
				return nil
			}
		case f := <-s.jobs.calls:
			s.serve(f, nil)
		case end := <-s.jobs.ended:
			s.serve(nil, &end)
		}
	}
}

func (s *Supervisor) step(ctx context.Context) error {
	if err := s.renewClaims(ctx); err != nil {
		return err
	}
	if err := s.observe(ctx); err != nil {
		return err
	}
	s.stopForBudget(ctx)
	if err := s.pollChecks(ctx); err != nil {
		return err
	}
	if err := s.trainStep(ctx); err != nil {
		return err
	}
	if err := s.takeAnswers(ctx); err != nil {
		return err
	}
	if err := s.endPauses(); err != nil {
		return err
	}
	return s.refill(ctx)
}

// complete: nothing in flight and nothing more to take. A look for
// answers under way is not work in flight: the run's end cuts it short
// (an answer it missed is the next run's).
func (s *Supervisor) complete() bool {
	for n := range s.jobs.active {
		if n != answersJob {
			return false
		}
	}
	for _, is := range s.run().Issues {
		if !backlog.Terminal(is.State) {
			return false
		}
	}
	return len(s.run().Info.Bounded) > 0 || s.drained || s.capped || s.run().Finishing
}

// busy counts workers holding a slot or waiting for one (claimed,
// running or starting): a planned issue starts only below the width.
func (s *Supervisor) busy() int {
	n := 0
	for _, is := range s.run().Issues {
		if is.State == backlog.StateClaimed || is.State == backlog.StateRunning || s.busyJob(is.Number) {
			n++
		}
	}
	return n
}

// working counts the workers that run or are being started: the
// width's bound. A claimed issue (sent back by an answer, a rework or a
// conflict, paused by a usage limit, cut short by a kill) holds no slot
// while it waits; it starts when working is below the width.
func (s *Supervisor) working() int {
	n := 0
	for _, is := range s.run().Issues {
		starting := s.busyJob(is.Number) && (is.State == backlog.StatePlanned || is.State == backlog.StateClaimed)
		if is.State == backlog.StateRunning || starting {
			n++
		}
	}
	return n
}

// refill starts workers while slots are free: first issues already in the
// run whose group predecessors are final, then (once) the bounded plan or
// (unbounded) a fresh plan against the work in flight.
func (s *Supervisor) refill(ctx context.Context) error {
	if s.halted {
		return nil
	}
	bounded := len(s.run().Info.Bounded) > 0
	if s.run().LastPlan == nil || (!bounded && s.wantMore()) {
		if err := s.plan(ctx); err != nil {
			return err
		}
	} else if bounded {
		if err := s.take(ctx, s.run().LastPlan.Groups); err != nil {
			return err
		}
	}
	for _, is := range s.run().List() {
		if (is.State != backlog.StatePlanned && is.State != backlog.StateClaimed) || s.busyJob(is.Number) || !s.turnOf(is) {
			continue
		}
		// A claimed issue goes before planned ones (busy counts it), but
		// only into a free slot: never more workers than the width.
		if is.State == backlog.StatePlanned && s.busy() >= s.o.Width || s.working() >= s.o.Width {
			continue
		}
		on, ok := s.startsOn()
		if !ok {
			continue // every executor is paused by a usage limit
		}
		w := s.worker(is.Number)
		if is.State == backlog.StatePlanned {
			if dropped, err := s.dropForBudget(w); dropped || err != nil {
				return err
			}
		}
		w.executor = on
		if err := s.spawn(ctx, w, s.dispatch); err != nil {
			return err
		}
	}
	return nil
}

// wantMore: unbounded, not capped, slots free and nothing waiting.
func (s *Supervisor) wantMore() bool {
	if s.capped || s.drained || s.run().Finishing {
		return false
	}
	// Re-plan when something ended (a slot or a surface freed) or after
	// a while (new issues), not on every sweep: each plan lists the whole
	// backlog and is recorded.
	if !s.replan && s.o.Now().Sub(s.plannedAt) < replanEvery {
		return false
	}
	if s.o.MaxMinutes > 0 && s.o.Now().Sub(s.start) >= time.Duration(s.o.MaxMinutes)*time.Minute {
		s.capped = true
		s.printf("cap reached: %d minutes; finishing work in flight", s.o.MaxMinutes)
		return false
	}
	if s.o.MaxIssues > 0 && len(s.run().Issues)+len(s.run().Dropped) >= s.o.MaxIssues {
		s.capped = true
		s.printf("cap reached: %d issues; finishing work in flight", s.o.MaxIssues)
		return false
	}
	if s.busy() >= s.o.Width {
		return false
	}
	for _, is := range s.run().Issues {
		if is.State == backlog.StatePlanned {
			return false
		}
	}
	return true
}

// turnOf: a group's surface is one worker's at a time. Every issue of
// is's group that entered the run before it is final, and no other
// issue of the group holds the surface (runs, starts, or waits with its
// change to be merged) — a later one that started while is waited for
// an answer included.
func (s *Supervisor) turnOf(is *backlog.IssueRun) bool {
	if is.Group == 0 {
		return true
	}
	before := true
	for _, o := range s.run().List() {
		if o.Number == is.Number {
			before = false
			continue
		}
		if o.Group != is.Group {
			continue
		}
		if before && !backlog.Terminal(o.State) || s.holdsSurface(o) {
			return false
		}
	}
	return true
}

// holdsSurface: o's worker runs or starts, or its change waits to merge.
func (s *Supervisor) holdsSurface(o *backlog.IssueRun) bool {
	switch o.State {
	case backlog.StateRunning, backlog.StateReady, backlog.StateMerging:
		return true
	}
	return s.busyJob(o.Number)
}

// checkpoint prints the run's tally line (merged, in flight, blocked,
// needs-input) when something changed it.
func (s *Supervisor) checkpoint(why string) {
	t := s.run().Tally()
	line := fmt.Sprintf("tally (%s): merged %d / in flight %d / blocked %d / needs-input %d", why, t.Merged, t.InFlight, t.Blocked, t.NeedsInput)
	if t.Planned > 0 {
		line += fmt.Sprintf(" / waiting %d", t.Planned)
	}
	if t.Stopped > 0 {
		line += fmt.Sprintf(" / stopped %d", t.Stopped)
	}
	if b := s.run().Bucket(); len(b) > 0 {
		nums := make([]string, len(b))
		for i, q := range b {
			nums[i] = fmt.Sprintf("#%d", q.Issue)
		}
		line += " (waiting for answers: " + strings.Join(nums, " ") + ")"
	}
	if n := s.o.Source.Calls(); n > 0 {
		line += fmt.Sprintf(" · %d API calls", n)
	}
	s.printf("%s", line)
}

// stopRequested: `backlog stop` wrote the run's control file.
func (s *Supervisor) stopRequested() bool {
	_, err := os.Stat(filepath.Join(s.log.dir, runlog.ControlFile))
	return err == nil
}

// stopAskedOfUs reports whether the stop request was written after this
// supervisor started (it held the lane then, so `backlog stop` left the
// stop to it), by the real clock the file's time is on.
func (s *Supervisor) stopAskedOfUs() bool {
	fi, err := os.Stat(filepath.Join(s.log.dir, runlog.ControlFile))
	return err == nil && !s.began.IsZero() && !fi.ModTime().Before(s.began)
}

// stop terminates the workers (their worktrees and claims stay) and leaves
// the run open for `backlog run` to resume; with `backlog stop --finish`
// it then merges what is ready, parks what is not, and lets the run end
// with its final PR.
func (s *Supervisor) stop(ctx context.Context) error {
	finish, err := s.halt(ctx)
	if err != nil {
		return err
	}
	if !finish {
		return s.paused()
	}
	return s.finishEarly(ctx)
}

// paused records that `backlog stop` paused the run, so status says so
// until a `backlog run` resumes it, and returns ErrStopped.
func (s *Supervisor) paused() error {
	if err := s.emit(backlog.Event{Kind: backlog.EvRunPaused, Detail: "backlog stop"}); err != nil {
		return err
	}
	return ErrStopped
}

// halt carries out a stop request: every running worker is recorded as
// stopped (not failed: resuming it costs no salvage) and terminated. It
// reports whether the request asked to finish the run.
func (s *Supervisor) halt(ctx context.Context) (bool, error) {
	s.cancelAnswers()
	s.settle() // no worker starts behind the stop
	var req struct {
		Finish bool `json:"finish"`
	}
	if b, err := os.ReadFile(filepath.Join(s.log.dir, runlog.ControlFile)); err == nil {
		_ = json.Unmarshal(b, &req) // unreadable: a plain stop
	}
	os.Remove(filepath.Join(s.log.dir, runlog.ControlFile))
	grace := time.Duration(s.o.Lane.Runtime.TerminateGraceMs) * time.Millisecond
	for _, is := range s.run().List() {
		if is.State != backlog.StateRunning || is.RunDir == "" {
			continue
		}
		dir := is.RunDir
		if is.Outcome == "" {
			if err := s.emit(backlog.Event{Kind: backlog.EvWorkerFinished, Issue: is.Number, Attempt: is.Attempts,
				Outcome: outcomeStopped, Detail: "stopped by backlog stop"}); err != nil {
				return false, err
			}
		}
		if err := s.o.Runs.Terminate(ctx, dir, grace, false); err != nil {
			s.printf("warning: stop #%d: %v", is.Number, err)
		}
	}
	s.checkpoint("stopped")
	return req.Finish, nil
}

// StopWorkers terminates the running workers of the run in dir when no
// supervisor is alive to do it (TERM, grace, KILL, all at once). The stop
// request left in the run tells the next `backlog run` they were stopped,
// not failed.
func StopWorkers(ctx context.Context, dir string, runs Runs, grace time.Duration) (int, error) {
	r, _, err := runlog.Read(dir)
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, is := range r.List() {
		if is.State == backlog.StateRunning && is.RunDir != "" {
			if err := runs.Terminate(ctx, is.RunDir, grace, false); err != nil {
				errs = append(errs, fmt.Errorf("#%d: %w", is.Number, err))
				continue
			}
			n++
		}
	}
	return n, errors.Join(errs...)
}

// finishEarly ends a stopped run now: the ready queue is merged, every
// other unfinished issue is parked (its worktree kept) or, if never
// claimed, dropped, and nothing more is taken.
func (s *Supervisor) finishEarly(ctx context.Context) error {
	s.capped = true
	if err := s.mergeReady(ctx); err != nil {
		return err
	}
	s.settle() // a worker sent back by a merge: started, then parked below
	for _, is := range s.run().List() {
		switch {
		case backlog.Terminal(is.State):
		case is.State == backlog.StatePlanned:
			if err := s.emit(backlog.Event{Kind: backlog.EvDropped, Issue: is.Number, Outcome: "stopped",
				Detail: "the run was finished early before it started"}); err != nil {
				return err
			}
		default:
			if err := s.park(ctx, s.inline(s.worker(is.Number)), "the run was finished early (backlog stop --finish) before this issue merged",
				fmt.Sprintf("Work on #%d stopped early; continue it in %s?", is.Number, firstNonEmpty(is.Worktree, "a new run")), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func oneLine(s string) string { return backlog.OneLine(s) }
