package supervisor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
)

// The checks gate (README, "Backlog mode", Merges; backlog.checks): a
// worker's head must have every required CI check green before its
// merge. A candidate whose checks are pending or missing steps out of
// the train's way: it is looked at again every ChecksPoll (conditional
// reads, free of the rate limit while nothing changed) and the train
// takes the next candidate whose checks are green and that does not
// share its conflict group. A red check sends the issue back to its
// worker with the check's words; checks still missing or pending after
// backlog.checksTimeoutMinutes park it with a question.

// defaultChecksPoll is how often a waiting head's checks are looked at.
const defaultChecksPoll = 10 * time.Second

// checkSummaryLimit bounds each red check's own text in the feedback.
const checkSummaryLimit = 3000

// checksSource is the forge's view of CI checks (GitHub only).
type checksSource interface {
	Checks(ctx context.Context, sha string, want []string) ([]backlog.Check, error)
	RequiredChecks(ctx context.Context, branch string) ([]string, error)
}

// checkWait is a queued candidate whose checks are not green yet: the
// head looked at, when to look again, and whether the last look (a
// poll) found them green, which lets the train take it.
type checkWait struct {
	head  string
	next  time.Time
	green bool
}

// checksGate is the gate's state: the waits (the loop's alone) and the
// required checks of each branch as resolved once per run (read by jobs).
type checksGate struct {
	waits map[int]*checkWait

	mu       sync.Mutex
	required map[string][]string
	warned   map[string]bool
}

// checksOn: backlog.checks names checks and the source can read them.
func (s *Supervisor) checksOn() bool {
	_, ok := s.o.Source.(checksSource)
	return ok && len(s.o.Config.Backlog.Checks) > 0
}

// requiredChecks are the check names a pull request into branch must
// pass: backlog.checks with branch-protection replaced by the branch's
// own required checks (read once per run). None: no gate, said once.
func (s *Supervisor) requiredChecks(ctx context.Context, branch string) ([]string, error) {
	g := &s.checks
	g.mu.Lock()
	names, ok := g.required[branch]
	g.mu.Unlock()
	if ok {
		return names, nil
	}
	var warn string
	for _, c := range s.o.Config.Backlog.Checks {
		if c != config.ChecksBranchProtection {
			names = appendNew(names, c)
			continue
		}
		got, err := s.o.Source.(checksSource).RequiredChecks(ctx, branch)
		if errors.Is(err, forge.ErrNoProtectionAccess) {
			warn = fmt.Sprintf("warning: backlog.checks: %v; gating %s on the other named checks only", err, branch)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("backlog.checks: required checks of %s: %w", branch, err)
		}
		for _, n := range got {
			names = appendNew(names, n)
		}
	}
	if len(names) == 0 {
		warn = fmt.Sprintf("warning: backlog.checks names no check a pull request into %s must pass (branch-protection "+
			"found none): merging into it without the checks gate", branch)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.required == nil {
		g.required, g.warned = map[string][]string{}, map[string]bool{}
	}
	g.required[branch] = names
	if warn != "" && !g.warned[branch] {
		g.warned[branch] = true
		s.printf("%s", warn)
	}
	return names, nil
}

func appendNew(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

// gateChecks is the merge's look at the checks of the head of j's worker
// (its branch as fetched into the clone, which is what is merged): true
// when the merge may go on. Otherwise the issue went back to its worker,
// was parked, or waits (out of the train's way) for its checks.
func (s *Supervisor) gateChecks(ctx context.Context, j *job) (bool, error) {
	is := j.w.is
	if !s.checksOn() {
		return true, nil
	}
	required, err := s.requiredChecks(ctx, s.run().Info.WaveBranch)
	if err != nil || len(required) == 0 {
		return err == nil, err
	}
	if err := s.pushForChecks(ctx, j); err != nil {
		return false, err
	}
	head, err := s.o.Git.RevParse(ctx, "refs/heads/"+is.Branch)
	if err != nil {
		return false, fmt.Errorf("#%d: the head its checks are read on: %w", is.Number, err)
	}
	return s.lookAtChecks(ctx, j, head, required)
}

// pushForChecks pushes the worker branch when no worker PR did: CI runs
// on what is on GitHub.
func (s *Supervisor) pushForChecks(ctx context.Context, j *job) error {
	is := j.w.is
	if s.o.Config.Backlog.WorkerPRsOn() {
		return nil // workerPR pushed it
	}
	k := strconv.Itoa(is.Number) + "-a" + strconv.Itoa(is.Attempts)
	_, err := s.writeOnce(ctx, j, backlog.Intent{ID: "push-" + k, Op: backlog.OpPush, Issue: is.Number, Head: is.Branch})
	return err
}

// lookAtChecks reads head's checks and acts on them: green → true; red →
// rework; waiting → a wait the train steps around, or, past the
// timeout, a park. Each change of outcome (or head) is recorded.
func (s *Supervisor) lookAtChecks(ctx context.Context, j *job, head string, required []string) (bool, error) {
	n := j.w.n
	got, err := s.o.Source.(checksSource).Checks(ctx, head, required)
	if err != nil {
		return false, fmt.Errorf("#%d: checks of %s: %w", n, short(head), err)
	}
	v := backlog.JudgeChecks(required, got)
	var is *backlog.IssueRun
	j.onLoop(func() { is = s.run().Issues[n] })
	if err := s.recordChecks(j, is.Checks, head, v); err != nil {
		return false, err
	}
	var since time.Time
	j.onLoop(func() { since = is.Checks.Since })
	switch {
	case v.Outcome == backlog.ChecksPassed:
		j.onLoop(func() { s.checks.wait(n, head, time.Time{}, true) })
		return true, nil
	case v.Outcome == backlog.ChecksFailed:
		j.onLoop(func() { s.checks.done(n) })
		detail := "required checks failed on " + short(head) + ": " + v.Line()
		return false, s.rework(ctx, j, backlog.ReworkChecks, detail, checksFeedback(head, v), nil)
	}
	timeout := time.Duration(s.o.Config.Backlog.ChecksTimeoutMinutes) * time.Minute
	if s.o.Now().Sub(since) < timeout {
		j.onLoop(func() { s.checks.wait(n, head, s.o.Now().Add(s.o.ChecksPoll), false) })
		return false, nil
	}
	j.onLoop(func() { s.checks.done(n) })
	if err := j.record(backlog.Event{Kind: backlog.EvChecks, Issue: n, Commit: head, Outcome: backlog.ChecksTimedOut,
		Detail: v.Line()}); err != nil {
		return false, err
	}
	detail := fmt.Sprintf("required checks did not conclude within %d minutes (backlog.checksTimeoutMinutes): %s",
		s.o.Config.Backlog.ChecksTimeoutMinutes, v.Line())
	q := fmt.Sprintf("The required checks of #%d's change (%s on %s) did not all report a result within %d minutes: %s. "+
		"Is CI set up to run on pull requests into %s? Once they pass, run `backlog run` again to merge it.",
		n, short(head), is.Branch, s.o.Config.Backlog.ChecksTimeoutMinutes, v.Line(), s.run().Info.WaveBranch)
	return false, s.park(ctx, j, detail, q, nil)
}

// recordChecks records a look whose outcome or head differs from the
// last one recorded (st): the log grows with changes, not with polls.
func (s *Supervisor) recordChecks(j *job, st *backlog.ChecksState, head string, v backlog.ChecksVerdict) error {
	n := j.w.n
	if st != nil && st.Commit == head && st.Outcome == v.Outcome {
		return nil
	}
	url := ""
	if len(v.Failed) > 0 {
		url = v.Failed[0].URL
	}
	if v.Outcome != backlog.ChecksPassed {
		s.printf("#%d: checks %s on %s", n, v.Line(), short(head))
	}
	return j.record(backlog.Event{Kind: backlog.EvChecks, Issue: n, Commit: head, Outcome: v.Outcome, Detail: v.Line(), URL: url})
}

// checksFeedback is the red checks' words for the worker's prompt: each
// check's name, conclusion, title, summary and details URL. All of it is
// the CI's text: cleaned of control characters and bounded here, fenced
// as data by the prompt.
func checksFeedback(head string, v backlog.ChecksVerdict) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Required CI checks failed on your head commit %s:", short(head))
	for _, c := range v.Failed {
		fmt.Fprintf(&b, "\n\n- check %q (%s) concluded %s", backlog.OneLine(c.Name), c.Kind, backlog.OneLine(c.Conclusion))
		if t := strings.TrimSpace(backlog.Clean(c.Title)); t != "" {
			fmt.Fprintf(&b, "\n  title: %s", backlog.OneLine(t))
		}
		if sum := strings.TrimSpace(backlog.Clean(c.Summary)); sum != "" {
			if len(sum) > checkSummaryLimit {
				sum = sum[:checkSummaryLimit] + "\n[…]"
			}
			fmt.Fprintf(&b, "\n  summary:\n%s", sum)
		}
		if c.URL != "" {
			fmt.Fprintf(&b, "\n  details: %s", backlog.OneLine(c.URL))
		}
	}
	return b.String()
}

// wait notes that n's checks on head are waited for (next look at next)
// or green. On the loop.
func (g *checksGate) wait(n int, head string, next time.Time, green bool) {
	if g.waits == nil {
		g.waits = map[int]*checkWait{}
	}
	g.waits[n] = &checkWait{head: head, next: next, green: green}
}

// done forgets n's wait. On the loop.
func (g *checksGate) done(n int) { delete(g.waits, n) }

// held: n waits for its checks, out of the train's way.
func (g *checksGate) held(n int) bool {
	w := g.waits[n]
	return w != nil && !w.green
}

// trainNext is the candidate the train merges next: the first of the
// queue, stepping over candidates whose checks are not green yet and
// over the later candidates of their conflict groups (whose change may
// build on theirs). An entry with a job of its own holds the train, as
// before the gate.
func (s *Supervisor) trainNext() (int, bool) { return s.trainNextAfter(nil) }

// trainNextAfter is trainNext stepping over the candidates in (already
// in the merge pipeline, train.go) too.
func (s *Supervisor) trainNextAfter(in func(n int) bool) (int, bool) {
	var heldGroups []int
	for _, n := range s.run().Queue {
		is := s.run().Issues[n]
		if in != nil && in(n) {
			continue
		}
		if s.checks.held(n) {
			if is != nil && is.Group != 0 {
				heldGroups = append(heldGroups, is.Group)
			}
			continue
		}
		if is != nil && is.Group != 0 && slices.Contains(heldGroups, is.Group) {
			continue
		}
		if s.busyJob(n) {
			return 0, false
		}
		return n, true
	}
	return 0, false
}

// pollChecks looks again, each as its own job, at the checks of the
// queued candidates whose look is due. On the loop, every sweep.
func (s *Supervisor) pollChecks(ctx context.Context) error {
	for n := range s.checks.waits {
		if !slices.Contains(s.run().Queue, n) {
			s.checks.done(n) // merged, sent back or parked since
		}
	}
	now := s.o.Now()
	for _, n := range s.run().Queue {
		w := s.checks.waits[n]
		if w == nil || w.green || now.Before(w.next) || s.busyJob(n) {
			continue
		}
		head := w.head
		w.next = now.Add(s.o.ChecksPoll) // one look at a time, even when it runs inline
		if err := s.spawn(ctx, s.worker(n), func(ctx context.Context, j *job) error {
			required, err := s.requiredChecks(ctx, s.run().Info.WaveBranch)
			if err != nil {
				return err
			}
			_, err = s.lookAtChecks(ctx, j, head, required)
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}
