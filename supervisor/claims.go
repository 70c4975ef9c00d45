package supervisor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/internal/mdfence"
)

// dispatch claims a planned issue and starts its worker. An issue that
// turned ineligible since planning (closed, needs input, claimed
// elsewhere) leaves the run with the reason. It runs as the issue's job
// (jobs.go).
func (s *Supervisor) dispatch(ctx context.Context, j *job) error {
	is, n := j.w.is, j.w.n
	if is.State == backlog.StatePlanned {
		ok, err := s.claim(ctx, j)
		if err != nil || !ok {
			return err
		}
	} else if is.Attempts == 0 {
		// Claimed by a supervisor that died before its claim command ran.
		if ok, err := s.claimHook(ctx, j); err != nil || !ok {
			return err
		}
	}
	if err := s.unlabelAnswered(ctx, j); err != nil {
		return err
	}
	// Re-read right before dispatch: orientation data is stale by
	// definition: a person may have closed, relabelled or reworded it
	// since the plan was made.
	fresh, err := s.o.Source.Get(ctx, n)
	if err != nil {
		return fmt.Errorf("issue #%d: %w", n, err)
	}
	j.onLoop(func() { s.issues[n] = fresh })
	if why := s.ineligible(fresh); why != "" && is.Attempts > 0 {
		// Work was done for it (a stopped or sent-back worker): keep it
		// in the run, parked with its worktree, rather than forget it.
		return s.park(ctx, j, "became "+why+" while its work was in progress",
			fmt.Sprintf("#%d became %s; its work is kept in %s. Continue it?", n, why, is.Worktree), nil)
	} else if why != "" {
		s.printf("#%d is no longer eligible (%s); releasing it", n, why)
		if err := s.release(ctx, j, why); err != nil {
			return err
		}
		return j.record(backlog.Event{Kind: backlog.EvDropped, Issue: n, Outcome: why})
	}
	if err := s.claimCopies(ctx, j); err != nil {
		return err
	}
	// A worker stopped by `backlog stop` continues where it was; one whose
	// merge conflicted is sent back to merge the wave branch.
	why := workerStart{salvage: is.Outcome == backlog.OutcomeStopped || is.Outcome == backlog.OutcomeUsageLimited}
	if is.Outcome == backlog.OutcomeUsageLimited {
		why.stopped = "its executor's usage limit (" + oneLine(is.Detail) + "); the limit has passed or another executor took over"
	}
	if is.Outcome == backlog.OutcomeConflict {
		why.conflict = is.Files
	}
	return s.launch(ctx, j, why)
}

func (s *Supervisor) ineligible(is backlog.Issue) string {
	switch {
	case is.State != "" && is.State != "open":
		return backlog.ReasonClosed
	case slices.Contains(is.Labels, s.o.Config.Backlog.NeedsInputLabel):
		return backlog.ReasonNeedsInput
	}
	return ""
}

// claim wins j's issue for this run with the compare-and-swap ref on
// origin (and the repository's own claim hooks). A claim held by another
// live run means the issue leaves this run; an expired lease of a dead
// holder is taken over.
func (s *Supervisor) claim(ctx context.Context, j *job) (bool, error) {
	n := j.w.n
	if ok, why := s.hook(ctx, s.o.Config.Backlog.Claim.Check, n); !ok {
		s.printf("#%d not eligible by the claim check: %s", n, why)
		return false, j.record(backlog.Event{Kind: backlog.EvDropped, Issue: n, Outcome: "claim-check", Detail: why})
	}
	info := s.claimInfo(n)
	won, holder, err := s.o.Git.Claim(ctx, info)
	if err != nil {
		return false, fmt.Errorf("claim #%d: %w", n, err)
	}
	if won || holder.RunID == info.RunID {
		won, info = true, holder // ours (won now, or before a restart), with its commit
	}
	if !won && s.stale(holder) {
		s.printf("#%d: taking over the expired claim of run %s on %s", n, oneLine(holder.RunID), oneLine(holder.Host))
		if won, holder, err = s.o.Git.TakeOver(ctx, holder.SHA, info); err != nil {
			return false, fmt.Errorf("take over claim #%d: %w", n, err)
		}
		if won {
			info = holder
		}
	}
	if !won {
		detail := fmt.Sprintf("run %s on %s", oneLine(holder.RunID), oneLine(holder.Host))
		s.printf("#%d is claimed by %s; skipping it", n, detail)
		return false, j.record(backlog.Event{Kind: backlog.EvDropped, Issue: n, Outcome: backlog.ReasonClaimed, Detail: detail})
	}
	if won && info.SHA == "" {
		if c, ok, err := s.o.Git.ReadClaim(ctx, n); err == nil && ok {
			info = c
		}
	}
	if err := j.record(backlog.Event{Kind: backlog.EvClaimed, Issue: n, Ref: info.SHA}); err != nil {
		return false, err
	}
	j.onLoop(func() { j.w.renewedAt = s.o.Now() })
	return s.claimHook(ctx, j)
}

// claimHook runs backlog.claim.command once per issue and run: it is
// recorded done, so a supervisor killed between the claim ref and the
// hook runs the hook on resume instead of skipping it.
func (s *Supervisor) claimHook(ctx context.Context, j *job) (bool, error) {
	n := j.w.n
	id := "claim-command-" + strconv.Itoa(n)
	if len(s.o.Config.Backlog.Claim.Command) == 0 || s.done(j, id) {
		return true, nil
	}
	if ok, why := s.hook(ctx, s.o.Config.Backlog.Claim.Command, n); !ok {
		s.printf("#%d: the claim command failed (%s); releasing", n, why)
		if err := s.release(ctx, j, "claim command failed"); err != nil {
			return false, err
		}
		return false, j.record(backlog.Event{Kind: backlog.EvDropped, Issue: n, Outcome: "claim-command", Detail: why})
	}
	return true, j.record(backlog.Event{Kind: backlog.EvIntentDone, Issue: n, Intent: &backlog.Intent{ID: id}})
}

// claimInfo is the claim this run writes for issue n. Its lease is read
// by other supervisors on their own clocks, so it comes from the real
// clock, never from Options.Now (a test's clock must not leave the
// process); stale judges other runs' leases on Options.Now.
func (s *Supervisor) claimInfo(n int) gitops.ClaimInfo {
	lease := time.Duration(s.o.Config.Backlog.Claim.LeaseMinutes) * time.Minute
	return gitops.ClaimInfo{Issue: n, RunID: s.run().Info.ID, Host: s.o.Host, PID: s.o.Pid, Lease: time.Now().UTC().Add(lease)}
}

// stale: the lease expired and, when the holder is on this host, its
// process is gone. A holder on another host is trusted until its lease.
func (s *Supervisor) stale(c gitops.ClaimInfo) bool {
	if c.Lease.IsZero() || s.o.Now().Before(c.Lease) {
		return false
	}
	if c.Host == s.o.Host && c.PID > 0 && processAlive(c.PID) {
		return false
	}
	return true
}

// claimCopies writes the human-visible copy of the claim: the label and a
// marker comment.
func (s *Supervisor) claimCopies(ctx context.Context, j *job) error {
	n, label := j.w.n, s.o.Config.Backlog.ClaimLabel
	if _, err := s.writeOnce(ctx, j, backlog.Intent{ID: "label-claim-" + strconv.Itoa(n), Op: backlog.OpLabel, Issue: n, Label: label}); err != nil {
		return err
	}
	return s.comment(ctx, j, "claim", fmt.Sprintf("Claimed by wave-orchestrator run %s (wave branch %s). A worker is on it.",
		mdfence.Inline(s.run().Info.ID, 0), mdfence.Inline(s.run().Info.WaveBranch, 0)))
}

// release gives j's issue back: claim ref deleted under its lease, label
// removed, a comment saying why. Never called while work for it could
// still land.
func (s *Supervisor) release(ctx context.Context, j *job, why string) error {
	n := j.w.n
	var is *backlog.IssueRun
	j.onLoop(func() { is = s.run().Issues[n] })
	if is == nil || is.Released {
		return nil
	}
	if is.ClaimRef != "" {
		if _, err := s.writeOnce(ctx, j, backlog.Intent{ID: "release-" + strconv.Itoa(n), Op: backlog.OpRelease, Issue: n, SHA: is.ClaimRef}); err != nil {
			return err
		}
		if _, err := s.writeOnce(ctx, j, backlog.Intent{ID: "unlabel-claim-" + strconv.Itoa(n), Op: backlog.OpUnlabel, Issue: n,
			Label: s.o.Config.Backlog.ClaimLabel}); err != nil {
			return err
		}
		if s.done(j, "comment-claim-"+strconv.Itoa(n)) {
			if err := s.comment(ctx, j, "released", "Released by wave-orchestrator run "+mdfence.Inline(s.run().Info.ID, 0)+": "+mdfence.Inline(why, 300)+"."); err != nil {
				return err
			}
		}
	}
	return j.record(backlog.Event{Kind: backlog.EvReleased, Issue: n, Detail: why})
}

// hook runs a claim hook argv with {issue} replaced; no hook is a pass.
func (s *Supervisor) hook(ctx context.Context, argv []string, n int) (bool, string) {
	if len(argv) == 0 {
		return true, ""
	}
	a := make([]string, len(argv))
	for i, w := range argv {
		a[i] = replaceIssue(w, n)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := command(ctx, a, s.o.Lane.RepoRoot)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return false, fmt.Sprintf("%s: %v: %s", a[0], err, oneLine(tail(string(out), 300)))
	}
	return true, ""
}

// claimCheckEvery is how often the claims this run holds are looked at
// on origin, all in one ls-remote: a claim ref deleted meanwhile (by a
// person or a tool) is created again at the first look, and one that
// another run holds now stops this run's work on the issue. Every merge
// also looks at its issue's claim first, so nothing is merged on a claim
// that is not ours.
const claimCheckEvery = 30 * time.Second

// heldClaims are the issues whose claim this run holds and must keep:
// claimed and not released, with work in flight or merged (a merged issue
// stays claimed until the final PR closes it, so no other run takes it).
func (s *Supervisor) heldClaims() []*backlog.IssueRun {
	var out []*backlog.IssueRun
	for _, is := range s.run().List() {
		// A question's claim is held too: the open run takes its answer.
		kept := is.State == backlog.StateMerged || is.State == backlog.StateNeedsInput
		if is.Released || is.State == backlog.StatePlanned || (backlog.Terminal(is.State) && !kept) {
			continue
		}
		out = append(out, is)
	}
	return out
}

// renewClaims looks at every held claim on origin every claimCheckEvery:
// each is re-created if gone, given up if another run holds it, and its
// lease renewed at a third of the lease.
func (s *Supervisor) renewClaims(ctx context.Context) error {
	if s.o.Now().Sub(s.claimsAt) < claimCheckEvery {
		return nil
	}
	// An issue with a job is its job's alone; its claim is minutes old.
	held := slices.DeleteFunc(s.heldClaims(), func(is *backlog.IssueRun) bool { return s.busyJob(is.Number) })
	if len(held) == 0 {
		return nil
	}
	// Set before the look: an origin that cannot be reached is asked
	// again at the next interval, not on every sweep.
	s.claimsAt = s.o.Now()
	heads, err := s.o.Git.ClaimHeads(ctx)
	if err != nil {
		s.printf("warning: look at the claims on origin: %v", err)
		return nil
	}
	for _, is := range held {
		if err := s.checkClaim(ctx, s.inline(s.worker(is.Number)), heads[is.Number]); err != nil {
			return err
		}
	}
	return nil
}

// claimStillHeld looks at j's issue's claim right before its merge:
// false when another run holds it now (the issue left this run).
func (s *Supervisor) claimStillHeld(ctx context.Context, j *job) (bool, error) {
	is := j.w.is
	heads, err := s.o.Git.ClaimHeads(ctx)
	if err != nil {
		// Origin unreachable: the merge's own push says so.
		s.printf("warning: look at the claim of #%d on origin: %v", is.Number, err)
		return true, nil
	}
	if err := s.checkClaim(ctx, j, heads[is.Number]); err != nil {
		return false, err
	}
	return !is.Released, nil
}

// checkClaim compares j's issue's claim ref on origin (head, "" when
// gone) with the commit this run recorded, and acts on what it finds.
func (s *Supervisor) checkClaim(ctx context.Context, j *job, head string) error {
	is, n := j.w.is, j.w.n
	lease := time.Duration(s.o.Config.Backlog.Claim.LeaseMinutes) * time.Minute
	switch {
	case head == "":
		s.printf("#%d: its claim ref is gone from origin (deleted by a person or a tool); this run holds the issue and claims it again", n)
	case head != is.ClaimRef:
		// Another commit: ours from a renewal whose record was lost,
		// or another run's. holdClaim tells which.
	default:
		var at time.Time
		j.onLoop(func() { at = j.w.renewedAt })
		if s.o.Now().Sub(at) < lease/3 {
			return nil
		}
	}
	return s.holdClaim(ctx, j, s.claimInfo(n))
}

// holdClaim makes j's issue's claim on origin c (a fresh lease): renewed
// from the commit recorded, or created again if the ref is gone. A claim
// another run holds is never replaced: the issue is lost to it.
func (s *Supervisor) holdClaim(ctx context.Context, j *job, c gitops.ClaimInfo) error {
	got, err := s.renew(ctx, j.w, c)
	return s.held(ctx, j, got, err)
}

// renew is holdClaim's push: it touches no state, so the end renews the
// claims of every merged issue at once.
func (s *Supervisor) renew(ctx context.Context, w *worker, c gitops.ClaimInfo) (gitops.Renewal, error) {
	got, err := s.o.Git.Renew(ctx, w.is.ClaimRef, c)
	if err == nil && !got.Won && got.Holder.RunID == s.run().Info.ID && got.Holder.SHA != "" {
		// Ours, from a life of this run whose record of it was lost:
		// renew from that commit.
		got, err = s.o.Git.Renew(ctx, got.Holder.SHA, c)
	}
	return got, err
}

// held records what renew found.
func (s *Supervisor) held(ctx context.Context, j *job, got gitops.Renewal, err error) error {
	is, n := j.w.is, j.w.n
	if errors.Is(err, gitops.ErrBadClaim) {
		// Something that is no claim of ours sits on the ref.
		return s.claimLost(ctx, j, gitops.ClaimInfo{})
	}
	if err != nil {
		s.printf("warning: renew the claim of #%d: %v", n, err)
		return nil
	}
	if !got.Won {
		return s.claimLost(ctx, j, got.Holder)
	}
	j.onLoop(func() { j.w.renewedAt = s.o.Now() })
	if got.Recreated {
		s.printf("#%d: claim created again on origin (%s)", n, short(got.Holder.SHA))
	}
	if got.Holder.SHA != "" && got.Holder.SHA != is.ClaimRef {
		return j.record(backlog.Event{Kind: backlog.EvClaimRenewed, Issue: n, Ref: got.Holder.SHA})
	}
	return nil
}

// claimLost: another run holds j's issue's claim now. Work in flight
// stops and is never merged by this run; a merge already made cannot be
// undone, so for a merged issue it is said (once) and the run goes on.
func (s *Supervisor) claimLost(ctx context.Context, j *job, holder gitops.ClaimInfo) error {
	is, n := j.w.is, j.w.n
	detail := fmt.Sprintf("run %s on %s", oneLine(holder.RunID), oneLine(holder.Host))
	if holder.RunID == "" {
		detail = "someone else (a claim ref not made by wave-orchestrator)"
	}
	if is.State == backlog.StateMerged || is.State == backlog.StateMerging {
		warned := true
		j.onLoop(func() { warned, j.w.claimWarned = j.w.claimWarned, true })
		if !warned {
			s.printf("warning: #%d is merged into %s, but its claim on origin is held by %s now; that run may work on it again",
				n, s.run().Info.WaveBranch, detail)
		}
		return nil
	}
	s.printf("#%d: its claim on origin is held by %s now, not by this run: this run stops its worker and will not merge it", n, detail)
	if is.State == backlog.StateRunning && is.RunDir != "" {
		_ = s.o.Runs.Terminate(ctx, is.RunDir, time.Duration(s.o.Lane.Runtime.TerminateGraceMs)*time.Millisecond, false)
	}
	return j.record(backlog.Event{Kind: backlog.EvClaimLost, Issue: n, Detail: detail})
}
