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
	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// mergeReady merges the queue in FIFO order of readiness (a stop
// --finish), through the pipeline when it runs one. An entry that
// conflicts or fails leaves the queue, so the next one is never starved
// behind it.
func (s *Supervisor) mergeReady(ctx context.Context) error {
	if s.speculative() {
		return s.drainTrain(ctx)
	}
	for {
		n, ok := s.trainNext()
		if !ok || s.stopRequested() || s.run().Foreign != nil {
			return nil
		}
		if err := s.mergeOne(ctx, s.inline(s.worker(n))); err != nil {
			return err
		}
	}
}

// drainTrain runs the pipeline until nothing in the queue can move on:
// every candidate landed, was sent back, or waits for its checks.
func (s *Supervisor) drainTrain(ctx context.Context) error {
	for {
		if err := s.takeJobErr(); err != nil {
			s.cancelTrain()
			s.settle()
			return err
		}
		if s.stopRequested() {
			s.settle()
			return nil // asked again: what did not land stays for the next run
		}
		if err := s.trainStep(ctx); err != nil {
			return err
		}
		if len(s.jobs.active) == 0 && !s.trainWants() {
			return nil
		}
		if len(s.jobs.active) == 0 {
			continue
		}
		select {
		case f := <-s.jobs.calls:
			s.serve(f, nil)
		case end := <-s.jobs.ended:
			s.serve(nil, &end)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// mergeNext merges the head of the queue, one entry per sweep: the loop
// takes up exits and its jobs between two merges. The train itself stays
// one merge at a time, in order.
func (s *Supervisor) mergeNext(ctx context.Context) error {
	if !s.mergeable() || s.stopRequested() {
		return nil
	}
	n, _ := s.trainNext()
	s.jobs.merge = n
	err := s.spawn(ctx, s.worker(n), s.mergeOne)
	if !s.busyJob(n) {
		s.jobs.merge = 0 // it ran inline (spawn says when)
	}
	return err
}

// mergeable: the queue has an entry to merge (trainNext: its checks are
// not being waited for) and no merge is under way (the train is one merge
// at a time).
func (s *Supervisor) mergeable() bool {
	_, ok := s.trainNext()
	return ok && s.jobs.merge == 0 && s.run().Foreign == nil
}

// mergeOne merges j's issue, as its job when the loop's sweep asks for
// it: the gates, then the merge with its verify, in one go (the train
// without speculation: train.go).
func (s *Supervisor) mergeOne(ctx context.Context, j *job) error {
	if ok, err := s.admit(ctx, j); err != nil || !ok {
		return err
	}
	is, n := j.w.is, j.w.n
	res, err := s.o.Git.Merge(ctx, gitops.MergeRequest{
		Wave:    s.run().Info.WaveBranch,
		Worker:  "refs/heads/" + is.Branch,
		Message: mergeMessage(n, is.Branch, s.run().Info.ID),
		Verify:  s.verifier(j, verifyOn{}),
		Expect:  s.run().WaveTip,
	})
	if errors.Is(err, gitops.ErrVerifyFailed) && ctx.Err() == nil { // a stop is no verdict on the change
		if err := j.record(backlog.Event{Kind: backlog.EvVerify, Issue: n, Outcome: "failed", Detail: err.Error()}); err != nil {
			return err
		}
		return s.verifyVerdict(ctx, j, err)
	}
	return s.landed(ctx, j, res, err, nil)
}

// admit runs the gates a candidate passes before its merge is verified:
// its claim is still ours, its branch fetched, its surface, its worker
// PR, its CI checks, its PR's reviews. false: it left the train (sent
// back, parked, or waiting for its checks out of the train's way).
func (s *Supervisor) admit(ctx context.Context, j *job) (bool, error) {
	is, n := j.w.is, j.w.n
	if is.State != backlog.StateMerging {
		// Never merge on a claim that is not ours (any more).
		if held, err := s.claimStillHeld(ctx, j); err != nil || !held {
			return false, err
		}
		if err := j.record(backlog.Event{Kind: backlog.EvMergeStarted, Issue: n}); err != nil {
			return false, err
		}
	}
	// What follows reads the worker branch in the clone.
	if err := s.co.Fetch(ctx, is); err != nil {
		if ok, err := s.unreadableIn(ctx, j, err); ok {
			return false, err
		}
		return false, fmt.Errorf("merge #%d: fetch its branch: %w", n, err)
	}
	if parked, err := s.parkOutside(ctx, j); parked || err != nil {
		return false, err
	}
	if err := s.workerPR(ctx, j); err != nil {
		return false, err
	}
	if green, err := s.gateChecks(ctx, j); err != nil || !green {
		return false, err
	}
	if sent, err := s.prReviewRework(ctx, j); err != nil || sent {
		return false, err
	}
	return true, nil
}

// verifyVerdict acts on the failed verify (err) of j's issue, recorded
// already: a rework round the worker can act on, else a park.
func (s *Supervisor) verifyVerdict(ctx context.Context, j *job, err error) error {
	is, n := j.w.is, j.w.n
	if from, detail, feedback, ok := reworkOfMerge(err); ok {
		return s.rework(ctx, j, from, detail, feedback, nil)
	}
	return s.park(ctx, j, "verify failed: "+oneLine(err.Error()),
		fmt.Sprintf("The verify step failed on the merge of #%d; see %s. Fix it on %s and run again?", n,
			s.verifyLog(n), is.Branch), nil)
}

// landed records what a merge of j's issue did (res, err): merged,
// conflicting (sent back), or the foreign commit it found. onMerged, when
// set, runs on the loop with the merged record.
func (s *Supervisor) landed(ctx context.Context, j *job, res gitops.MergeResult, err error, onMerged func()) error {
	is, n := j.w.is, j.w.n
	if fe, ok := gitops.IsForeignCommit(err); ok {
		j.onLoop(func() { err = s.foreignCommit(fe) })
		return err
	}
	switch {
	case err != nil:
		return fmt.Errorf("merge #%d: %w", n, err)
	case len(res.Conflicts) > 0:
		return s.conflict(ctx, j, res.Conflicts)
	}
	outside := backlog.Outside(is.Surface, res.Files)
	ev := backlog.Event{Kind: backlog.EvMerged, Issue: n, Commit: res.Commit, Files: res.Files, Outside: outside, Tip: mergedTip(res)}
	j.onLoop(func() {
		if err = s.emit(ev); err == nil && onMerged != nil {
			onMerged()
		}
	})
	if err != nil {
		return err
	}
	s.printf("#%d merged into %s (%s)", n, s.run().Info.WaveBranch, short(res.Commit))
	j.onLoop(func() {
		s.surfaceWarn(j.w, outside)
		s.checkpoint("merged")
	})
	return nil
}

// mergeMessage is the merge commit's message. No issue text in it:
// GitHub closes the issues that closing keywords in a commit message name
// once it reaches the default branch, so a title saying "Fixes #8" would
// close #8. Its subject names the issue: a merged record is believed
// only when a commit with that subject is on origin's wave branch
// (proveMerged).
func mergeMessage(n int, branch, run string) string {
	return fmt.Sprintf("%s%s\n\nBacklog run %s.", mergeSubject(n), branch, run)
}

// mergeSubject begins the subject of issue n's merge commit.
func mergeSubject(n int) string { return fmt.Sprintf("Merge #%d: worker branch ", n) }

// mergedTip is the wave tip a merge left: the merge commit it pushed, or,
// when the worker was in already (pushed before a restart), the tip it
// found, which the merge engine checked is the run's own. Never the tip
// fetched after the push: a commit someone pushed on top meanwhile is not
// the run's.
func mergedTip(res gitops.MergeResult) string {
	if !res.Already && res.Commit != "" {
		return res.Commit
	}
	return res.WaveAfter
}

// conflict sends the worker back once to merge the wave branch and
// resolve; a second conflict parks the issue with the files.
func (s *Supervisor) conflict(ctx context.Context, j *job, files []string) error {
	is, n := j.w.is, j.w.n
	if err := j.record(backlog.Event{Kind: backlog.EvConflict, Issue: n, Files: files, Attempt: is.Attempts}); err != nil {
		return err
	}
	if is.Conflicts >= 2 {
		return s.park(ctx, j, "conflicts with the wave branch again after one resolution attempt",
			fmt.Sprintf("#%d conflicts with %s in %s. How should they be reconciled?", n, s.run().Info.WaveBranch, strings.Join(files, ", ")),
			files)
	}
	s.printf("#%d conflicts with the wave branch in %s; sending it back to its worker", n, strings.Join(files, ", "))
	return j.sendBack(workerStart{conflict: files})
}

// workerPR pushes the worker branch and opens its PR into the wave branch
// (GitHub, backlog.workerPRs), before the merge, so the merge shows on it.
func (s *Supervisor) workerPR(ctx context.Context, j *job) error {
	is := j.w.is
	if s.o.Source.Kind() != config.SourceGitHub || !s.o.Config.Backlog.WorkerPRsOn() {
		return nil
	}
	n, k := is.Number, strconv.Itoa(is.Number)+"-a"+strconv.Itoa(is.Attempts)
	if _, err := s.writeOnce(ctx, j, backlog.Intent{ID: "push-" + k, Op: backlog.OpPush, Issue: n, Head: is.Branch}); err != nil {
		return err
	}
	m := s.marker("worker-pr", n)
	body := fmt.Sprintf("Worker branch for #%d, merged by the supervisor into `%s` (backlog run `%s`).\n\n%s",
		n, s.run().Info.WaveBranch, s.run().Info.ID, m)
	pr, err := s.writeOnce(ctx, j, backlog.Intent{ID: "pr-" + strconv.Itoa(n), Op: backlog.OpPR, Issue: n, Head: is.Branch,
		Base: s.run().Info.WaveBranch, Title: fmt.Sprintf("#%d: %s", n, oneLine(is.Title)), Body: body, Marker: m})
	if err != nil {
		return err
	}
	if is.PR == nil && pr.URL != "" {
		return j.record(backlog.Event{Kind: backlog.EvPR, Issue: n, URL: pr.URL, Number: pr.Number})
	}
	return nil
}

func (s *Supervisor) verifyLog(n int) string {
	return filepath.Join(s.log.dir, "verify", fmt.Sprintf("i%d.log", n))
}

// verifyOn is what a verify is run on top of: the commit its merge is
// built on and the candidates ahead of it that commit holds beyond the
// wave tip (train.go); zero for a merge onto the wave tip.
type verifyOn struct {
	base  string
	ahead []int
}

// verifier runs backlog.verify (an argv) in the scratch checkout at the
// would-be merge commit of j's issue, then the backlog.review agent; its
// output is kept in the run dir. nil: nothing to verify.
func (s *Supervisor) verifier(j *job, on verifyOn) func(ctx context.Context, dir, commit string) error {
	return s.verifierWith(j, j.w.n, len(s.o.Config.Backlog.Review.Executor) > 0, on)
}

// verifies: a merge has a verify step (backlog.verify or backlog.review).
func (s *Supervisor) verifies() bool {
	return len(s.o.Config.Backlog.Verify) > 0 || len(s.o.Config.Backlog.Review.Executor) > 0
}

// verifierWith is verifier of issue n with or without the review agent
// (a moved base merged into the wave branch, n 0, is verified, not
// reviewed: no worker wrote it); it records through j.
func (s *Supervisor) verifierWith(j *job, n int, reviewed bool, on verifyOn) func(ctx context.Context, dir, commit string) error {
	argv := s.o.Config.Backlog.Verify
	if len(argv) == 0 && !reviewed {
		return nil
	}
	return func(ctx context.Context, dir, commit string) error {
		if len(argv) == 0 {
			return s.review(ctx, j, dir, commit, on)
		}
		_ = j.record(backlog.Event{Kind: backlog.EvVerify, Issue: n, Outcome: "running", Commit: commit, Ref: on.base, Ahead: on.ahead})
		timeout := time.Duration(s.o.Config.Backlog.VerifyTimeoutMin) * time.Minute
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		path := s.verifyLog(n)
		if err := jsonfile.MkdirAll(filepath.Dir(path)); err != nil {
			return err
		}
		out, err := jsonfile.Create(path)
		if err != nil {
			return err
		}
		defer out.Close()
		if err := s.setupScratch(ctx, j, n, dir, out); err != nil {
			return &verifyFailure{err: fmt.Errorf("backlog.setup in the verify checkout: %w (output in %s)", err, path), log: path}
		}
		cmd, done, err := s.verifyCommand(ctx, n, argv, dir, commit)
		if err != nil {
			fmt.Fprintln(out, err)
			return err
		}
		cmd.Stdout, cmd.Stderr = out, out
		err = s.runRecorded(j, n, "verify", dir, cmd)
		if berr := s.noteBlocked(j, n, "verify", done()); berr != nil {
			return berr
		}
		if errors.Is(err, errUnrecorded) {
			return err // no verdict on the change
		}
		if err != nil {
			return &verifyFailure{err: fmt.Errorf("%s: %w (output in %s)", strings.Join(argv, " "), err, path), log: path}
		}
		if reviewed {
			return s.review(ctx, j, dir, commit, on)
		}
		return j.record(backlog.Event{Kind: backlog.EvVerify, Issue: n, Outcome: "passed", Commit: commit})
	}
}

func short(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}
