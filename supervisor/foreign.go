package supervisor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
)

// What the supervisor believes of origin's wave branch
// (docs/security-model.md, "What the supervisor trusts"): it is where the
// run's log says the run last pushed it (Run.WaveTip). A commit anyone
// else put there — a worker pushing past the gate, a person, a tool — is
// a foreign commit: merging stops, nothing is built on it, every issue
// not merged yet is parked, and the run ends with the foreign commit said
// in status, a notification and the final PR. A merged record counts
// only with its merge commit on that branch (proveMerged).

// foreignCommit records the foreign commit fe found, once, and says so.
// The loop then halts the run (haltForeign). On the loop.
func (s *Supervisor) foreignCommit(fe *gitops.ForeignCommitError) error {
	if s.run().Foreign != nil {
		return nil
	}
	detail := foreignDetail(s.run().Info.WaveBranch, fe)
	s.printf("warning: %s", detail)
	return s.emit(backlog.Event{Kind: backlog.EvForeignCommit, Commit: fe.Found, Ref: fe.Expected, Detail: detail})
}

func foreignDetail(wave string, fe *gitops.ForeignCommitError) string {
	if fe.Found == "" {
		return fmt.Sprintf("the wave branch %s is gone from origin (this run last pushed %s): merges stopped", wave, short(fe.Expected))
	}
	return fmt.Sprintf("origin's wave branch %s is at %s, a commit this run did not make (it last pushed %s): merges stopped; "+
		"nothing is built on it, and it is not in any issue's work", wave, short(fe.Found), short(fe.Expected))
}

// checkWaveTip looks at origin's wave branch (a resumed run, before it
// takes its work up again): a foreign commit there is recorded.
func (s *Supervisor) checkWaveTip(ctx context.Context) error {
	r := s.run()
	if r.WaveTip == "" || r.Foreign != nil {
		return nil
	}
	_, err := s.o.Git.CheckTip(ctx, r.Info.WaveBranch, r.WaveTip)
	if fe, ok := gitops.IsForeignCommit(err); ok {
		return s.foreignCommit(fe)
	}
	return err
}

// haltForeign ends the work of a run that found a foreign commit: its
// running workers are stopped, every issue not merged is parked (its
// checkout and branch kept) and every one not started dropped, so the
// loop ends and the run goes to its end, which merges nothing more.
func (s *Supervisor) haltForeign(ctx context.Context) error {
	s.halted, s.capped = true, true
	s.cancelTrain() // nothing more is verified for a merge that cannot land
	s.settle()      // no start or merge under way behind the halt
	grace := time.Duration(s.o.Lane.Runtime.TerminateGraceMs) * time.Millisecond
	f := s.run().Foreign
	if err := s.dropUntaken("foreign-commit", "a foreign commit on the wave branch stopped the run before it was taken"); err != nil {
		return err
	}
	for _, is := range s.run().List() {
		n := is.Number
		switch {
		case backlog.Terminal(is.State):
		case is.State == backlog.StatePlanned:
			if err := s.emit(backlog.Event{Kind: backlog.EvDropped, Issue: n, Outcome: "foreign-commit",
				Detail: "a foreign commit on the wave branch stopped the run before it started"}); err != nil {
				return err
			}
		default:
			if is.State == backlog.StateRunning && is.RunDir != "" {
				if err := s.o.Runs.Terminate(ctx, is.RunDir, grace, false); err != nil {
					s.printf("warning: stop #%d: %v", n, err)
				}
			}
			q := fmt.Sprintf("A commit this run did not make (%s) is on the wave branch %s, so #%d was not merged. "+
				"Look at that commit; run #%d again once the wave branch is sound?", short(f.Found), s.run().Info.WaveBranch, n, n)
			if err := s.park(ctx, s.inline(s.worker(n)), "not merged: "+f.Detail, q, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// proveMerged parks every issue the run's log says merged whose merge
// commit is not on the first-parent line of origin's wave branch with
// the subject this run gives it: a record the run did not write (a line
// someone appended to its log) or whose merge did not survive never
// closes an issue. It reads origin's wave branch as it is now.
func (s *Supervisor) proveMerged(ctx context.Context) error {
	r := s.run()
	var merged []*backlog.IssueRun
	for _, is := range r.List() {
		if is.State == backlog.StateMerged {
			merged = append(merged, is)
		}
	}
	if len(merged) == 0 {
		return nil
	}
	tip, there, err := s.o.Git.RemoteHead(ctx, r.Info.WaveBranch)
	if err != nil {
		return err
	}
	proven := map[string]string{} // merge commit → subject
	if there {
		if err := s.o.Git.FetchBranch(ctx, r.Info.WaveBranch); err != nil {
			return err
		}
		stop := ""
		if r.Wave != nil {
			stop = r.Wave.CutAt
		}
		line, err := s.o.Git.FirstParents(ctx, tip, stop)
		if err != nil {
			return err
		}
		for _, c := range line {
			if len(c.Parents) == 2 {
				proven[c.SHA] = c.Subject
			}
		}
	}
	for _, is := range merged {
		if sub, ok := proven[is.MergeCommit]; ok && strings.HasPrefix(sub, mergeSubject(is.Number)) {
			continue
		}
		detail := fmt.Sprintf("the run's log says #%d merged (commit %s), but origin's wave branch %s has no merge of it: "+
			"a record the run did not write, or a merge that was lost; not closed", is.Number, short(is.MergeCommit), r.Info.WaveBranch)
		s.printf("warning: %s", detail)
		if err := s.park(ctx, s.inline(s.worker(is.Number)), detail, fmt.Sprintf("Nothing of #%d is on the wave branch %s although the run's log said it merged. Run it again?",
			is.Number, r.Info.WaveBranch), nil); err != nil {
			return err
		}
	}
	return nil
}

// dropUntaken drops the bounded plan's issues that never entered the
// run, each with why: a run that takes no more work says what it left.
func (s *Supervisor) dropUntaken(reason, detail string) error {
	r := s.run()
	if len(r.Info.Bounded) == 0 || r.LastPlan == nil {
		return nil
	}
	dropped := map[int]bool{}
	for _, d := range r.Dropped {
		dropped[d.Issue] = true
	}
	for _, g := range r.LastPlan.Groups {
		for _, n := range g.Issues {
			if _, in := r.Issues[n]; in || dropped[n] {
				continue
			}
			if err := s.emit(backlog.Event{Kind: backlog.EvDropped, Issue: n, Outcome: reason, Detail: detail}); err != nil {
				return err
			}
		}
	}
	return nil
}
