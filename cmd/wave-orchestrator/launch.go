package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/preflight"
	"github.com/wave-orchestrator/wave-orchestrator/retry"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/runs"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

type launchFlags struct {
	start, end   int
	autoNext     bool
	dryRun       bool
	manifestOut  string
	executor     string
	maxRetries   int
	staggerMs    int
	noDashboard  bool
	keepSessions bool
	phase        string
	agents       []string // resume --agent
	rerunProven  bool     // resume --rerun-proven
	ref          refFlags // the reference's flags (refflags.go)
}

func (f *launchFlags) register(c *cobra.Command, resume bool) {
	fl := c.Flags()
	fl.StringVar(&f.executor, "executor", "", "default executor for agents that name none (codex|claude|opencode|local|shell)")
	_ = c.RegisterFlagCompletionFunc("executor", completeExecutors)
	fl.Int("timeout-minutes", 0, "per-agent deadline in minutes (default 240)")
	bindConfig(c, "timeout-minutes", "runtime.timeoutMinutes")
	fl.IntVar(&f.maxRetries, "max-retries-per-wave", 1, "retries after the first attempt")
	fl.IntVar(&f.staggerMs, "agent-launch-stagger-ms", 0, "pause between agent launches")
	fl.BoolVar(&f.noDashboard, "no-dashboard", false, "do not start the dashboard tmux session")
	fl.BoolVar(&f.keepSessions, "keep-sessions", false, "keep agent tmux sessions after the wave (the dashboard session always stays)")
	if resume {
		waveVar(c, &f.start, "wave", "w", -1, "wave `N` to resume (required)")
		fl.StringVarP(&f.phase, "phase", "p", "", "phase to re-run with every later closure stage: "+strings.Join(roles.Phases, ", "))
		_ = c.RegisterFlagCompletionFunc("phase", completePhases)
		fl.StringArrayVarP(&f.agents, "agent", "a", nil, "re-run agent `ID` even if its last run is proven (repeatable); closure runs from the agent's stage, or from the start for an implementation agent")
		_ = c.RegisterFlagCompletionFunc("agent", completeAgents)
		fl.BoolVar(&f.rerunProven, "rerun-proven", false, "reuse no proven agent: every implementation agent the resume reaches runs again")
		f.ref.register(c, true)
		return
	}
	flagHint(c, "wave", "--start-wave N --end-wave N runs wave N alone (resume --wave N picks a wave up again)")
	waveVar(c, &f.start, "start-wave", "", 0, "first wave `N` to run")
	waveVar(c, &f.end, "end-wave", "", -1, "last wave `N` to run (default: the last wave)")
	fl.BoolVar(&f.autoNext, "auto-next", false, "start at the first wave not yet completed")
	fl.BoolVar(&f.dryRun, "dry-run", false, "write prompts, launch previews and the manifest; start nothing")
	fl.StringVar(&f.manifestOut, "manifest-out", "", "write the wave manifest here (dry-run default: <state>/dry-run/waves.manifest.json)")
	f.ref.register(c, false)
}

func newLaunchCmd(g *globals) *cobra.Command {
	f := &launchFlags{}
	c := &cobra.Command{
		Use:   "launch",
		Short: "Run waves: every agent in its own tmux session, gated, with staged closure and retries",
		Long: `Run the lane's waves from --start-wave to --end-wave (or the first not yet
completed, --auto-next). Before anything starts, tmux and every executor the
waves need are checked (exit 1, or 43 when an executor is unusable); on a
kubernetes lane the cluster is checked instead of the executors (reachable,
namespace, each permission the launcher needs: docs/kubernetes.md). Each
agent runs in tmux session w<N>-<AGENT> on the lane's socket; the command
prints how to watch each one. Exit codes: 0 passed, 1 failed, 2 usage,
32 lane locked, 42 only cont-QA failed, 43 needs a person.`,
		Example: `  wave-orchestrator launch --lane main
  wave-orchestrator launch --start-wave 2 --end-wave 3 --no-dashboard
  wave-orchestrator launch --auto-next
  wave-orchestrator launch --dry-run --manifest-out manifest.json
  wave-orchestrator launch --executor local     # every agent that names none runs the built-in agent`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if f.end >= 0 && f.end < f.start && !f.autoNext {
				return usageError{fmt.Errorf("--end-wave %d is before --start-wave %d", f.end, f.start)}
			}
			return runLaunch(c.Context(), c, g, f, false)
		},
	}
	f.register(c, false)
	return c
}

func newResumeCmd(g *globals) *cobra.Command {
	f := &launchFlags{}
	c := &cobra.Command{
		Use:   "resume",
		Short: "Pick a wave up again: re-run a phase and every later closure stage",
		Long: `Pick wave N up again. With --phase, re-run that phase and every later
closure stage: implementation re-runs every implementation agent, design
the design stewards and the implementation agents not proven (last run
passed with the same prompt), a closure phase that stage and the later ones.
Without --phase, follow the resume plan from the recorded state (re-run
what is not proven), or continue an interrupted run, adopting its live
agents. --agent ID re-runs that agent too, proven or not; --rerun-proven
reuses no proven agent.`,
		Example: `  wave-orchestrator resume --wave 0
  wave-orchestrator resume -w 0 --phase security-review
  wave-orchestrator resume -w 2 -p implementation --no-dashboard
  wave-orchestrator resume -w 1 --agent A2 --agent A3   # re-run two proven agents, then closure
  wave-orchestrator resume -w 1 --rerun-proven`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if f.start < 0 {
				return usageError{errors.New("--wave is required")}
			}
			if f.phase != "" {
				if err := roles.ValidPhase(f.phase); err != nil {
					return usageError{err}
				}
			}
			if f.rerunProven && slices.Contains(roles.ClosurePhases, f.phase) {
				return usageError{fmt.Errorf("--phase %s: %w", f.phase, retry.ErrRerunProvenClosure)}
			}
			if x := resumeControlConflict(f); x != "" {
				return usageError{fmt.Errorf("--resume-control-state follows the recorded resume plan; %s overrides it: give one", x)}
			}
			f.end = f.start
			return runLaunch(c.Context(), c, g, f, true)
		},
	}
	f.register(c, true)
	return c
}

func runLaunch(ctx context.Context, c *cobra.Command, g *globals, f *launchFlags, resume bool) error {
	if f.ref.stateFile == "" || f.ref.reconcile || f.dryRun {
		return runLaunchOnce(ctx, c, g, f, resume)
	}
	return withStateFile(f.ref.stateFile, g, resume, func() error { return runLaunchOnce(ctx, c, g, f, resume) })
}

func runLaunchOnce(ctx context.Context, c *cobra.Command, g *globals, f *launchFlags, resume bool) error {
	if err := f.ref.check(c); err != nil {
		return err
	}
	f.ref.announce(c, c.ErrOrStderr())
	e, err := openLane(g)
	if err != nil {
		return err
	}
	if err := checkProject(f.ref.project, e); err != nil {
		return err
	}
	if f.ref.reconcile {
		return reconcileStatus(ctx, e, c.OutOrStdout())
	}
	if f.ref.resumeControl && !resume {
		f.autoNext = true
	}
	ws, err := e.loadWaves()
	if err != nil {
		return err
	}
	bin, err := self()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(c.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	opt := launcher.Options{
		Layout: e.layout, Lane: e.lane, Waves: ws, StartWave: f.start, EndWave: f.end, AutoNext: f.autoNext,
		Executor: f.executor, MaxRetries: f.maxRetries, StaggerMs: f.staggerMs,
		KeepSessions: f.keepSessions, Self: runs.AgentBinary(e.lane, bin), ResumePhase: f.phase, Resume: resume,
		RerunAgents: f.agents, RerunProven: f.rerunProven,
		TimeoutSource: timeoutSource(e), Out: c.OutOrStdout(), Logger: logger,
	}
	sel, err := launcher.New(opt, nil).Selected()
	var se *launcher.SelectionError
	if errors.As(err, &se) {
		return usageError{fmt.Errorf("lane %s: %w", e.lane.Name, err)}
	} else if err != nil {
		return err
	}
	if err := checkRerunAgents(sel, f.agents); err != nil {
		return usageError{fmt.Errorf("lane %s: %w", e.lane.Name, err)}
	}
	if f.dryRun {
		return dryRun(c, e, opt, f.manifestOut)
	}
	if err := preflightWaves(ctx, e, sel, f.executor, c.CommandPath()); err != nil {
		return err
	}
	d := laneDrive{holder: "another launcher", dashboard: !f.noDashboard, logger: logger,
		// A stop request is for the launcher it found.
		held:    func() { _ = os.Remove(e.layout.ControlPath()) },
		stopped: launcher.ErrStopped,
		onStopped: func() error {
			return withCode(exitcode.Failed, fmt.Errorf("lane %s %w", e.lane.Name, launcher.ErrStopped))
		},
		who: "launcher", agents: "agents", again: "run `launch` again to adopt them", inPods: "as Kubernetes Jobs",
		watch: func(wr *runs.Runs) string {
			switch {
			case len(sel) == 0:
				return ""
			case wr.Kubernetes():
				return fmt.Sprintf("watch an agent: %s --repo-root %s --lane %s attach --agent <AGENT> (agents run as Kubernetes Jobs)",
					shellQuote(bin), shellQuote(e.lane.RepoRoot), e.lane.Name)
			}
			return fmt.Sprintf("watch an agent: tmux -L %s attach -t w<WAVE>-<AGENT>, or %s --repo-root %s --lane %s attach --agent <AGENT>",
				e.layout.Socket(), shellQuote(bin), shellQuote(e.lane.RepoRoot), e.lane.Name)
		},
	}
	return d.run(ctx, c, e, bin, func(ctx context.Context, wr *runs.Runs) (int, error) {
		opt.Self = wr.AgentBinary()
		res, err := launcher.New(opt, wr).Run(ctx)
		return res.ExitCode, err
	})
}

// checkRerunAgents refuses a resume --agent that names no agent of the
// wave, before anything starts.
func checkRerunAgents(sel []*wave.Wave, ids []string) error {
	for _, w := range sel {
		var have []string
		for _, a := range w.Agents {
			have = append(have, a.ID)
		}
		for _, id := range ids {
			if !slices.Contains(have, id) {
				return fmt.Errorf("wave %d has no agent %q (--agent); its agents are %s", w.Number, id, strings.Join(have, ", "))
			}
		}
	}
	return nil
}

// timeoutSource says where the lane's per-agent timeout came from, for
// each run's launch-preview.json: the flag, its variable, the config
// file's line, or the default.
func timeoutSource(e *laneEnv) string {
	if at := e.cfg.LaneKeySource(e.lane.Name, "runtime.timeoutMinutes"); at != "" {
		return at
	}
	return launcher.TimeoutFromDefault
}

func dryRun(c *cobra.Command, e *laneEnv, opt launcher.Options, manifestOut string) error {
	m, err := launcher.New(opt, nil).DryRun()
	if err != nil {
		return err
	}
	if manifestOut == "" {
		manifestOut = filepath.Join(e.layout.DryRun().StateDir, "waves.manifest.json")
	}
	b, err := m.Encode()
	if err != nil {
		return err
	}
	if err := jsonfile.MkdirAll(filepath.Dir(manifestOut)); err != nil {
		return err
	}
	if err := jsonfile.WriteFile(manifestOut, b); err != nil {
		return fmt.Errorf("manifest %s: %w", manifestOut, err)
	}
	fmt.Fprintf(c.OutOrStdout(), "[dry-run] manifest: %s\n", manifestOut)
	return nil
}

// preflightWaves checks, before anything starts, that this machine can
// run the selected waves: exit 43 when an executor is unusable, else 1.
// On a kubernetes lane the executors are the image's; the cluster is
// checked instead (reachable, namespace, the launcher's permissions).
func preflightWaves(ctx context.Context, e *laneEnv, sel []*wave.Wave, cliExecutor, what string) error {
	if len(sel) == 0 {
		return nil
	}
	needs, err := launcher.Needs(sel, e.lane, cliExecutor)
	if err != nil {
		return err
	}
	what = fmt.Sprintf("%s lane %s", strings.TrimPrefix(what, "wave-orchestrator "), e.lane.Name)
	err = preflight.Launch(ctx, needs, e.lane, runs.KubeOptions, what)
	var pe *preflight.Error
	if errors.As(err, &pe) {
		return withCode(pe.ExitCode(), err)
	}
	return err
}

// shellQuote quotes s for a command line a user copies.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '=' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
