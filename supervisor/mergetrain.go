package supervisor

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// The merge pipeline (docs/merge-gate.md, "The pipeline"). Up to
// backlog.verifyParallel candidates are verified at once, in the train's
// order, each at the merge of itself onto the would-be merge commit of
// the candidate ahead of it (the first onto the wave tip). Merges land
// one at a time, in that order, each as exactly the commit its verify
// passed on, and only once every candidate ahead of it landed: every
// commit the wave branch points at was verified as that tree.
//
// A candidate whose verify fails (or whose merge conflicts with what is
// ahead of it) is stepped over: the ones behind it are prepared and
// verified again without it (their running verifies cancelled), and
// never land on a result that included it. Its own verdict counts only
// once everything ahead of it landed — it is then sent back (rework,
// conflict) as before; if a candidate ahead fails first, it is verified
// again without that one.
//
// A candidate enters the pipeline only through the gates (admit: claim,
// surface, worker PR, CI checks, PR reviews), so nothing is built on a
// candidate whose checks are not green: one that waits on its checks
// steps out of the train before it has a merge commit, and rejoins at
// the pipeline's end when they turn green.
//
// The pipeline is the loop's: slots change on the loop only, each slot's
// gates, prepare and verify run as its issue's job, and landing the
// first slot is a job of its own. None of it outlives the process: the
// run's log says what was being verified on what (verify events with the
// commit, its base and the candidates ahead), and a restarted supervisor
// records those as interrupted and verifies again. A merge verified and
// recorded for its push before a kill (gitops' intent ref) is taken up
// as verified.

// slotState is where a candidate of the pipeline is.
type slotState int

const (
	slotAdmitting slotState = iota // its job runs the gates, then prepares its merge
	slotVerifying                  // its merge commit is known; its verify runs
	slotPassed                     // verified: lands once it is first
	slotAlready                    // its worker is in its base already: nothing to merge
	slotFailed                     // its verify failed: held until all ahead of it landed
	slotConflict                   // its merge conflicts with its base: held likewise
	slotStale                      // its base changed: prepared and verified again
	slotLanded                     // merged; leaves with its job
)

// slot is one candidate of the pipeline.
type slot struct {
	n         int
	state     slotState
	admitted  bool // its gates passed: a verify again skips them
	out       bool // it left the train at its gates: leaves with its job
	base      string
	ahead     []int  // the candidates base holds beyond the wave tip
	commit    string // its would-be merge commit
	verdict   error  // its failed verify
	conflicts []string
	cancel    context.CancelFunc // ends its job's verify
	// tip is the worker commit whose verifies ended with no verdict
	// (noverdict.go): tries of them, counted of those on the wave tip
	// alone; retryAt is when the next may start.
	tip            string
	tries, counted int
	retryAt        time.Time
}

// train is the loop's pipeline.
type train struct {
	slots []*slot
	// poke: a job changed a slot (a merge commit known, a verdict): the
	// loop sweeps again rather than wait for its tick.
	poke bool
	// noted: the verifies a previous supervisor left running are
	// recorded as interrupted.
	noted bool
}

// speculative: the train verifies candidates in a pipeline. Without a
// verify step there is nothing to overlap, and a run whose log predates
// the recorded wave tip merges one at a time as it began.
func (s *Supervisor) speculative() bool {
	return s.verifies() && s.run().WaveTip != ""
}

// verifyParallel is backlog.verifyParallel, default min(width, 4).
func (s *Supervisor) verifyParallel() int {
	if p := s.o.Config.Backlog.VerifyParallel; p > 0 {
		return p
	}
	return max(1, min(s.o.Width, 4))
}

// trainStep moves the merge train on, on the loop, every sweep: the
// first candidate lands or gets its verdict, stale ones are verified
// again, and the pipeline is filled up to backlog.verifyParallel.
func (s *Supervisor) trainStep(ctx context.Context) error {
	if err := s.noteInterrupted(); err != nil {
		return err
	}
	if !s.speculative() {
		return s.mergeNext(ctx)
	}
	s.train.poke = false
	if s.stopRequested() || s.run().Foreign != nil || s.halted {
		return nil
	}
	s.prune()
	s.rebase()
	for _, a := range s.trainPlan() {
		if err := s.act(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// trainWants: the train has a job to start now (the loop then does not
// wait for its tick).
func (s *Supervisor) trainWants() bool {
	if !s.speculative() {
		return s.mergeable()
	}
	if s.run().Foreign != nil || s.halted {
		return false
	}
	s.prune()
	s.rebase()
	return len(s.trainPlan()) > 0
}

// prune drops the slots whose job ended and whose candidate landed, left
// the train at its gates, or left the queue (sent back, parked).
func (s *Supervisor) prune() {
	keep := s.train.slots[:0]
	for _, sl := range s.train.slots {
		gone := sl.state == slotLanded || sl.out || !slices.Contains(s.run().Queue, sl.n)
		if gone && !s.busyJob(sl.n) {
			if sl.cancel != nil {
				sl.cancel()
			}
			continue
		}
		keep = append(keep, sl)
	}
	clear(s.train.slots[len(keep):])
	s.train.slots = keep
}

// rebase makes stale every slot whose base is no longer the commit it
// should be built on (chain): its verify, if running, is cancelled.
func (s *Supervisor) rebase() {
	c := s.chainStart()
	for _, sl := range s.train.slots {
		if sl.state == slotLanded || sl.out {
			continue
		}
		if sl.state != slotAdmitting && sl.state != slotStale && (!c.known || sl.base != c.base) {
			s.restale(sl)
		}
		c = c.past(sl)
	}
}

// chain is what the next slot is built on, walking the pipeline from
// the wave tip: the merge commit of the last slot verifying or passed,
// and the candidates that commit holds beyond the tip.
type chain struct {
	base  string
	ahead []int
	// known: every slot ahead has its merge commit (none is being
	// prepared, none waits for the verdict below).
	known bool
	// settled: every slot ahead passed, or failed with everything ahead
	// of it passed. A failed (or conflicting) slot is stepped over only
	// then: with a verify still running ahead of it, its failure may be
	// that one's doing, and what is behind it waits (cancelled) until it
	// is known whose — so a failing candidate costs the others one
	// verify round at most.
	settled bool
}

func (s *Supervisor) chainStart() chain {
	return chain{base: s.run().WaveTip, known: true, settled: true}
}

// past is the chain behind sl.
func (c chain) past(sl *slot) chain {
	switch sl.state {
	case slotPassed:
		c.base, c.ahead = sl.commit, append(slices.Clip(c.ahead), sl.n)
	case slotVerifying:
		c.base, c.ahead, c.settled = sl.commit, append(slices.Clip(c.ahead), sl.n), false
	case slotAlready, slotLanded:
	case slotFailed, slotConflict:
		c.known = c.known && c.settled
	default: // being prepared: its commit is not known yet
		c.known, c.settled = false, false
	}
	return c
}

// restale marks sl to be prepared and verified again, its verify cancelled.
func (s *Supervisor) restale(sl *slot) {
	if sl.cancel != nil {
		sl.cancel()
		sl.cancel = nil
	}
	sl.state, sl.commit, sl.verdict, sl.conflicts = slotStale, "", nil, nil
}

// chainTo is what sl should be built on now.
func (s *Supervisor) chainTo(sl *slot) chain {
	c := s.chainStart()
	for _, o := range s.train.slots {
		if o == sl {
			return c
		}
		if !o.out {
			c = c.past(o)
		}
	}
	c.known = false
	return c
}

// Kinds of trainAction.
const (
	actLand  = iota // the first slot, passed: land it
	actJudge        // the first slot, failed or conflicting: send it back
	actRedo         // a stale slot: prepare and verify it again
	actEnter        // a candidate enters the pipeline
)

type trainAction struct {
	kind  int
	sl    *slot
	n     int
	base  string
	ahead []int
}

// trainPlan is what the train starts now: the first slot's landing or
// verdict, then, in order, stale slots verified again and new
// candidates, while fewer than backlog.verifyParallel are being
// prepared or verified and the commit to build on is known.
func (s *Supervisor) trainPlan() []trainAction {
	var acts []trainAction
	if len(s.train.slots) > 0 {
		head := s.train.slots[0]
		switch {
		case s.busyJob(head.n):
		case head.state == slotPassed || head.state == slotAlready:
			acts = append(acts, trainAction{kind: actLand, sl: head, n: head.n})
		case head.state == slotFailed || head.state == slotConflict:
			acts = append(acts, trainAction{kind: actJudge, sl: head, n: head.n})
		}
	}
	c := s.chainStart()
	active, limit := 0, s.verifyParallel()
	for _, sl := range s.train.slots {
		if sl.out || sl.state == slotLanded {
			continue
		}
		busy := s.busyJob(sl.n)
		if sl.state == slotStale && !busy {
			if c.known && active < limit && !s.backingOff(sl) {
				acts = append(acts, trainAction{kind: actRedo, sl: sl, n: sl.n, base: c.base, ahead: c.ahead})
			}
			return acts // behind it, nothing is known until it is prepared
		}
		if sl.state == slotAdmitting || sl.state == slotVerifying || sl.state == slotStale {
			active++
		}
		c = c.past(sl)
	}
	if !c.known || active >= limit {
		return acts
	}
	in := func(n int) bool { return slices.ContainsFunc(s.train.slots, func(sl *slot) bool { return sl.n == n }) }
	if n, ok := s.trainNextAfter(in); ok {
		acts = append(acts, trainAction{kind: actEnter, n: n, base: c.base, ahead: c.ahead})
	}
	return acts
}

// act starts a planned action as its issue's job.
func (s *Supervisor) act(ctx context.Context, a trainAction) error {
	switch a.kind {
	case actLand:
		sl, commit, passed := a.sl, a.sl.commit, a.sl.state == slotPassed
		return s.spawn(ctx, s.worker(a.n), func(ctx context.Context, j *job) error { return s.landSlot(ctx, j, sl, commit, passed) })
	case actJudge:
		sl := a.sl
		verdict, conflicts := sl.verdict, sl.conflicts
		return s.spawn(ctx, s.worker(a.n), func(ctx context.Context, j *job) error { return s.judgeSlot(ctx, j, verdict, conflicts) })
	}
	sl := a.sl
	if a.kind == actEnter {
		sl = &slot{n: a.n}
		s.train.slots = append(s.train.slots, sl)
	}
	sl.state, sl.base, sl.ahead, sl.commit = slotAdmitting, a.base, a.ahead, ""
	sctx, cancel := context.WithCancel(ctx)
	sl.cancel = cancel
	on := verifyOn{base: a.base, ahead: a.ahead}
	admitted := sl.admitted
	return s.spawn(sctx, s.worker(a.n), func(jctx context.Context, j *job) error {
		defer cancel()
		return s.runSlot(jctx, ctx, j, sl, on, admitted)
	})
}

// cancelTrain ends every verify of the pipeline and empties it (a
// foreign commit stops the merges).
func (s *Supervisor) cancelTrain() {
	for _, sl := range s.train.slots {
		if sl.cancel != nil {
			sl.cancel()
		}
	}
	s.train.slots = nil
}

// noteInterrupted records, once per supervisor, the verifies the log
// says were running when the previous supervisor stopped: they are
// verified again.
func (s *Supervisor) noteInterrupted() error {
	if s.train.noted {
		return nil
	}
	for _, n := range s.run().Queue {
		is := s.run().Issues[n]
		if is == nil || (is.Verify != backlog.VerifyRunning && is.Verify != backlog.VerifyReviewing) {
			continue
		}
		s.printf("#%d: its verify at %s%s was cut short when the supervisor stopped; verifying it again",
			n, short(is.VerifyCommit), onTopOf(is.VerifyAhead))
		if err := s.emit(backlog.Event{Kind: backlog.EvVerify, Issue: n, Outcome: backlog.VerifyInterrupted, Commit: is.VerifyCommit,
			Detail: "the supervisor stopped while it ran"}); err != nil {
			return err
		}
	}
	s.train.noted = true
	return nil
}

// onTopOf says which candidates a verify is built on: " on top of #3
// #5", "" on the wave tip.
func onTopOf(ahead []int) string {
	if len(ahead) == 0 {
		return ""
	}
	refs := make([]string, len(ahead))
	for i, n := range ahead {
		refs[i] = "#" + strconv.Itoa(n)
	}
	return " on top of " + strings.Join(refs, " ")
}

// heldLine says why a failed or conflicting candidate waits.
func heldLine(n int, what string, ahead []int) string {
	return fmt.Sprintf("#%d: %s%s; its verdict waits until those land (without them, if one fails, it is verified again)",
		n, what, onTopOf(ahead))
}
