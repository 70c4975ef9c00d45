package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/dashboard"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/supervisor"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// resumeSession is where the dashboard's retry key runs `resume`, on the
// lane socket, so the launcher outlives the dashboard and its output can
// be attached to.
const resumeSession = "resume"

// Views of the dashboard command's --view.
const (
	viewWaves   = "waves"
	viewBacklog = dashboard.BacklogViewName
)

func newDashboardCmd(g *globals) *cobra.Command {
	wave, watch, view := -1, false, ""
	c := &cobra.Command{
		Use:   "dashboard",
		Short: "Show the lane's live dashboard (--watch), or print one frame",
		Long: `Show the lane's dashboard: header, progress, agents, closure stages, open
blockers and the last events. Without --watch one frame is printed (for
scripts and CI). With --watch the view refreshes on every change of the lane
state and shows the selected agent's output beside or under the table.

Keys (? lists them all): ↑/↓ or k/j select an agent; enter attaches to its tmux
session (C-b L, or C-b d outside tmux, comes back); l shows its output full
screen; pgup/pgdn, ctrl+u/ctrl+d, g/G scroll the output; / filters agents; x
stops the selected agent's run (stop --agent); r resumes a wave no launcher is
running (resume --wave N, in tmux session "resume"); [ and ] switch waves.
tab switches to the backlog view when the lane has backlog runs: the newest
run's header and tally (merged / in flight / blocked / needs-input), one row
per issue with its worker's progress, the batched needs-input questions and
the selected worker's output; enter attaches to that worker's session.
--view backlog shows it first (and, without --watch, prints one frame of
it); with --watch and no --view it comes first while a backlog run is open.
q quits — inside the lane's dashboard session it detaches instead and the
dashboard keeps running; Q or ctrl+c quit there and end the session.

The dashboard session that launch starts outlives the launch: the final frame
and a result line stay until you quit it, ` + "`stop`" + ` clears it, or the next
launch replaces it.`,
		Example: `  wave-orchestrator dashboard --watch      # live, interactive
  wave-orchestrator dashboard              # one frame, for scripts and CI
  wave-orchestrator dashboard -w 2         # one frame of wave 2
  wave-orchestrator dashboard --view backlog   # one frame of the newest backlog run`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if wave < -1 {
				return usageError{fmt.Errorf("--wave %d: must be a wave number", wave)}
			}
			if view != "" && view != viewWaves && view != viewBacklog {
				return usageError{fmt.Errorf("--view %q: want %s or %s", view, viewWaves, viewBacklog)}
			}
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			l, e, err := loadLaneState(ctx, g)
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			if !watch && view == viewBacklog {
				st, ok, err := newBacklogLoader(ctx, e)(ctx)
				if err != nil {
					return err
				}
				_, err = fmt.Fprint(out, dashboard.BacklogFrame(st, ok, outWidth(out), outColor(out), time.Now()))
				return err
			}
			if !watch {
				_, err := fmt.Fprint(out, dashboard.Frame(l, wave, outWidth(out), outColor(out), time.Now()))
				return err
			}
			return watchDashboard(ctx, g, e, wave, view, out)
		},
	}
	waveVar(c, &wave, "wave", "w", -1, "show wave `N` (default: the latest)")
	c.Flags().BoolVar(&watch, "watch", false, "keep the view live and interactive")
	c.Flags().StringVar(&view, "view", "", "view shown first: waves or backlog (default: backlog while a backlog run is open, else waves)")
	_ = c.RegisterFlagCompletionFunc("view", cobra.FixedCompletions([]string{viewWaves, viewBacklog}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// newBacklogLoader reads the lane's newest backlog run through
// supervisor.Status — the reducer `backlog status` renders — with live
// worktree facts from the repository when it opens. Its git calls hold
// back the lane's secrets as the supervisor's do (gitOptions): they read
// workers' checkouts.
func newBacklogLoader(ctx context.Context, e *laneEnv) dashboard.BacklogLoader {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil)) // never onto the dashboard's screen
	layout := e.layout
	repo, _ := gitops.Open(ctx, layout.RepoRoot, e.gitOptions(quiet))
	return func(ctx context.Context) (backlog.StatusView, bool, error) {
		dirs, err := runlog.List(layout.StateDir)
		if err != nil || len(dirs) == 0 {
			return backlog.StatusView{}, false, err
		}
		v, err := supervisor.Status(ctx, dirs[len(dirs)-1], repo, lanes.Held(layout.LockPath()), time.Now())
		if err != nil {
			return backlog.StatusView{}, false, err
		}
		return v, true, nil
	}
}

// backlogViews adds the backlog view when it is asked for or the lane has
// a backlog run, and shows it first when asked or (view "") while a run
// is open; a lane that never ran backlog mode keeps the wave view alone.
func backlogViews(ctx context.Context, cfg *dashboard.Config, e *laneEnv, view string) dashboard.BacklogLoader {
	layout := e.layout
	runs, _ := runlog.List(layout.StateDir)
	if view != viewBacklog && len(runs) == 0 {
		return nil
	}
	load := newBacklogLoader(ctx, e)
	cfg.Views = append(cfg.Views, dashboard.NewBacklogView(*cfg, load))
	open, _ := runlog.OpenDir(layout.StateDir)
	if view == viewBacklog || view == "" && open != "" {
		cfg.First = viewBacklog
	}
	return load
}

// watchDashboard runs the live view: interactive on a terminal (a tmux
// pane included), frame-per-change otherwise.
func watchDashboard(ctx context.Context, g *globals, e *laneEnv, wave int, view string, out io.Writer) error {
	cfg := dashboardConfig(ctx, g, e.layout, wave)
	f, isFile := out.(*os.File)
	interactive := isFile && dashboard.IsTerminal(f) && dashboard.IsTerminal(os.Stdin)
	if interactive {
		cfg.Color = dashboard.ColorFor(f)
	}
	load := backlogViews(ctx, &cfg, e, view)
	switch {
	case interactive:
		return dashboard.Run(ctx, cfg, os.Stdin, f)
	case cfg.First == viewBacklog:
		return dashboard.RunPlainBacklog(ctx, cfg, load, outWidth(out), out)
	}
	return dashboard.RunPlain(ctx, cfg, outWidth(out), out)
}

// dashboardConfig wires the view to the lane: the one loader, the lane
// state dir, attach through tmuxadapter on the lane socket, and the stop
// and resume keys through this binary's own commands.
func dashboardConfig(ctx context.Context, g *globals, layout lanes.Layout, wave int) dashboard.Config {
	socket := layout.Socket()
	client := tmuxadapter.New(socket)
	inside := dashboard.InsideLaneTmux(os.Getenv("TMUX"), socket)
	cfg := dashboard.Config{
		Load: func(ctx context.Context) (state.Lane, error) {
			l, _, err := loadLaneState(ctx, g)
			return l, err
		},
		StateDir: layout.StateDir,
		Wave:     wave,
		Attach: func(session string) *exec.Cmd {
			return dashboard.AttachCommand(client.AttachArgv(session, inside), inside)
		},
		Back:       backHint(os.Getenv("TMUX"), inside),
		HasSession: client.HasSession,
		Questions: func(context.Context) ([]questions.Question, error) {
			qs, _, err := questions.List(layout)
			return qs, err
		},
		Answer: func(ctx context.Context, id, text string) (string, error) {
			return answerFromDashboard(ctx, g, id, text)
		},
	}
	if bin, err := self(); err == nil {
		cfg.AttachAgent = func(agent string) *exec.Cmd {
			return exec.Command(bin, "--repo-root", layout.RepoRoot, "--lane", layout.Lane, "attach", "--agent", agent)
		}
		cfg.AttachIssue = func(n int) *exec.Cmd {
			return exec.Command(bin, "--repo-root", layout.RepoRoot, "--lane", layout.Lane, "attach", "--issue", strconv.Itoa(n))
		}
		cfg.StopAgent = func(ctx context.Context, agent string) (string, error) {
			return stopAgent(ctx, bin, layout, agent)
		}
		cfg.Resume = func(ctx context.Context, n int) (string, error) {
			return startResume(ctx, client, bin, layout, n)
		}
	}
	if inDashboardSession(ctx, client, inside, os.Getenv("TMUX_PANE")) {
		cfg.Detach = func(ctx context.Context) error {
			_, err := client.DetachClient(ctx, lanes.DashboardSession)
			return err
		}
		cfg.EndSession = func(ctx context.Context) { _ = client.KillSession(ctx, lanes.DashboardSession) }
	}
	return cfg
}

// backHint is how a user returns from an agent's session to the
// dashboard: switch-client moved the client (C-b L goes to the last
// session); otherwise attach-session runs until the client detaches — in
// another tmux, that nested client's prefix is C-b C-b.
func backHint(tmuxEnv string, insideLane bool) string {
	switch {
	case insideLane:
		return "C-b L"
	case tmuxEnv != "":
		return "C-b C-b d"
	}
	return "C-b d"
}

// inDashboardSession reports whether this process runs in the lane's
// dashboard session, where q should detach rather than leave a dead pane.
func inDashboardSession(ctx context.Context, client *tmuxadapter.Client, insideLane bool, pane string) bool {
	if !insideLane || pane == "" {
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := client.PaneSession(cctx, pane)
	return err == nil && s == lanes.DashboardSession
}

// stopAgent runs `stop --agent` — the very command a user would — and
// returns its first line of output.
func stopAgent(ctx context.Context, bin string, layout lanes.Layout, agent string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, "--repo-root", layout.RepoRoot, "--lane", layout.Lane, "stop", "--agent", agent)
	out, err := cmd.CombinedOutput()
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if err != nil {
		if first == "" {
			return "", err
		}
		return "", errors.New(first)
	}
	return first, nil
}

// startResume runs `resume --wave n` in the lane's resume session. It
// refuses while a launcher holds the lane or an earlier resume still
// runs there; the dead pane of a finished one is replaced.
func startResume(ctx context.Context, client *tmuxadapter.Client, bin string, layout lanes.Layout, n int) (string, error) {
	if lanes.Held(layout.LockPath()) {
		return "", fmt.Errorf("a launcher holds lane %s; it retries failed agents itself", layout.Lane)
	}
	if ok, _ := client.HasSession(ctx, resumeSession); ok {
		if p, err := client.PaneInfo(ctx, resumeSession); err == nil && !p.Dead {
			return "", fmt.Errorf("a resume is still running in tmux session %s", resumeSession)
		}
		if err := client.KillSession(ctx, resumeSession); err != nil {
			return "", err
		}
	}
	argv := []string{bin, "--repo-root", layout.RepoRoot, "--lane", layout.Lane, "resume", "--wave", fmt.Sprint(n)}
	if err := client.NewSession(ctx, tmuxadapter.SessionSpec{Name: resumeSession, Window: resumeSession, Argv: argv,
		Cwd: layout.RepoRoot, Options: map[string]string{"@wave_lane": layout.Lane}}); err != nil {
		return "", fmt.Errorf("start resume of wave %d: %w", n, err)
	}
	return fmt.Sprintf("resuming wave %d in tmux session %s (tmux -L %s attach -t %s)", n, resumeSession, layout.Socket(), resumeSession), nil
}

// answerFromDashboard is the dashboard's a key: the question answered as
// `answer ID TEXT` would, by the user running the dashboard (never
// forced: one answered meanwhile is refused).
func answerFromDashboard(ctx context.Context, g *globals, id, text string) (string, error) {
	e, err := openLane(g)
	if err != nil {
		return "", err
	}
	// Nothing onto the dashboard's screen.
	q, err := newAnswerer(e, io.Discard)(ctx, id, text, defaultOperator())
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("answered %s (%s)", q.ID, q.Where()), nil
}
