package supervisor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/gate"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// maxReviewDiff bounds the diff put in a reviewer's prompt.
const maxReviewDiff = 200 << 10

// review runs the backlog.review agent over the diff a merge would bring
// (in the scratch worktree at the would-be merge commit) and waits for its
// [wave-verdict]: pass lets the merge go on; fail, or no verdict, stops it
// with the reviewer's detail. Not a rubber stamp: a missing verdict fails.
// The diff is the merge's own, from its first parent: the wave tip, or
// the candidate ahead it was built on (on), whose changes are not this
// worker's.
func (s *Supervisor) review(ctx context.Context, j *job, dir, commit string, on verifyOn) error {
	n := j.w.n
	cfg := s.o.Config.Backlog.Review.Executor
	if len(cfg) == 0 {
		return nil
	}
	var is *backlog.IssueRun
	j.onLoop(func() { is = s.run().Issues[n] })
	issue, err := s.issue(ctx, j, n)
	if err != nil {
		return err
	}
	diff, err := s.o.Git.DiffText(ctx, commit+"^1", commit, maxReviewDiff)
	if err != nil {
		return fmt.Errorf("review #%d: diff: %w", n, err)
	}
	runDir, err := s.reviewRun(ctx, j, issue, is, dir, diff, cfg, commit, on)
	if err != nil {
		return err
	}
	if r := s.o.Runs.Observe(ctx, runDir, s.o.Now()).Record; r != nil {
		if err := s.noteBlocked(j, n, "reviewer", r.BlockedHosts); err != nil {
			return err
		}
	}
	text, _ := runtime.ReadLogTail(filepath.Join(runDir, lanes.LogFile), 256<<10)
	v := gate.ParseLog(text).Verdict
	switch {
	case v == nil:
		return fmt.Errorf("review #%d: the reviewer gave no [wave-verdict] (log %s)", n, filepath.Join(runDir, lanes.LogFile))
	case v.Verdict == "fail":
		return &reviewRejection{n: n, detail: v.Detail}
	case v.Verdict != "pass":
		return fmt.Errorf("review #%d: verdict %s: %s", n, v.Verdict, oneLine(v.Detail))
	}
	s.printf("#%d: review passed", n)
	return j.record(backlog.Event{Kind: backlog.EvVerify, Issue: n, Outcome: "passed", Detail: oneLine(v.Detail), Commit: commit})
}

// waitRun blocks until the run in dir is done, terminating it at its
// deadline; it wakes on watcher events and the sweep tick. In a job j on
// a goroutine of its own it wakes on the tick only: the watcher's events
// are the loop's.
func (s *Supervisor) waitRun(ctx context.Context, j *job, dir string) error {
	tick := time.NewTicker(s.o.Tick)
	defer tick.Stop()
	changed := s.o.Runs.Changed()
	if !j.inline {
		changed = nil
	}
	for {
		obs := s.o.Runs.Observe(ctx, dir, s.o.Now())
		if obs.Verdict.Done {
			return nil
		}
		if obs.Verdict.Terminate {
			grace := time.Duration(s.o.Lane.Runtime.TerminateGraceMs) * time.Millisecond
			_ = s.o.Runs.Terminate(ctx, dir, grace, false)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-tick.C:
		}
	}
}

// reviewRun runs the reviewer to its end and returns its run dir. A
// reviewer is held by usage limits as workers are (pause.go), spending
// nothing: it starts only while its executor is not paused (or on a
// fallback of its executor that is not), and one whose CLI says its
// account is out pauses that executor and runs again after the reset.
// A stop requested while it waits ends the wait (ErrStopped).
func (s *Supervisor) reviewRun(ctx context.Context, j *job, issue backlog.Issue, is *backlog.IssueRun, cwd, diff string, cfg map[string]string,
	commit string, on verifyOn) (string, error) {
	n := issue.Number
	agent, res, err := s.reviewer(n, cfg)
	if err != nil {
		return "", err
	}
	for {
		exec, err := s.reviewerOn(ctx, j, n, res)
		if err != nil {
			return "", fmt.Errorf("review #%d: %w", n, err)
		}
		// Numbered after the review dirs already there, so a restarted
		// supervisor never reuses one (and reads a stale verdict from it).
		prior, _ := filepath.Glob(filepath.Join(s.log.dir, "reviews", fmt.Sprintf("i%d-r*", n)))
		runDir := filepath.Join(s.log.dir, "reviews", fmt.Sprintf("i%d-r%d", n, len(prior)+1))
		prompt := backlog.ReviewPrompt(backlog.ReviewInput{Issue: issue, Branch: is.Branch, WaveBranch: s.run().Info.WaveBranch, Diff: diff})
		p, err := s.runPayload(agentRun{what: fmt.Sprintf("review #%d", n), agent: agent, res: onExecutor(res, exec, 1), dir: runDir,
			cwd: cwd, prompt: prompt, attempt: 1, session: "backlog-r" + strconv.Itoa(n), issue: n, branch: is.Branch, review: true})
		if err != nil {
			return "", err
		}
		_ = j.record(backlog.Event{Kind: backlog.EvVerify, Issue: n, Outcome: "reviewing", RunDir: runDir, Commit: commit,
			Ref: on.base, Ahead: on.ahead})
		s.printf("#%d: reviewer started in tmux session %s", n, p.SessionName)
		_ = s.o.Runs.Discard(ctx, p)
		s.o.Runs.Watch(runDir)
		if err := s.o.Runs.Start(ctx, []*runtime.Payload{p}); err != nil {
			return "", fmt.Errorf("review #%d: start: %w", n, err)
		}
		if err := s.waitRun(ctx, j, runDir); err != nil {
			if ctx.Err() != nil {
				// Cut short (its base changed under it, or the run stops):
				// the reviewer is stopped, not left reviewing a stale merge.
				grace := time.Duration(s.o.Lane.Runtime.TerminateGraceMs) * time.Millisecond
				_ = s.o.Runs.Terminate(context.WithoutCancel(ctx), runDir, grace, false)
			}
			return "", fmt.Errorf("review #%d: %w", n, err)
		}
		obs := s.o.Runs.Observe(ctx, runDir, s.o.Now())
		if obs.Verdict.UsageLimit == nil {
			return runDir, nil
		}
		out := p.ExecutorID
		var opened bool
		j.onLoop(func() { opened, err = s.pauseFor(out, n, *obs.Verdict.UsageLimit) })
		if err != nil {
			return "", err
		}
		if opened {
			var line string
			j.onLoop(func() { line = backlog.PauseLine(*s.run().Paused(out), s.o.Now()) })
			s.printf("%s; #%d's review runs again after it", line, n)
		}
	}
}

// reviewerOn waits until the reviewer, resolved as res, may start: the
// executor it runs on ("" its own, or a fallback), as startsOnFor says.
func (s *Supervisor) reviewerOn(ctx context.Context, j *job, n int, res executor.Resolved) (string, error) {
	tick := time.NewTicker(s.o.Tick)
	defer tick.Stop()
	for said := false; ; said = true {
		var on string
		var ok bool
		j.onLoop(func() { on, ok = s.startsOnFor(res) })
		if ok {
			return on, nil
		}
		if !said {
			s.printf("#%d: its review waits for the %s usage limit to pass", n, res.ID)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-tick.C:
		}
		if s.stopRequested() {
			return "", fmt.Errorf("waiting for the %s usage limit: %w", res.ID, ErrStopped)
		}
	}
}

// reviewer is the backlog.review agent of issue n, resolved.
func (s *Supervisor) reviewer(n int, cfg map[string]string) (*wave.Agent, executor.Resolved, error) {
	ec, errs := wave.ParseExecutorMap(cfg)
	if len(errs) > 0 {
		return nil, executor.Resolved{}, fmt.Errorf("%s: backlog.review.executor: %w", s.o.Config.KeyLine("backlog.review.executor"), errors.Join(errs...))
	}
	agent := &wave.Agent{ID: "r" + strconv.Itoa(n), Title: "review of #" + strconv.Itoa(n), Executor: ec}
	res, err := executor.Resolve(agent, roles.RoleImplementation, s.o.Lane, "", false)
	if err != nil {
		return nil, executor.Resolved{}, fmt.Errorf("review #%d: executor: %w", n, err)
	}
	return agent, res, nil
}
