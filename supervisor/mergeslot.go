package supervisor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
)

// The jobs of the merge pipeline (mergetrain.go): a slot's gates,
// prepare and verify; the first slot's landing; its verdict.

// runSlot is slot sl's job j: the gates (once), its merge prepared on
// on.base, and its verify there. ctx ends when the slot goes stale (its
// verify is cancelled, no verdict); loop is the loop's context, done
// when the supervisor stops.
func (s *Supervisor) runSlot(ctx, loop context.Context, j *job, sl *slot, on verifyOn, admitted bool) error {
	is, n := j.w.is, j.w.n
	if !admitted {
		if ok, err := s.admit(ctx, j); err != nil || !ok {
			j.onLoop(func() { sl.out, s.train.poke = true, true })
			return err
		}
	}
	c, err := s.o.Git.PrepareMerge(ctx, s.run().Info.WaveBranch, on.base, "refs/heads/"+is.Branch,
		mergeMessage(n, is.Branch, s.run().Info.ID))
	var verify bool
	var rerr error
	j.onLoop(func() { verify, rerr = s.prepared(sl, on, c, err) })
	if err != nil {
		return fmt.Errorf("merge #%d: %w", n, err)
	}
	if rerr != nil {
		return rerr
	}
	if !verify {
		return nil
	}
	s.printf("#%d: verifying its merge %s%s", n, short(c.Commit), onTopOf(on.ahead))
	err = s.o.Git.VerifyAt(ctx, c.Commit, s.verifier(j, on))
	var stuck *parking
	j.onLoop(func() { stuck, rerr = s.verified(sl, c, on, err, ctx.Err() != nil, loop.Err() != nil) })
	if rerr != nil || stuck == nil {
		return rerr
	}
	// ctx ended with the slot made stale: the park is the loop's.
	return s.park(loop, j, stuck.detail, stuck.question, nil)
}

// prepared takes up sl's prepared merge (c, or the failure err), on the
// loop: true when its verify is to run. A slot whose base changed while
// it was prepared is prepared again.
func (s *Supervisor) prepared(sl *slot, on verifyOn, c gitops.Candidate, err error) (bool, error) {
	s.train.poke = true
	sl.admitted = true
	if sl.state != slotAdmitting {
		return false, nil // made stale meanwhile
	}
	if ch := s.chainTo(sl); err != nil || !ch.known || ch.base != on.base {
		s.restale(sl)
		return false, nil
	}
	switch {
	case c.Already:
		sl.state = slotAlready
	case len(c.Conflicts) > 0:
		sl.state, sl.conflicts = slotConflict, c.Conflicts
		if s.behind(sl) {
			s.printf("%s", heldLine(sl.n, "its merge conflicts in "+strings.Join(c.Conflicts, ", "), on.ahead))
			return false, s.emit(backlog.Event{Kind: backlog.EvVerify, Issue: sl.n, Outcome: backlog.VerifyConflict, Ref: on.base,
				Ahead: on.ahead, Files: c.Conflicts})
		}
	case c.Verified:
		sl.state, sl.commit = slotPassed, c.Commit
		s.printf("#%d: its merge %s was verified before the supervisor stopped; landing it", sl.n, short(c.Commit))
	default:
		sl.state, sl.commit = slotVerifying, c.Commit
		return true, nil
	}
	return false, nil
}

// behind: a candidate ahead of sl has not landed yet.
func (s *Supervisor) behind(sl *slot) bool {
	for _, o := range s.train.slots {
		if o == sl {
			return false
		}
		if !o.out && o.state != slotLanded {
			return true
		}
	}
	return false
}

// verified takes up the verify of c's merge commit (err its failure),
// on the loop. A verify cancelled because its base changed is recorded
// as such; one cut short by the supervisor stopping is not (the next
// one records it as interrupted). One that ended with no verdict is
// noVerdict's: parking, when not nil, is the park of sl's issue its job
// is to make.
func (s *Supervisor) verified(sl *slot, c gitops.Candidate, on verifyOn, err error, cancelled, stopping bool) (*parking, error) {
	s.train.poke = true
	n, commit := sl.n, c.Commit
	current := sl.state == slotVerifying && sl.commit == commit
	switch {
	case stopping:
		if current {
			s.restale(sl)
		}
		return nil, nil
	case !current || cancelled:
		if current {
			s.restale(sl)
		}
		s.printf("#%d: verify at %s cancelled: what it was built on changed; verifying it again", n, short(commit))
		return nil, s.emit(backlog.Event{Kind: backlog.EvVerify, Issue: n, Outcome: backlog.VerifyCancelled, Commit: commit,
			Detail: "a candidate ahead of it failed, conflicted or left the merge train"})
	case err == nil:
		sl.state = slotPassed
		return nil, nil
	case errors.Is(err, gitops.ErrVerifyFailed):
		sl.state, sl.verdict = slotFailed, err
		if s.behind(sl) {
			s.printf("%s", heldLine(n, "verify failed", on.ahead))
		}
		return nil, s.emit(backlog.Event{Kind: backlog.EvVerify, Issue: n, Outcome: backlog.VerifyFailed, Commit: commit,
			Detail: err.Error()})
	}
	s.restale(sl)
	return s.noVerdict(sl, c, on, err)
}

// landSlot lands the first slot: its verified merge commit pushed as it
// is, under the lease on the wave tip the run recorded (passed), or the
// worker found in the wave branch already.
func (s *Supervisor) landSlot(ctx context.Context, j *job, sl *slot, commit string, passed bool) error {
	is, n := j.w.is, j.w.n
	var tip string
	j.onLoop(func() { tip = s.run().WaveTip })
	req := gitops.MergeRequest{Wave: s.run().Info.WaveBranch, Worker: "refs/heads/" + is.Branch,
		Message: mergeMessage(n, is.Branch, s.run().Info.ID), Expect: tip}
	if passed {
		req.Prepared = commit
	} else {
		// In the wave branch already: nothing is merged. Should the
		// worker not be in it after all, its merge is verified first.
		req.Verify = s.verifier(j, verifyOn{})
	}
	res, err := s.o.Git.Merge(ctx, req)
	switch {
	case errors.Is(err, gitops.ErrStalePrepared):
		j.onLoop(func() { s.restale(sl) })
		return nil
	case errors.Is(err, gitops.ErrVerifyFailed) && ctx.Err() == nil:
		if err := j.record(backlog.Event{Kind: backlog.EvVerify, Issue: n, Outcome: backlog.VerifyFailed, Detail: err.Error()}); err != nil {
			return err
		}
		return s.verifyVerdict(ctx, j, err)
	}
	return s.landed(ctx, j, res, err, func() { sl.state = slotLanded })
}

// judgeSlot acts on the first slot's verdict, now that nothing is ahead
// of it: a failed verify goes to rework (or parks), a conflict goes
// back to its worker.
func (s *Supervisor) judgeSlot(ctx context.Context, j *job, verdict error, conflicts []string) error {
	if len(conflicts) > 0 {
		return s.conflict(ctx, j, conflicts)
	}
	return s.verifyVerdict(ctx, j, verdict)
}
