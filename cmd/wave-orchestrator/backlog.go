package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/preflight"
	"github.com/wave-orchestrator/wave-orchestrator/runs"
	"github.com/wave-orchestrator/wave-orchestrator/submitted"
	"github.com/wave-orchestrator/wave-orchestrator/supervisor"
)

type backlogFlags struct {
	issues    string
	unbounded bool
	slug      string
	executor  string
	noDash    bool
	run       string
	detach    bool
}

func (f *backlogFlags) selection(c *cobra.Command) {
	c.Flags().StringVar(&f.issues, "issues", "", "bounded: exactly these issue numbers, in this order (e.g. 12,15,18)")
	c.Flags().BoolVar(&f.unbounded, "unbounded", false, "take the next eligible issues as capacity frees, until drained or capped")
	c.Flags().Int("width", 0, "workers at once (default: min(5, groups))")
	bindConfig(c, "width", "backlog.width")
	c.Flags().StringArray("label", nil, "only issues with this label (repeatable; all must match)")
	bindConfig(c, "label", "backlog.labels")
}

func (f *backlogFlags) numbers() ([]int, error) {
	if f.issues != "" && f.unbounded {
		return nil, usageError{errors.New("--issues and --unbounded exclude each other")}
	}
	if f.issues == "" && !f.unbounded {
		return nil, usageError{errors.New("say which issues: --issues 12,15,18 or --unbounded")}
	}
	var out []int
	seen := map[int]bool{}
	for _, p := range strings.Split(f.issues, ",") {
		p = strings.TrimPrefix(strings.TrimSpace(p), "#")
		if p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 {
			return nil, usageError{fmt.Errorf("--issues: %q is not an issue number", p)}
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

func newBacklogCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "backlog",
		Short: "Work a slice of the issue backlog: one worker per issue, merged one at a time into a wave branch, one final PR",
		Example: `  wave-orchestrator backlog plan --issues 12,15,18
  wave-orchestrator backlog run --issues 12,15,18
  wave-orchestrator backlog status --json`,
	}
	c.AddCommand(newBacklogPlanCmd(g), newBacklogRunCmd(g), newBacklogStatusCmd(g), newBacklogStopCmd(g), newBacklogCloseCmd(g),
		newBacklogDiffCmd(g))
	c.AddCommand(newBacklogAnswerCmd(g), newBacklogPruneCmd(g))
	return c
}

// backlogEnv is a lane with its backlog source and repository opened.
type backlogEnv struct {
	*laneEnv
	src    forge.Source
	git    *gitops.Repo
	logger *slog.Logger
}

func openBacklog(ctx context.Context, g *globals, stderr io.Writer) (*backlogEnv, error) {
	e, err := openLane(g)
	if err != nil {
		return nil, err
	}
	return openBacklogLane(ctx, e, stderr)
}

// gitOptions are the options of the lane's clone: the GitHub token
// variable (github.tokenEnv) is held back from every git call but those
// that reach origin, as gitops holds back GITHUB_TOKEN and GH_TOKEN, and
// every other secret (config.SecretEnvNames: sink URLs, model keys) from
// all of them.
func (e *laneEnv) gitOptions(logger *slog.Logger) gitops.Options {
	return gitops.Options{Logger: logger, Credentials: []string{e.cfg.GitHub.TokenEnv}, Secrets: e.cfg.SecretEnvNames(os.Environ())}
}

func openBacklogLane(ctx context.Context, e *laneEnv, stderr io.Writer) (*backlogEnv, error) {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	repo, err := gitops.Open(ctx, e.lane.RepoRoot, e.gitOptions(logger))
	if err != nil {
		return nil, fmt.Errorf("backlog mode needs a git repository with an origin: %w", err)
	}
	if err := checkOrigin(ctx, repo); err != nil {
		return nil, err
	}
	src, err := openSource(ctx, e, repo, logger)
	if err != nil {
		return nil, err
	}
	return &backlogEnv{laneEnv: e, src: src, git: repo, logger: logger}, nil
}

func openSource(ctx context.Context, e *laneEnv, repo *gitops.Repo, logger *slog.Logger) (forge.Source, error) {
	cfg := e.cfg
	if cfg.SourceKind() == config.SourceGitHub {
		env := cfg.GitHub.TokenEnv
		token := os.Getenv(env)
		if token == "" {
			return nil, fmt.Errorf("backlog source github (%s/%s): set $%s to a token (github.tokenEnv)", cfg.GitHub.Owner, cfg.GitHub.Repo, env)
		}
		return forge.NewGitHub(forge.GitHubOptions{Owner: cfg.GitHub.Owner, Repo: cfg.GitHub.Repo, APIURL: cfg.GitHub.APIURL,
			Token: token, Logger: logger, Login: cfg.GitHub.Login})
	}
	dir, err := localIssueDir(e)
	if err != nil {
		return nil, err
	}
	base, err := localBase(ctx, repo, cfg.GitHub.BaseBranch)
	if err != nil {
		return nil, err
	}
	return forge.NewLocal(forge.LocalOptions{Dir: dir,
		StateDir: filepath.Join(e.lane.RepoRoot, e.lane.StateRoot, "backlog-local"), Base: base})
}

func newBacklogRunCmd(g *globals) *cobra.Command {
	f := &backlogFlags{}
	c := &cobra.Command{
		Use:   "run",
		Short: "Claim, dispatch, supervise and merge: one worker per issue in its own worktree, one final PR (resumes an open run)",
		Long: `Claim the selected issues, cut the wave branch, run one worker per issue in
its own worktree and tmux session (backlog-i<N> on the lane socket), merge each
finished worker into the wave branch one at a time and end with one pull
request. Before anything is claimed or pushed, tmux >= 3.2, git >= 2.38 and the
worker executor (backlog.executor, or --executor) are checked — on a kubernetes
lane git and the cluster (permissions included) instead: exit 1, or 43 when the
executor is unusable. The lane's dashboard session shows the backlog
view (tmux -L <socket> attach -t dashboard) unless --no-dashboard. A run that
was interrupted or stopped is resumed by running this again; a run paused by
` + "`backlog stop`" + ` exits 0. --issues naming an issue the source does not have is
refused (exit 2) before anything is created. --detach runs it as submit runs a
launch: after these checks it is queued on the lane (behind an active run) and
started in tmux session "launcher" on the lane socket, and the command returns
at once with its run id; follow it with wait --run-id and backlog status.`,
		Example: `  wave-orchestrator backlog run --issues 12,15,18
  wave-orchestrator backlog run --unbounded --max-issues 10 --max-minutes 120
  wave-orchestrator backlog run    # after a crash or stop: resume the open run
  id=$(wave-orchestrator backlog run --issues 12,15 --detach --json | jq -r .runId) && wave-orchestrator wait --run-id "$id"`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runBacklog(c, g, f) },
	}
	f.selection(c)
	fl := c.Flags()
	fl.Int("max-issues", 0, "unbounded: stop taking new issues after this many")
	bindConfig(c, "max-issues", "backlog.maxIssues")
	fl.Int("max-minutes", 0, "unbounded: stop taking new issues after this many minutes")
	bindConfig(c, "max-minutes", "backlog.maxMinutes")
	fl.StringVar(&f.slug, "slug", "", "wave branch name part: wave/<date>-<slug> (default backlog)")
	fl.String("base", "", "branch the wave is cut from and the final PR targets (default: the default branch)")
	bindConfig(c, "base", "github.baseBranch")
	fl.StringVar(&f.executor, "executor", "", "executor for workers (default backlog.executor.id, else executors.default)")
	fl.BoolVar(&f.noDash, "no-dashboard", false, "do not start the dashboard tmux session")
	fl.BoolVar(&f.detach, "detach", false, "queue the run and start it detached (tmux session launcher); print its run id and return")
	fl.BoolVar(&g.json, "json", false, "with --detach: print {runId, lane, statePath, queued} as JSON")
	return c
}

func runBacklog(c *cobra.Command, g *globals, f *backlogFlags) error {
	ctx := c.Context()
	var nums []int
	if f.issues != "" || f.unbounded {
		var err error
		if nums, err = f.numbers(); err != nil {
			return err
		}
	}
	if err := checkWidth(c); err != nil {
		return err
	}
	e, err := openLane(g)
	if err != nil {
		return err
	}
	open, err := runlog.OpenDir(e.layout.StateDir)
	if err != nil {
		return err
	}
	if open == "" && nums == nil && !f.unbounded {
		return usageError{errors.New("no open backlog run to resume; say which issues: --issues 12,15,18 or --unbounded")}
	}
	if open != "" {
		if err := sameSelection(c, open, nums, f); err != nil {
			return err
		}
	} else if d, ok, err := supervisor.Delivered(e.layout.StateDir, nums); err != nil {
		return err
	} else if ok {
		// Touching nothing: no claim, no push, no new run.
		fmt.Fprintf(c.OutOrStdout(), "backlog: issue(s) %s %s\n", issueRefs(nums), oneLineTitle(d.String()))
		return nil
	}
	// Nothing is claimed, pushed or started before this passes.
	if err := preflightBacklog(ctx, e, f.executor); err != nil {
		return err
	}
	be, err := openBacklogLane(ctx, e, c.ErrOrStderr())
	if err != nil {
		return err
	}
	base := be.cfg.GitHub.BaseBranch
	if open == "" {
		if err := checkIssuesExist(ctx, be, nums); err != nil {
			return err
		}
	} else if r, _, err := runlog.Read(open); err == nil {
		base = r.Info.Base
	}
	warnUnpushed(ctx, be, base, c.ErrOrStderr())
	bin, err := self()
	if err != nil {
		return err
	}
	if f.detach {
		return detachBacklog(c, g, e, bin)
	}
	var runID string
	d := laneDrive{holder: "another launcher or supervisor", dashboard: !f.noDash, view: []string{"--view", viewBacklog}, logger: be.logger,
		stopped: supervisor.ErrStopped,
		onStopped: func() error {
			// A pause someone asked for is not a failure: exit 0.
			fmt.Fprintf(c.OutOrStdout(), "backlog run %s paused on request (workers stopped; worktrees, branches and claims kept); `backlog run` resumes it\n", runID)
			return nil
		},
		who: "supervisor", agents: "workers", again: "`backlog run` resumes", inPods: "in their pods",
		// Workers run on the lane's backend: tmux sessions, or one pod per
		// issue, each cloning origin (runtime.backend kubernetes).
		watch: func(wr *runs.Runs) string {
			if wr.Kubernetes() {
				return "watch a worker: wave-orchestrator attach --issue <issue> (its pod)"
			}
			return fmt.Sprintf("watch a worker: tmux -L %s attach -t %s", be.layout.Socket(), supervisor.SessionPrefix+"<issue>")
		},
	}
	return d.run(ctx, c, e, bin, func(ctx context.Context, wr *runs.Runs) (int, error) {
		sup, err := supervisor.New(supervisor.Options{Config: be.cfg, Lane: be.lane, Layout: be.layout, Source: be.src, Git: be.git,
			Runs: wr, Self: wr.AgentBinary(), Issues: nums, Slug: f.slug, Executor: f.executor, Out: c.OutOrStdout(), Logger: be.logger})
		if err != nil {
			return exitcode.Failed, err
		}
		res, err := sup.Run(ctx)
		runID = res.RunID
		return res.ExitCode, err
	})
}

// detachBacklog queues this `backlog run` (its flags but --detach and
// --json) as a submitted run, as the MCP server's submit does: the same
// queue, watcher and records as a submitted launch.
func detachBacklog(c *cobra.Command, g *globals, e *laneEnv, bin string) error {
	var args []string
	for _, a := range forwardedArgs(c.Flags()) {
		if !strings.HasPrefix(a, "--detach=") && !strings.HasPrefix(a, "--json=") {
			args = append(args, a)
		}
	}
	rec, busy, err := enqueueRun(c.Context(), e, bin, "backlog", append([]string{"run"}, args...), false)
	if err != nil {
		return err
	}
	return printSubmitted(c.OutOrStdout(), g.json, rec, submitted.Open(e.layout).Path(rec.RunID), busy)
}

// preflightBacklog checks, before anything is claimed or pushed, that this
// machine can run the workers: tmux >= 3.2, git >= 2.38, the worker
// executor (resolved as the workers resolve it) usable. Exit 43 when the
// executor is not, else 1.
func preflightBacklog(ctx context.Context, e *laneEnv, cliExecutor string) error {
	res, err := supervisor.ResolveWorker(e.cfg, e.lane, cliExecutor)
	if err != nil {
		return err
	}
	if e.lane.Runtime.UsesKubernetes() {
		// The workers run in pods: tmux and their executor are the
		// image's, not this machine's; the cluster is checked instead,
		// as a launch checks it (a missing permission would otherwise
		// surface mid-run, e.g. payload Secrets left behind).
		ps := preflight.System().Check(ctx, preflight.Needs{Git: true})
		ps = append(ps, preflight.ClusterProblems(preflight.Cluster(ctx, e.lane, runs.KubeOptions))...)
		if len(ps) > 0 {
			return withCode(exitcode.Failed, &preflight.Error{What: "backlog run lane " + e.lane.Name, Problems: ps})
		}
		return nil
	}
	need, ok := launcher.ExecutorNeed(res, executor.ScrubList(e.lane))
	err = preflight.System().Backlog(ctx, need, ok, "backlog run lane "+e.lane.Name)
	var pe *preflight.Error
	if errors.As(err, &pe) {
		return withCode(pe.ExitCode(), err)
	}
	return err
}

// sameSelection refuses a `backlog run` whose selection differs from the
// open run it would resume: silently resuming and ignoring --issues,
// --slug or --width would report "done" for work never started.
func sameSelection(c *cobra.Command, dir string, nums []int, f *backlogFlags) error {
	r, _, err := runlog.Read(dir)
	if err != nil {
		return err
	}
	in := r.Info
	var diff []string
	if (nums != nil || f.unbounded) && !slices.Equal(nums, in.Bounded) {
		diff = append(diff, fmt.Sprintf("--issues %s (the open run has %s)", issueList(nums), issueList(in.Bounded)))
	}
	for _, fl := range []struct {
		name string
		same bool
	}{
		{"slug", strings.Contains(in.WaveBranch, "-"+gitops.BranchSlug(f.slug, 40))},
		{"width", intFlag(c, "width") == in.Width}, {"base", strFlag(c, "base") == in.Base},
		{"max-issues", intFlag(c, "max-issues") == in.MaxIssues}, {"max-minutes", intFlag(c, "max-minutes") == in.MaxMinutes},
	} {
		if c.Flags().Changed(fl.name) && !fl.same {
			diff = append(diff, "--"+fl.name)
		}
	}
	if len(diff) == 0 {
		return nil
	}
	return usageError{fmt.Errorf("backlog run %s is still open; %s would not apply to it. Run `backlog run` with no selection to resume it, or `backlog stop --finish` to end it first",
		in.ID, strings.Join(diff, ", "))}
}

func issueList(ns []int) string {
	if len(ns) == 0 {
		return "unbounded"
	}
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

// issueRefs is "#12, #15".
func issueRefs(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = "#" + strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}

func intFlag(c *cobra.Command, name string) int {
	v, _ := c.Flags().GetInt(name)
	return v
}

func strFlag(c *cobra.Command, name string) string {
	v, _ := c.Flags().GetString(name)
	return v
}

// openLaneRun resolves the lane and its backlog run named by --run (the
// newest when empty).
func openLaneRun(g *globals, run string) (*laneEnv, string, error) {
	e, err := openLane(g)
	if err != nil {
		return nil, "", err
	}
	dir, err := runlog.Find(e.layout.StateDir, run)
	return e, dir, err
}
