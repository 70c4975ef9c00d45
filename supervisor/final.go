package supervisor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/spend"
)

// finish ends a run whose work is all final, waiting out a transient
// failure of its writes (origin unreachable, GitHub down) as the loop
// does: every step of the end is safe to run again. One that outlasts
// the window leaves the run open; the next `backlog run` resumes its end.
func (s *Supervisor) finish(ctx context.Context) (int, error) {
	code := exitcode.Failed
	err := s.retry(ctx, func(ctx context.Context) error {
		var err error
		code, err = s.end(ctx)
		return err
	})
	var gave *GaveUpError
	if errors.As(err, &gave) {
		return exitcode.Failed, fmt.Errorf("backlog run %s: its end (final pull request body in %s): %w; the run stays open: `backlog run` resumes its end",
			s.run().Info.ID, filepath.Join(s.log.dir, runlog.FinalPRFile), err)
	}
	if err != nil {
		return exitcode.Failed, err
	}
	return code, nil
}

// end is one try at the end: merge a moved base once, open the one PR
// wave → base, release what never landed, keep the claims of what did,
// remove only worktrees and branches already on the wave branch.
func (s *Supervisor) end(ctx context.Context) (int, error) {
	r := s.run()
	if r.Finished {
		return exitOf(r), nil
	}
	if !r.Finishing {
		// Recorded: a supervisor killed from here on resumes into the
		// end, never taking new work.
		if err := s.emit(backlog.Event{Kind: backlog.EvFinishing}); err != nil {
			return exitcode.Failed, err
		}
	}
	// A foreign commit pushed after the last merge is found here: the
	// final PR must say so.
	if err := s.checkWaveTip(ctx); err != nil {
		return exitcode.Failed, err
	}
	baseConflict, err := s.mergeBase(ctx)
	if err != nil {
		return exitcode.Failed, err
	}
	if baseConflict != "" {
		s.baseConflict = true
		s.printf("merging %s into %s conflicts in %s: the final PR needs a person to resolve it", r.Info.Base, r.Info.WaveBranch, baseConflict)
	}
	s.closeIssueFiles(ctx)
	prErr := s.finalPR(ctx, baseConflict)
	if prErr != nil && (ctx.Err() != nil || transientCause(prErr) != "") {
		// Being stopped: the next run does the end. Transient: waited
		// out, then the end is tried again.
		return exitcode.Failed, fmt.Errorf("final pull request %s → %s: %w", r.Info.WaveBranch, r.Info.Base, prErr)
	}
	renewals := s.renewMerged(ctx)
	for _, is := range r.List() {
		j := s.inline(s.worker(is.Number))
		switch {
		case is.State == backlog.StateMerged:
			rn := renewals[is.Number]
			if err := s.held(ctx, j, rn.got, rn.err); err != nil {
				s.printf("warning: renew the claim of #%d: %v", is.Number, err)
			}
		case !is.Released:
			if err := s.release(ctx, j, "its work did not reach the wave branch in this run"); err != nil {
				return exitcode.Failed, err
			}
		}
		if err := s.closeWorkerPR(ctx, j); err != nil {
			return exitcode.Failed, err
		}
	}
	s.cleanup(ctx)
	s.freeWaveName(ctx)
	if prErr == nil {
		if err := s.watchFinalChecks(ctx); err != nil {
			return exitcode.Failed, err
		}
	}
	if prErr != nil {
		// Everything else of the end is done; the run stays open (not
		// finished), so the next `backlog run` resumes into this end
		// and opens the pull request (EnsurePR finds one that did open).
		s.report()
		return exitcode.Failed, fmt.Errorf("backlog run %s: the final pull request %s → %s could not be opened (body in %s): %w; the run stays open: `backlog run` opens it",
			r.Info.ID, r.Info.WaveBranch, r.Info.Base, filepath.Join(s.log.dir, runlog.FinalPRFile), prErr)
	}
	if r.Tally().Merged == 0 {
		// Nothing landed: the wave branch is still (an ancestor of) base;
		// removing it keeps origin free of empty wave branches.
		if _, err := s.o.Git.SafeDelete(ctx, r.Info.WaveBranch, r.Info.Base); err != nil {
			s.printf("warning: remove the empty wave branch %s: %v", r.Info.WaveBranch, err)
		}
	}
	code := s.exitCode()
	if err := s.emit(backlog.Event{Kind: backlog.EvRunFinished, Outcome: "finished", ExitCode: &code}); err != nil {
		return code, err
	}
	s.report()
	return code, nil
}

func exitOf(r *backlog.Run) int {
	if r.ExitCode != nil {
		return *r.ExitCode
	}
	return exitcode.Failed
}

// exitCode: 43 when a person is needed (parked, needs-input, the final
// PR's required checks red or unfinished, a foreign commit on the wave
// branch), 1 when something failed, else 0.
func (s *Supervisor) exitCode() int {
	t := s.run().Tally()
	failed := false
	parked := false
	for _, is := range s.run().Issues {
		switch is.State {
		case backlog.StateFailed:
			failed = true
		case backlog.StateParked:
			parked = true
		}
	}
	switch {
	case parked || t.NeedsInput > 0 || s.baseConflict || s.spendCheck(0) != "" || s.finalChecksNeedHuman() || s.run().Foreign != nil:
		// A spent backlog.budget.run needs a person too: nothing more
		// starts until the cap is raised.
		return exitcode.NeedsHuman
	case failed || len(s.undelivered()) > 0:
		return exitcode.Failed
	}
	return exitcode.OK
}

// undelivered are the bounded run's selected issues that never entered it
// (missing, closed, claimed by another run): "0" promises all were merged.
func (s *Supervisor) undelivered() []backlog.Skip {
	r := s.run()
	if len(r.Info.Bounded) == 0 {
		return nil
	}
	var out []backlog.Skip
	if r.LastPlan != nil {
		for _, sk := range r.LastPlan.Skipped {
			if _, in := r.Issues[sk.Issue]; !in && sk.Reason != backlog.ReasonNeedsInput {
				out = append(out, sk)
			}
		}
	}
	for _, d := range r.Dropped {
		if d.Reason != backlog.ReasonNeedsInput {
			out = append(out, d)
		}
	}
	return out
}

// mergeBase merges origin/<base> into the wave branch once if base moved
// since the branch was cut; a conflict leaves the wave branch as it was
// and is said in the PR.
func (s *Supervisor) mergeBase(ctx context.Context) (string, error) {
	if s.run().Tally().Merged == 0 || s.run().BaseMerges > 0 || s.run().Foreign != nil {
		return "", nil
	}
	res, err := s.o.Git.MergeBase(ctx, s.run().Info.WaveBranch, s.run().Info.Base, s.run().WaveTip, s.verifierWith(s.inline(nil), 0, false, verifyOn{}))
	if fe, ok := gitops.IsForeignCommit(err); ok {
		return "", s.foreignCommit(fe)
	}
	if errors.Is(err, gitops.ErrVerifyFailed) {
		s.printf("merging %s into %s failed verify: %v", s.run().Info.Base, s.run().Info.WaveBranch, err)
		return "(the merge of " + s.run().Info.Base + " failed verify; see " + s.verifyLog(0) + ")", nil
	}
	if err != nil {
		return "", fmt.Errorf("merge %s into the wave branch: %w", s.run().Info.Base, err)
	}
	if len(res.Conflicts) > 0 {
		return strings.Join(res.Conflicts, ", "), nil
	}
	if res.Already {
		return "", nil
	}
	s.printf("%s moved during the run; merged it into %s once (%s)", s.run().Info.Base, s.run().Info.WaveBranch, short(res.Commit))
	return "", s.emit(backlog.Event{Kind: backlog.EvBaseMerged, Commit: res.Commit, Tip: mergedTip(res)})
}

func (s *Supervisor) finalPR(ctx context.Context, baseConflict string) error {
	r := s.run()
	runs := spend.BacklogRuns(s.o.Lane.Name, s.log.dir)
	m := fmt.Sprintf("<!-- wave-orchestrator:final-pr run=%s -->", r.Info.ID)
	body := backlog.FinalPRBody(backlog.FinalPRInput{Run: r, DefaultBase: r.Info.Base == r.Info.Default || r.Info.Default == "",
		CloseCommand: "wave-orchestrator backlog close --run " + r.Info.ID, Marker: m, BaseConflict: baseConflict,
		Spend: spend.ByIssue(runs), Total: spend.Total(runs).Ptr(), Outcomes: s.outcomesLine(ctx)})
	title := backlog.FinalPRTitle(r)
	path := filepath.Join(s.log.dir, runlog.FinalPRFile)
	if err := jsonfile.WriteFile(path, []byte("# "+title+"\n\n"+body)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if r.Tally().Merged == 0 {
		s.printf("nothing merged: no pull request opened (body kept in %s)", path)
		return nil
	}
	pr, err := s.writeAgain(ctx, s.inline(nil), backlog.Intent{ID: "pr-final", Op: backlog.OpPR, Head: r.Info.WaveBranch, Base: r.Info.Base,
		Title: title, Body: body, Marker: m})
	if err != nil {
		return err
	}
	if r.FinalPR == nil || r.FinalPR.URL != pr.URL {
		if err := s.emit(backlog.Event{Kind: backlog.EvPR, URL: pr.URL, Number: pr.Number}); err != nil {
			return err
		}
	}
	s.printf("final pull request %s → %s: %s", r.Info.WaveBranch, r.Info.Base, firstNonEmpty(pr.URL, path))
	return nil
}

// closeWorkerPR closes the worker PR of an issue whose work did not land
// once its claim is released, with a comment saying why: left open, it
// would look like work in progress that nobody is doing.
func (s *Supervisor) closeWorkerPR(ctx context.Context, j *job) error {
	is := j.w.is
	if is.State == backlog.StateMerged || !is.Released || is.PR == nil || is.PR.Number == 0 {
		return nil
	}
	n := is.Number
	m := s.marker("worker-pr-closed", n)
	// Our own words only: the detail may quote the worker.
	body := fmt.Sprintf("Closed by wave-orchestrator run `%s`: #%d ended %s in this run and its claim was released. "+
		"The branch `%s` is kept; `backlog status --run %s` says why.\n\n%s", s.run().Info.ID, n, is.State, is.Branch, s.run().Info.ID, m)
	_, err := s.writeOnce(ctx, j, backlog.Intent{ID: "close-pr-" + strconv.Itoa(n), Op: backlog.OpClosePR, Issue: n, PR: is.PR.Number,
		Marker: m, Body: body})
	return err
}

type renewal struct {
	got gitops.Renewal
	err error
}

// renewMerged keeps every merged issue's claim past the run, all in one
// atomic push (gitops.RenewClaims): the issue stays open until the final
// PR merges, and no other run may take it meanwhile. A deleted claim is
// created again; one another run took is left to it. What each found is
// recorded by the caller, in order; a renewal pushed before a kill is
// found on origin again, not pushed twice.
func (s *Supervisor) renewMerged(ctx context.Context) map[int]renewal {
	var reqs []gitops.RenewRequest
	for _, is := range s.run().List() {
		if is.State == backlog.StateMerged {
			c := s.claimInfo(is.Number)
			c.Lease = time.Now().UTC().Add(30 * 24 * time.Hour) // read elsewhere: the real clock
			reqs = append(reqs, gitops.RenewRequest{Old: is.ClaimRef, Claim: c})
		}
	}
	m := make(map[int]renewal, len(reqs))
	if len(reqs) == 0 {
		return m
	}
	got, err := s.o.Git.RenewClaims(ctx, reqs)
	for _, q := range reqs {
		n := q.Claim.Issue
		o, ok := got[n]
		switch {
		case ok:
			m[n] = renewal{got: o.Renewal, err: o.Err}
		case err != nil:
			m[n] = renewal{err: err}
		}
	}
	return m
}

// cleanup removes the worktrees and branches of merged issues, each only
// when its tip is an ancestor of the wave branch on origin, after the
// sessions of every worker and reviewer (all ended: their dead panes are
// of no more use, the logs are in the run dir) go in one batch.
// The worktrees go side by side, up to the width at once, and the
// branches in one batch (gitops.SafeDeleteAll: a fixed number of git
// commands for all). Every step looks before it acts, so a cleanup cut
// short by a kill is done again from where it was.
func (s *Supervisor) cleanup(ctx context.Context) {
	list := s.run().List()
	var sessions []*runtime.Payload
	var merged []*backlog.IssueRun
	for _, is := range list {
		if is.Session != "" {
			sessions = append(sessions, &runtime.Payload{RunDir: is.RunDir, SessionName: is.Session})
		}
		// A reviewer's session is named for its issue; one never started
		// is not there, and only live sessions are killed.
		sessions = append(sessions, &runtime.Payload{SessionName: "backlog-r" + strconv.Itoa(is.Number)})
		if is.State == backlog.StateMerged && is.Branch != "" {
			merged = append(merged, is)
		}
	}
	if err := s.o.Runs.DiscardAll(ctx, sessions); err != nil {
		s.printf("warning: remove the ended workers' sessions: %v", err)
	}
	errs := s.co.RemoveAll(ctx, merged, s.o.Width)
	var branches []string
	for _, is := range merged {
		if err := errs[is.Number]; err != nil {
			s.printf("warning: remove worktree of #%d: %v", is.Number, err)
			continue
		}
		branches = append(branches, is.Branch)
	}
	if _, err := s.o.Git.SafeDeleteAll(ctx, branches, s.run().Info.WaveBranch); err != nil {
		s.printf("warning: delete the merged issues' branches: %v", err)
	}
}

// report prints the hand-off: the tally, what merged, and every question
// a person must answer, batched in one block.
func (s *Supervisor) report() {
	s.checkpoint("end")
	if line := s.finalChecksLine(); line != "" {
		s.printf("%s", line)
	}
	var qs []string
	for _, is := range s.run().List() {
		switch is.State {
		case backlog.StateParked, backlog.StateNeedsInput:
			q := firstNonEmpty(is.Question, is.Detail)
			where := ""
			switch {
			case is.Worktree != "":
				where = " (work kept in " + is.Worktree + ")"
			case s.pods() && is.Branch != "":
				where = " (work kept on origin: " + gitops.CandidateRef(is.Branch) + ", snapshots under refs/wave/salvage/" + strconv.Itoa(is.Number) + "/)"
			}
			qs = append(qs, "  #"+strconv.Itoa(is.Number)+" ["+is.State+"] "+oneLine(q)+where)
		}
	}
	for _, q := range s.run().Bucket() {
		qs = append(qs, "  #"+strconv.Itoa(q.Issue)+" [needs-input, not dispatched] "+oneLine(firstNonEmpty(q.Question, q.Title)))
	}
	if len(qs) > 0 {
		s.printf("questions for a person:\n%s", strings.Join(qs, "\n"))
	}
}
