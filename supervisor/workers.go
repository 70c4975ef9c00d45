package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/gate"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/supervisor/checkout"
)

// workerStart says why a worker run starts.
type workerStart struct {
	salvage    bool
	salvageRef string
	conflict   []string
	rework     *backlog.Rework // sent back with feedback (a rework round)
	// executor is a fallback the run starts on while the workers' own
	// executor is paused by a usage limit ("": backlog.executor).
	executor string
	// stopped says why the previous run was stopped, for the salvage
	// relaunch's prompt ("": it failed, or nothing to say).
	stopped string
}

func (s *Supervisor) branchOf(n int) string { return s.run().Info.WaveBranch + "-i" + strconv.Itoa(n) }

func (s *Supervisor) worktreeOf(n int) string {
	if rc, ok := s.co.(*checkout.Remote); ok {
		return rc.Dir(n) // in the worker's own pod
	}
	return filepath.Join(s.worktreeRoot(), s.o.Layout.Project+"-"+s.run().Info.ID, "i"+strconv.Itoa(n))
}

// worktreeRoot is where local workers' checkouts go (backlog.worktreeRoot).
func (s *Supervisor) worktreeRoot() string {
	root := s.o.Config.Backlog.WorktreeRoot
	if root == "" {
		return DefaultWorktreeRoot()
	}
	if !filepath.IsAbs(root) {
		root = filepath.Join(s.o.Lane.RepoRoot, root)
	}
	return root
}

// DefaultWorktreeRoot is outside the repository, so the repo's own tooling
// (linters, test discovery, file watchers) never scans worker trees:
// $XDG_STATE_HOME/wave-orchestrator/worktrees, else ~/.local/state/….
func DefaultWorktreeRoot() string {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "wave-orchestrator", "worktrees")
}

func (s *Supervisor) waveRef() string { return "refs/remotes/origin/" + s.run().Info.WaveBranch }

// startWorker prepares w's worktree and starts its next agent run, as
// the issue's job (jobs.go): it returns at once. On the loop.
func (s *Supervisor) startWorker(ctx context.Context, w *worker, why workerStart) error {
	return s.spawn(ctx, w, func(ctx context.Context, j *job) error { return s.launch(ctx, j, why) })
}

// launch is startWorker's work, in the worker's job.
func (s *Supervisor) launch(ctx context.Context, j *job, why workerStart) error {
	w, n := j.w, j.w.n
	j.onLoop(func() { why.executor = w.executor })
	is := w.is
	// The branch needs no check-ref-format of its own: the wave branch
	// passed it when the run opened, and "-i<n>" appended to a valid
	// name keeps it valid (no "..", "@{", ".lock" or trailing "." or "/").
	branch, wt := s.branchOf(n), s.worktreeOf(n)
	if err := s.forgetLostSetup(j); err != nil {
		return err
	}
	resumed, err := s.co.Prepare(ctx, w.is, branch, wt)
	if err != nil {
		return err
	}
	if resumed && is.Attempts == 0 {
		s.printf("#%d: resuming the existing branch %s", n, branch)
	}
	if parked, err := s.overBudget(ctx, j); parked || err != nil {
		return err
	}
	if parked, err := s.overRuns(ctx, j); parked || err != nil {
		return err
	}
	if parked, err := s.readyCheckout(ctx, j, wt); parked || err != nil {
		return err
	}
	attempt := is.Attempts + 1
	if why.rework == nil && is.InRework {
		// Sent back for rework and not ready since: whatever starts it
		// now (a resume, a relaunch) carries the feedback.
		why.rework = s.reworkOf(is)
	}
	p, err := s.payload(ctx, j, attempt, branch, wt, why)
	if err != nil {
		return err
	}
	if err := s.co.Payload(w.is, p); err != nil {
		return fmt.Errorf("#%d: %w", n, err)
	}
	// Recorded before the session exists, so a supervisor killed right
	// after Start adopts the run instead of starting a second one. A
	// stale session under its name (an earlier attempt's) goes at the
	// start (startRun).
	recorded := wt
	if s.pods() {
		recorded = "" // nothing of it is on this machine
	}
	if err := j.record(backlog.Event{Kind: backlog.EvWorkerStarted, Issue: n, Attempt: attempt, Branch: branch, Worktree: recorded,
		RunDir: p.RunDir, Session: p.SessionName, Salvage: why.salvage, Ref: why.salvageRef}); err != nil {
		return err
	}
	s.o.Runs.Watch(p.RunDir)
	if err := s.startRun(ctx, p); err != nil {
		return fmt.Errorf("#%d: start worker: %w", n, err)
	}
	j.onLoop(func() { w.progress = progress{} })
	if p.Checkout != nil {
		s.printf("#%d: worker started (%s, attempt %d) in a pod, cloning %s", n, p.ExecutorID, attempt, p.Checkout.Origin)
		return nil
	}
	s.printf("#%d: worker started (%s, attempt %d) in tmux session %s, worktree %s", n, p.ExecutorID, attempt, p.SessionName, wt)
	return nil
}

// observe classifies every running worker and acts on the finished ones.
func (s *Supervisor) observe(ctx context.Context) error {
	now := s.o.Now()
	for _, is := range s.run().List() {
		if is.State != backlog.StateRunning || is.RunDir == "" || s.busyJob(is.Number) {
			continue
		}
		w := s.worker(is.Number)
		obs := s.o.Runs.Observe(ctx, is.RunDir, now)
		v := obs.Verdict
		if neverStarted(w, obs) {
			w.restarts++
			_ = runtime.DiscardEnv(is.RunDir)
			s.printf("#%d: its worker never started (the supervisor stopped between recording and starting it); starting it", is.Number)
			if err := s.startWorker(ctx, w, workerStart{}); err != nil {
				return err
			}
			continue
		}
		if !v.Done {
			if v.Terminate || s.stuck(ctx, w, obs, now) {
				grace := time.Duration(s.o.Lane.Runtime.TerminateGraceMs) * time.Millisecond
				if err := s.o.Runs.Terminate(ctx, is.RunDir, grace, false); err != nil {
					s.printf("warning: terminate #%d: %v", is.Number, err)
				}
			}
			continue
		}
		if err := s.finished(ctx, w, obs); err != nil {
			return err
		}
	}
	return nil
}

// neverStarted: the run was recorded but its session never came to be
// (a supervisor killed between the two). Starting it again is not a
// salvage: no work was done. Bounded, so a tmux that cannot start
// sessions still ends in a salvage and a park.
func neverStarted(w *worker, obs runtime.Observation) bool {
	if w.restarts >= 2 {
		return false
	}
	if obs.Record == nil && obs.Err == nil {
		// Start writes runtime.json before it creates the session, and
		// this process observes only after Start returned: no record
		// means a previous supervisor died before the session existed.
		return true
	}
	v := obs.Verdict
	return v.Done && v.State == runtime.StateLost && v.Reason == "session never started"
}

// finished decides what a finished worker run means: merge, rework,
// salvage or park (docs/state.md, the backlog run directory).
func (s *Supervisor) finished(ctx context.Context, w *worker, obs runtime.Observation) error {
	is := w.is
	n, v, prior := is.Number, obs.Verdict, is.Outcome
	// First: a pod's run brings its log's tail back with its branch.
	if err := s.co.Fetch(ctx, is); err != nil {
		if ok, err := s.unreadable(ctx, w, err); ok {
			return err
		}
		return fmt.Errorf("#%d: fetch its branch: %w", n, err)
	}
	if v.State == runtime.StateUsageLimited && v.UsageLimit != nil {
		return s.usageLimited(ctx, w, obs)
	}
	text, _ := runtime.ReadLogTail(filepath.Join(is.RunDir, lanes.LogFile), 256<<10)
	text = gate.StripANSI(text)
	// The marker is read from what the agent wrote, in any output format
	// (claude json/stream-json, codex and opencode events), as wave mode does.
	res, marked := backlog.ParseResult(gate.DecodeLog(text))
	lost := s.co.Lost(is)
	commits, err := s.co.Ahead(ctx, is)
	if err != nil {
		if ok, err := s.unreadable(ctx, w, err); ok {
			return err
		}
		return fmt.Errorf("#%d: commits ahead: %w", n, err)
	}
	outcome, detail := classify(v, prior, res, marked, commits)
	if lost && outcome == backlog.OutcomeNoWork {
		// Its commits, if any, went with its checkout before they were
		// fetched: that is a lost worker, salvaged from its branch.
		outcome, detail = backlog.OutcomeLost, "lost: "+detail
	}
	if lost && failing(outcome) {
		detail = "lost its worktree " + is.Worktree + ": it was deleted while the worker ran (" + detail + ")"
	}
	if prior == "" && failing(outcome) && !lost {
		// Before a failure is recorded and a salvage spent: was it the
		// environment's? origin is asked first, so an outage that failed
		// the worker opens a wait here instead of costing its salvage.
		if _, _, err := s.o.Git.RemoteHead(ctx, s.run().Info.WaveBranch); err != nil {
			return fmt.Errorf("#%d: its worker failed; checking origin: %w", n, err)
		}
		if cause := environmental(startedAt(obs), endedAt(obs, s.o.Now()), s.windows(), s.waiting, lastBytes(text, 2048)); cause != "" && is.EnvRelaunches < maxEnvRelaunches {
			outcome = outcomeEnvironment
			detail += "; the cause was the supervisor's environment (" + cause + "), so the relaunch does not spend its salvage"
		}
	}
	if prior == outcomeEnvironment {
		outcome = outcomeEnvironment
	}
	if prior == "" || prior == outcomeStopped {
		if r := obs.Record; r != nil {
			if err := s.noteBlocked(s.inline(w), n, "worker", r.BlockedHosts); err != nil {
				return err
			}
		}
		if err := s.emit(backlog.Event{Kind: backlog.EvWorkerFinished, Issue: n, Attempt: is.Attempts, Outcome: outcome,
			ExitCode: v.ExitCode, Detail: detail, Question: res.Question, Commits: commits}); err != nil {
			return err
		}
	}
	if v.State == runtime.StateBudgetExceeded {
		// A relaunch on the same budget would spend as much again. The
		// park writes to the issue tracker: as the issue's job, so a
		// rate-limit wait in it never holds the loop.
		return s.spawn(ctx, w, func(ctx context.Context, j *job) error {
			return s.park(ctx, j, "worker stopped at its budget ("+v.Reason+"); not retried on the same budget", "", nil)
		})
	}
	switch outcome {
	case backlog.OutcomeReady:
		if err := s.emit(backlog.Event{Kind: backlog.EvReady, Issue: n, Commits: commits}); err != nil {
			return err
		}
		s.printf("#%d: ready to merge (%d commit(s) on %s)", n, commits, is.Branch)
		// Its branch is brought in now, beside the merge train (which
		// waits for this job before it merges the issue), not in it.
		return s.spawn(ctx, w, func(ctx context.Context, j *job) error {
			_, err := s.unreadableIn(ctx, j, s.co.Fetch(ctx, w.is))
			return err
		})
	case backlog.OutcomeNeedsInput:
		q := firstNonEmpty(res.Question, "The worker needs input to go on.")
		return s.spawn(ctx, w, func(ctx context.Context, j *job) error { return s.needsInput(ctx, j, q) })
	case backlog.OutcomeBlocked:
		return s.spawn(ctx, w, func(ctx context.Context, j *job) error {
			return s.park(ctx, j, "worker reported blocked: "+detail, firstNonEmpty(res.Question, detail), nil)
		})
	case backlog.OutcomeNoWork:
		s.printf("#%d: failed: the worker finished without a commit", n)
		if err := s.emit(backlog.Event{Kind: backlog.EvFailed, Issue: n, Detail: "no work: the worker exited 0 without a commit"}); err != nil {
			return err
		}
		s.checkpoint("failed")
		return nil
	}
	if prior == outcomeStopped {
		// Stopped by `backlog stop`, not failed: continue without
		// spending the salvage relaunch.
		return s.startWorker(ctx, w, workerStart{salvage: true})
	}
	if outcome == outcomeEnvironment {
		if prior == "" {
			s.printf("#%d: worker %s", n, oneLine(detail))
		}
		return s.startWorker(ctx, w, workerStart{salvage: true})
	}
	return s.salvage(ctx, w, detail)
}

// outcomeEnvironment: the worker failed because of the supervisor's
// environment (a transient window, its log saying the disk was full);
// its relaunch does not spend the salvage.
const outcomeEnvironment = backlog.OutcomeEnvironment

// failing: the outcome spends the salvage relaunch.
func failing(outcome string) bool {
	switch outcome {
	case backlog.OutcomeFailed, backlog.OutcomeLost, backlog.OutcomeTimedOut:
		return true
	}
	return false
}

// endedAt is when the worker's run ended: its record's finish time, else
// now (the moment it was seen ended).
func endedAt(obs runtime.Observation, now time.Time) time.Time {
	if obs.Record != nil && obs.Record.FinishedAt != nil {
		return *obs.Record.FinishedAt
	}
	return now
}

// startedAt is when the worker's run started (zero when unknown: it
// then counts as started before any window).
func startedAt(obs runtime.Observation) time.Time {
	if obs.Record != nil {
		return obs.Record.StartedAt
	}
	return time.Time{}
}

func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// A failing probe is retried every probeWait, maxProbeTries times (10
// minutes), before the issue is parked: an unreachable executor needs a
// person, not a supervisor waiting forever.
const (
	probeWait     = 30 * time.Second
	maxProbeTries = 20
)

const outcomeStopped = backlog.OutcomeStopped

// classify is the pure part of finished.
func classify(v runtime.Verdict, prior string, res backlog.Result, marked bool, commits int) (string, string) {
	if prior == backlog.OutcomeStalled {
		return backlog.OutcomeStalled, "stalled: no output and no worktree change"
	}
	if prior == backlog.OutcomeNoProgress {
		return backlog.OutcomeNoProgress, "no progress: neither a new commit nor a changed file"
	}
	code := -1
	if v.ExitCode != nil {
		code = *v.ExitCode
	}
	switch {
	case v.State == runtime.StateCompleted && code == 0 && marked && res.State == "needs-input":
		return backlog.OutcomeNeedsInput, res.Question
	case v.State == runtime.StateCompleted && code == 0 && marked && res.State == "blocked":
		return backlog.OutcomeBlocked, res.Detail
	case v.State == runtime.StateCompleted && code == 0 && commits == 0:
		return backlog.OutcomeNoWork, "exited 0 without a commit"
	case v.State == runtime.StateCompleted && code == 0 && marked && res.State == "done":
		return backlog.OutcomeReady, res.Detail
	case v.State == runtime.StateCompleted && code == 0:
		return backlog.OutcomeFailed, "exited 0 without a [backlog-result] marker"
	case v.State == runtime.StateLost:
		return backlog.OutcomeLost, "lost: " + v.Reason
	case v.State == runtime.StateTimedOut:
		return backlog.OutcomeTimedOut, "timed out"
	}
	d := string(v.State)
	if code >= 0 {
		d += " with exit code " + strconv.Itoa(code)
	}
	if v.Reason != "" && v.Reason != "exit code "+strconv.Itoa(code) {
		d += ": " + v.Reason
	}
	return backlog.OutcomeFailed, d
}

// salvage: probe, snapshot the worktree, relaunch once in the same
// worktree with the salvage header; a second failure parks the issue.
func (s *Supervisor) salvage(ctx context.Context, w *worker, detail string) error {
	is, n := w.is, w.n
	if is.Salvages >= 1 {
		q := fmt.Sprintf("The worker for #%d failed twice (%s). What should change before another try?", n, detail)
		return s.spawn(ctx, w, func(ctx context.Context, j *job) error {
			return s.park(ctx, j, "failed after one salvage relaunch: "+detail, q, nil)
		})
	}
	if s.o.Now().Before(w.probeAt) {
		return nil
	}
	if w.probeTries == 0 {
		s.printf("#%d: worker %s", n, detail)
	}
	if ok, why := s.probe(ctx); !ok {
		w.probeTries++
		if w.probeTries >= maxProbeTries {
			s.noteProbe(w, 0, "", time.Time{})
			q := fmt.Sprintf("The worker for #%d failed (%s) and the probe kept failing (%s). Is the executor reachable?", n, detail, why)
			return s.park(ctx, s.inline(w), "probe failed "+strconv.Itoa(maxProbeTries)+" times: "+why, q, nil)
		}
		w.probeAt = s.o.Now().Add(s.probeWait)
		s.noteProbe(w, w.probeTries, why, w.probeAt)
		s.printf("#%d: probe failed (%s); waiting %s before the salvage relaunch (%d of %d)", n, why, s.probeWait, w.probeTries, maxProbeTries)
		return nil
	}
	s.noteProbe(w, 0, "", time.Time{}) // also a wait left by a supervisor before a restart
	w.probeAt, w.probeTries = time.Time{}, 0
	ref := fmt.Sprintf("refs/wave/salvage/%d/a%d", n, is.Attempts)
	lost := s.co.Lost(is)
	sha, err := s.co.Snapshot(ctx, is, ref, fmt.Sprintf("salvage of #%d attempt %d: %s", n, is.Attempts, oneLine(detail)))
	if err != nil {
		if ok, err := s.unreadable(ctx, w, err); ok {
			return err
		}
		return fmt.Errorf("#%d: salvage snapshot: %w", n, err)
	}
	if err := s.emit(backlog.Event{Kind: backlog.EvSalvaged, Issue: n, Attempt: is.Attempts, Ref: ref, Commit: sha}); err != nil {
		return err
	}
	if lost {
		s.printf("#%d: its worktree %s was deleted; snapshot %s of its branch; relaunching once in a recreated worktree", n, is.Worktree, ref)
	} else {
		s.printf("#%d: snapshot %s; relaunching once in the same worktree", n, ref)
	}
	why := workerStart{salvage: true, salvageRef: ref}
	switch is.Outcome {
	case backlog.OutcomeNoProgress:
		why.stopped = oneLine(is.Detail) + "; this time commit each real step as you make it, and end with state=blocked or " +
			"state=needs-input and your question when you cannot move the issue forward"
	case backlog.OutcomeStalled:
		why.stopped = oneLine(is.Detail)
	}
	return s.startWorker(ctx, w, why)
}

// needsInput puts j's issue in the bucket: question kept, a comment
// posted, the needs-input label added so no run takes it until a person
// answers.
func (s *Supervisor) needsInput(ctx context.Context, j *job, q string) error {
	n := j.w.n
	// The writes come before the state: a crash in between finds the
	// worker's outcome again and redoes them (each is done once).
	if err := s.ask(ctx, j, q); err != nil {
		return err
	}
	if err := j.record(backlog.Event{Kind: backlog.EvNeedsInput, Issue: n, Question: q}); err != nil {
		return err
	}
	s.printf("#%d needs input: %s", n, oneLine(q))
	j.onLoop(func() { s.checkpoint("needs-input") })
	return nil
}

// park sets j's issue aside as blocked with a specific question; the
// rest of the wave goes on. Its worktree and branch are kept.
func (s *Supervisor) park(ctx context.Context, j *job, detail, question string, files []string) error {
	n := j.w.n
	// The comment before the state, as in needsInput.
	if err := s.comment(ctx, j, "parked", backlog.ParkedComment(s.run().Info.ID, detail, question, files)); err != nil {
		return err
	}
	if err := j.record(backlog.Event{Kind: backlog.EvParked, Issue: n, Detail: detail, Question: question, Files: files}); err != nil {
		return err
	}
	s.printf("#%d parked: %s", n, oneLine(detail))
	j.onLoop(func() { s.checkpoint("parked") })
	return nil
}
