package supervisor

import (
	"context"
	"os/exec"
	"slices"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// A usage limit pauses the workers' executor (backlog/pause.go): the
// worker that hit it keeps its claim and worktree and spends neither its
// salvage nor a run of its cap, nothing new of that executor starts until
// the reset (or a capped backoff when the CLI named none), merges and
// answers go on, and at the end of the pause the same workers go on in
// the same worktrees. A fallback executor (backlog.executor.fallbacks)
// takes the work meanwhile when one is configured and not paused itself.

// usageLimited takes up a worker whose CLI said its account is out. The
// pause is recorded before the worker's end, so a supervisor killed in
// between finds the run usage-limited again and records the end once.
func (s *Supervisor) usageLimited(ctx context.Context, w *worker, obs runtime.Observation) error {
	is, n, v := w.is, w.n, obs.Verdict
	lim := *v.UsageLimit
	exec := s.worker0.ID
	if obs.Record != nil && obs.Record.ExecutorID != "" {
		exec = obs.Record.ExecutorID
	}
	opened, err := s.pauseFor(exec, n, lim)
	if err != nil {
		return err
	}
	if opened {
		s.printf("%s; running workers go on, merges and answers too", backlog.PauseLine(*s.run().Paused(exec), s.o.Now()))
	} else {
		s.printf("#%d: its worker stopped at the same %s usage limit; it waits for the reset in its worktree", n, exec)
	}
	if is.Outcome != "" {
		return nil // recorded by a supervisor before this one
	}
	return s.emit(backlog.Event{Kind: backlog.EvWorkerFinished, Issue: n, Attempt: is.Attempts, Outcome: backlog.OutcomeUsageLimited,
		ExitCode: v.ExitCode, Detail: "usage limit: " + lim.Line})
}

// pauseFor opens exec's pause (opened), or extends it, for the limit lim
// that stopped a run of issue n: until the CLI's reset, or a capped
// backoff when it named none. On the loop.
func (s *Supervisor) pauseFor(exec string, n int, lim runtime.UsageLimit) (opened bool, err error) {
	now := s.o.Now()
	until, kind := lim.ResumeAt(), "reset"
	if until.IsZero() {
		until, kind = now.Add(s.o.UsageBackoff(s.run().BackoffPauses(exec))), ""
	}
	open := s.run().Paused(exec)
	if open == nil || until.After(open.Until) || !slices.Contains(open.Issues, n) {
		outcome := backlog.UsagePaused
		if open != nil {
			outcome = backlog.UsageExtended
		}
		if err := s.emit(backlog.Event{Kind: backlog.EvUsageLimit, Outcome: outcome, Executor: exec, Issue: n,
			Until: &until, Detail: lim.Line, Ref: kind}); err != nil {
			return false, err
		}
	}
	return open == nil, nil
}

// endPauses ends every pause whose time came: its workers are started
// again by refill, each in its own worktree.
func (s *Supervisor) endPauses() error {
	now := s.o.Now()
	for _, p := range s.run().OpenPauses() {
		if now.Before(p.Until) {
			continue
		}
		if err := s.emit(backlog.Event{Kind: backlog.EvUsageLimit, Outcome: backlog.UsageResumed, Executor: p.Executor}); err != nil {
			return err
		}
		var waiting []string
		for _, is := range s.run().List() {
			if is.State == backlog.StateClaimed && is.Outcome == backlog.OutcomeUsageLimited {
				waiting = append(waiting, is.Worktree)
			}
		}
		s.printf("resumed: the %s usage limit passed; %d paused worker(s) go on in their worktrees", p.Executor, len(waiting))
	}
	return nil
}

// startsOn is the executor a worker started now would run on: "" for
// backlog.executor itself, a fallback's id while that one is paused, and
// false when every one is paused (the start waits).
func (s *Supervisor) startsOn() (string, bool) { return s.startsOnFor(s.worker0) }

// startsOnFor is startsOn for an agent resolved as res (a worker, or the
// reviewer): "" for res's own executor, a fallback of res while it is
// paused, false while every one is.
func (s *Supervisor) startsOnFor(res executor.Resolved) (string, bool) {
	now := s.o.Now()
	paused := func(id string) bool {
		p := s.run().Paused(id)
		return p != nil && now.Before(p.Until)
	}
	if !paused(res.ID) {
		return "", true
	}
	for _, id := range res.Fallbacks {
		id = strings.TrimSpace(id)
		if id == "" || id == res.ID || paused(id) || !executor.Available(res, id, onPath) {
			continue
		}
		return id, true
	}
	return "", false
}

func onPath(cmd string) bool {
	_, err := exec.LookPath(cmd)
	return err == nil
}

// onExecutor is the worker's resolved executor moved onto a fallback
// (id "" keeps it).
func onExecutor(res executor.Resolved, id string, attempt int) executor.Resolved {
	if id == "" || id == res.ID {
		return res
	}
	return executor.UsageFallback(res, id, attempt)
}
