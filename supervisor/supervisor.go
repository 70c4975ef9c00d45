// Package supervisor owns the backlog loop (README, "Backlog mode"): it plans a slice
// of the backlog, claims each issue with a compare-and-swap ref on origin,
// cuts the wave branch, runs one worker per issue in its own git worktree
// as an agent run on the lane's tmux server, supervises and salvages the
// workers, merges their branches one at a time into the wave branch and
// ends with one pull request. Every decision and external write is first
// an event in the run's log, so a supervisor killed at any instant
// resumes where it was.
package supervisor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/notify"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/sandbox"
	"github.com/wave-orchestrator/wave-orchestrator/supervisor/checkout"
	"github.com/wave-orchestrator/wave-orchestrator/telemetry"
)

// Options configure one `backlog run`.
type Options struct {
	Config *config.Config
	Lane   *config.Lane
	Layout lanes.Layout
	Source forge.Source
	Git    *gitops.Repo
	Runs   Runs
	Self   string // the wave-orchestrator binary (runner and local agent)

	Issues     []int // bounded: exactly these; nil = unbounded
	Width      int
	MaxIssues  int
	MaxMinutes int
	Labels     []string
	Slug       string
	Base       string
	Executor   string // --executor

	Out    io.Writer
	Logger *slog.Logger
	Now    func() time.Time
	Host   string
	Pid    int
	// Tick is the slow sweep between watcher events (default 1 s).
	Tick time.Duration
	// Backoff is the wait before the try-th (0-based) retry of a sweep
	// that failed transiently, or of a verify that ended with no verdict
	// (noverdict.go) (default: 2 s doubling, capped at 1 min).
	Backoff func(try int) time.Duration
	// AnswerPoll is how often the source is asked whether questions were
	// answered (default: every sweep locally, 30 s on GitHub).
	AnswerPoll time.Duration
	// ChecksPoll is how often the required CI checks of a head that
	// waits for them are looked at (default 10 s; backlog.checks).
	ChecksPoll time.Duration
	// UsageBackoff is the pause after an executor's k-th (0-based) usage
	// limit that named no reset (default: 5 minutes doubling, capped at
	// an hour).
	UsageBackoff func(k int) time.Duration
}

// Result is how a run ended.
type Result struct {
	RunID    string
	Dir      string
	ExitCode int
	Tally    backlog.Tally
	FinalPR  string
	Resumed  bool
}

// Supervisor runs one backlog run.
type Supervisor struct {
	outMu  sync.Mutex // one printf line at a time
	o      Options
	log    *runLog
	issues map[int]backlog.Issue // latest copy fetched from the source
	start  time.Time
	// workers are the run's workers as this process knows them, by issue.
	workers map[int]*worker
	// co is where the workers' files live (package checkout).
	co      checkout.Checkout
	capped  bool
	drained bool
	budget  budgetState
	// baseConflict: merging a moved base into the wave branch conflicted.
	baseConflict bool
	// halted: the run found a foreign commit on the wave branch and its
	// unmerged work was parked (haltForeign).
	halted bool
	// kept are the checkouts finished runs kept, by issue, read once
	// (keptCheckout).
	keptOnce  sync.Once
	kept      map[int][]keptWork
	probeWait time.Duration
	claimsAt  time.Time // last look at every held claim on origin
	plannedAt time.Time // last unbounded plan
	replan    bool      // something ended since that plan
	// waiting is the transient failure being waited out (nil: none);
	// waitFor the pause before the next sweep. The windows lived through
	// are in the run's log (Run.Waits), as are the environment relaunches.
	waiting *waitOut
	waitFor time.Duration
	// threadsDenied: the token may not read worker PR review threads;
	// said once, then merges go on without looking at them.
	threadsDenied bool
	answersAt     time.Time // last look for answers to the run's questions
	// stopAnswers cuts the look for answers short (a stop does not wait
	// for a rate-limit wait in it).
	stopAnswers context.CancelFunc
	// jobs are the worker starts and the merge under way (jobs.go).
	jobs jobs
	// checks is the merge gate on CI checks (checks.go).
	checks checksGate
	// train is the merge pipeline: the candidates verified at once
	// (train.go).
	train train
	// starts coalesces the jobs' run starts (starts.go).
	starts *starts
	// sandbox is whether workers, reviewers and verify are sandboxed
	// (decided once, at Run).
	sandbox sandbox.Decision
	// began is when Run started, by the real clock (stopAskedOfUs).
	began time.Time
	// worker0 is the workers' executor as backlog.executor (and
	// --executor) resolve it; a usage limit may move a start onto one of
	// its fallbacks (pause.go).
	worker0 executor.Resolved
}

// New checks the options.
func New(o Options) (*Supervisor, error) {
	if o.Config == nil || o.Lane == nil || o.Source == nil || o.Git == nil || o.Runs == nil {
		return nil, errors.New("supervisor: config, lane, source, git and runs are required")
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	o.Out = &lockedWriter{w: o.Out} // the loop and its jobs print
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Host == "" {
		o.Host, _ = os.Hostname()
	}
	if o.Pid == 0 {
		o.Pid = os.Getpid()
	}
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
	if o.Backoff == nil {
		o.Backoff = defaultBackoff
	}
	if o.ChecksPoll <= 0 {
		o.ChecksPoll = defaultChecksPoll
	}
	if o.UsageBackoff == nil {
		o.UsageBackoff = runtime.UsageBackoff
	}
	if o.Width <= 0 {
		o.Width = o.Config.Backlog.Width
	}
	if o.Width <= 0 {
		o.Width = 5
	}
	if o.MaxIssues == 0 {
		o.MaxIssues = o.Config.Backlog.MaxIssues
	}
	if o.MaxMinutes == 0 {
		o.MaxMinutes = o.Config.Backlog.MaxMinutes
	}
	if len(o.Labels) == 0 {
		o.Labels = o.Config.Backlog.Labels
	}
	s := &Supervisor{o: o, issues: map[int]backlog.Issue{}, workers: map[int]*worker{}, probeWait: probeWait,
		replan: true, jobs: newJobs()}
	s.co = s.newCheckout()
	s.starts = &starts{Run: s.startBatch}
	return s, nil
}

// printf is the one place the supervisor prints: what it prints quotes
// issue titles, questions, file names and git's words, so it is escaped
// here (newlines kept for the questions block).
func (s *Supervisor) printf(format string, args ...any) {
	// The notifier prints from its own goroutines too.
	s.outMu.Lock()
	defer s.outMu.Unlock()
	fmt.Fprintln(s.o.Out, "backlog: "+termtext.EscapeLines(fmt.Sprintf(format, args...)))
}

func (s *Supervisor) run() *backlog.Run { return s.log.run }

func (s *Supervisor) emit(ev backlog.Event) error {
	switch ev.Kind {
	case backlog.EvMerged, backlog.EvParked, backlog.EvFailed, backlog.EvNeedsInput, backlog.EvDropped, backlog.EvClaimLost:
		s.replan = true // a slot or a surface is free: an unbounded run looks again
	}
	return s.log.emit(ev)
}

// Run opens (or resumes) the lane's backlog run and drives it to its end.
func (s *Supervisor) Run(ctx context.Context) (Result, error) {
	s.began = time.Now()
	// Checked before anything is claimed or pushed.
	if err := s.checkExecutors(); err != nil {
		return Result{}, err
	}
	if err := s.decideSandbox(ctx); err != nil {
		return Result{}, err
	}
	if err := s.checkSetup(ctx); err != nil {
		return Result{}, err
	}
	resumed, err := s.open(ctx)
	if s.log == nil {
		return Result{}, err
	}
	res := Result{RunID: s.run().Info.ID, Dir: s.log.dir, Resumed: resumed}
	nf, nerr := notify.FollowRun(s.log.dir, s.o.Lane, notify.Options{Logger: s.o.Logger, Say: func(m string) { s.printf("%s", m) }})
	if nerr != nil {
		s.o.Logger.Warn("notify: not following the run's events", "err", nerr)
	}
	defer nf.Stop(notify.DefaultFlush)
	tf := telemetry.FollowRun(s.log.dir, s.o.Lane.Name, telemetry.Options{Logger: s.o.Logger})
	defer tf.Stop(telemetry.DefaultFlush)
	if err != nil {
		return res, err // stopped or given up while opening: which run it was
	}
	if err := s.noteSandbox(ctx); err != nil {
		return res, err
	}
	if err := s.loop(ctx, resumed); err != nil {
		return res, err
	}
	code, err := s.finish(ctx)
	res.ExitCode, res.Tally = code, s.run().Tally()
	if s.run().FinalPR != nil {
		res.FinalPR = s.run().FinalPR.URL
	}
	return res, err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// open resumes the newest unfinished run of the lane, or starts a new one.
// A new run's directory appears with its first events already in it (run
// started, wave branch about to be cut), so a kill at any instant leaves
// either no run or one that the next `backlog run` resumes; nothing is
// pushed before those events are on disk. A transient failure (origin
// unreachable, GitHub down, the disk full) is waited out here as in the
// loop: a run started during an outage starts once it passes.
func (s *Supervisor) open(ctx context.Context) (bool, error) {
	dir, err := runlog.OpenDir(s.o.Layout.StateDir)
	if err != nil {
		return false, err
	}
	if dir != "" {
		l, bad, err := openRunLog(dir, s.o.Now)
		if err != nil {
			return false, err
		}
		for _, b := range bad {
			s.printf("warning: skipped a corrupt event line at %s", b)
		}
		s.log = l
		l.count(s.o.Source)
		s.start = l.run.Info.StartedAt
		s.printf("resuming run %s (wave branch %s)", l.run.Info.ID, l.run.Info.WaveBranch)
		// What the last supervisor left running goes first, then the
		// checkouts it ran in.
		if err := s.endOrphans(ctx); err != nil {
			return true, err
		}
		s.sweepScratch(ctx)
		if l.run.StopPaused {
			if err := s.emit(backlog.Event{Kind: backlog.EvRunResumed, Detail: "backlog run"}); err != nil {
				return true, err
			}
		}
		s.restoreWait()
		if err := s.retry(ctx, s.reopen); err != nil {
			return true, err
		}
		return true, s.restartIntents(ctx)
	}
	s.sweepScratch(ctx)
	created := ""
	if err := s.retry(ctx, func(ctx context.Context) error { return s.create(ctx, &created) }); err != nil {
		return false, err
	}
	if err := s.retry(ctx, s.cutWaveBranch); err != nil {
		return false, err
	}
	info := s.run().Info
	s.printf("run %s: wave branch %s from %s (up to %d workers)", info.ID, info.WaveBranch, info.Base, info.Width)
	return false, nil
}

// reopen puts a resumed run's wave branch back where the run left it:
// cut, if the run was stopped before; else checked against the tip the
// run last pushed (a foreign commit is recorded, and the run halts), and
// every merged record proven on it.
func (s *Supervisor) reopen(ctx context.Context) error {
	if w := s.run().Wave; w != nil && !w.Cut {
		return s.cutWaveBranch(ctx)
	}
	if s.run().WaveTip == "" { // a log from before the tip was recorded
		return s.ensureWaveBranch(ctx)
	}
	if err := s.checkWaveTip(ctx); err != nil {
		return err
	}
	return s.proveMerged(ctx)
}

// create makes a new run's directory with its first events (once: its
// path is kept in *dir) and opens its log. Until the directory exists
// nothing is claimed or pushed, so it is simply tried again after a
// transient failure.
func (s *Supervisor) create(ctx context.Context, dir *string) error {
	if *dir == "" {
		now := s.o.Now().UTC()
		info, err := s.newRunInfo(ctx, now)
		if err != nil {
			return err
		}
		resv, err := s.o.Git.WaveNameCommit(ctx, info.WaveBranch, info.ID)
		if err != nil {
			return err
		}
		d, err := createRunDir(runlog.Root(s.o.Layout.StateDir), info.ID, now, []backlog.Event{
			{Kind: backlog.EvRunStarted, Run: &info},
			{Kind: backlog.EvWaveBranch, Branch: info.WaveBranch, Ref: resv, Attempt: 1, Outcome: backlog.WaveCutting},
		})
		if err != nil {
			return err
		}
		*dir = d
	}
	l, _, err := openRunLog(*dir, s.o.Now)
	if err != nil {
		return err
	}
	l.count(s.o.Source)
	s.log, s.start = l, l.run.Info.StartedAt
	return nil
}

func (s *Supervisor) newRunInfo(ctx context.Context, now time.Time) (backlog.RunInfo, error) {
	def, err := s.o.Source.DefaultBranch(ctx)
	if err != nil {
		return backlog.RunInfo{}, fmt.Errorf("default branch: %w", err)
	}
	base := firstNonEmpty(s.o.Base, s.o.Config.GitHub.BaseBranch, def)
	slug := gitops.BranchSlug(firstNonEmpty(s.o.Slug, "backlog"), 40)
	date := now.Format("2006-01-02")
	wave := "wave/" + date + "-" + slug
	if err := gitops.CheckRefFormat(ctx, wave); err != nil {
		return backlog.RunInfo{}, fmt.Errorf("wave branch name: %w", err)
	}
	// The random part keeps two runs started in the same second (two
	// machines, a script's loop) from sharing an id: claims are adopted
	// by run id after a restart, so ids must never collide.
	id := now.Format("20060102T150405Z") + "-" + slug + "-" + randomHex(3)
	src := s.o.Source.Kind()
	repo := ""
	if src == config.SourceGitHub {
		repo = s.o.Config.GitHub.Owner + "/" + s.o.Config.GitHub.Repo
	}
	return backlog.RunInfo{ID: id, Lane: s.o.Lane.Name, Source: src, Repo: repo, WaveBranch: wave, Base: base,
		Default: def, Bounded: s.o.Issues, Width: s.o.Width, MaxIssues: s.o.MaxIssues, MaxMinutes: s.o.MaxMinutes,
		VerifyParallel: s.verifyParallel(), Host: s.o.Host, Pid: s.o.Pid, StartedAt: now}, nil
}

func (s *Supervisor) ensureWaveBranch(ctx context.Context) error {
	info := s.run().Info
	if _, _, err := s.o.Git.EnsureWaveBranch(ctx, info.WaveBranch, info.Base); err != nil {
		return fmt.Errorf("wave branch %s from %s: %w", info.WaveBranch, info.Base, err)
	}
	return nil
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
