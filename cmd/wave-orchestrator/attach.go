package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/dashboard"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// attachTail is how much of a log attach prints when the session is gone.
const attachTail = 200

func newAttachCmd(g *globals) *cobra.Command {
	var agentID string
	wave, dash, issue := -1, false, 0
	c := &cobra.Command{
		Use:   "attach (--agent ID [--wave N] | --issue N | --dashboard)",
		Short: "Attach to an agent's terminal (its tmux session or its pod) or the dashboard's; follow its log if there is none",
		Long: `Attach to an agent's tmux session on the lane socket, or switch to it when
already inside a client of that server (tmux's prefix, Ctrl-B d, detaches).
The agent is looked up in the latest wave that ran it (or --wave). When the
session is gone the run's agent.log is shown instead: its tail, then, while
the run is still in flight, new output until the run ends (or Ctrl-C).

A run on the kubernetes backend is attached to in its pod, through the API
server (the pod's attach subresource, as kubectl attach -it): you watch the
agent's terminal and type to it. Every key goes to the agent, Ctrl-C included,
which interrupts the agent as it would in its tmux pane. Ctrl-P Ctrl-Q
detaches and leaves the agent running (a Ctrl-P followed by another key reaches
the agent with that key). When the pod is gone or cannot be attached to (not
scheduled yet, starting, ended, cluster unreachable) attach says why and
shows the run's agent.log as above.

--issue N attaches to the tmux session of the backlog worker on issue N (in
the newest backlog run that took it), or to its pod on a kubernetes lane (as
--agent does, Ctrl-P Ctrl-Q detaching), or shows its agent.log when the
worker is not running.

--dashboard attaches to the dashboard session, or shows the dashboard here
when that session is not running.`,
		Example: `  wave-orchestrator attach --agent A1           # agent A1 of the latest wave that ran it
  wave-orchestrator attach -a A2 -w 3            # agent A2 of wave 3
  wave-orchestrator attach --issue 12            # the backlog worker on issue #12
  wave-orchestrator attach --dashboard           # the lane's dashboard session
  wave-orchestrator --lane side attach -a A1     # another lane`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if n := btoi(agentID != "") + btoi(dash) + btoi(issue != 0); n != 1 || issue < 0 {
				return usageError{errors.New("attach needs exactly one of --agent ID, --issue N or --dashboard")}
			}
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			e, err := openLane(g)
			if err != nil {
				return err
			}
			if dash {
				return attachDashboard(ctx, g, e, c.OutOrStdout(), c.ErrOrStderr())
			}
			if issue > 0 {
				return attachIssue(ctx, e, issue, c.OutOrStdout(), c.ErrOrStderr())
			}
			l, err := launcher.Status(ctx, e.layout)
			if err != nil {
				return err
			}
			return attachAgent(ctx, e, l, agentID, wave, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	c.Flags().StringVarP(&agentID, "agent", "a", "", "agent `ID` to attach to")
	_ = c.RegisterFlagCompletionFunc("agent", completeAgents)
	waveVar(c, &wave, "wave", "w", -1, "look the agent up in wave `N` (default: the latest wave that ran it)")
	c.Flags().BoolVar(&dash, "dashboard", false, "attach to the lane's dashboard session")
	c.Flags().IntVar(&issue, "issue", 0, "attach to the backlog worker on issue `N`")
	return c
}

func attachAgent(ctx context.Context, e *laneEnv, l state.Lane, id string, wave int, stdout, stderr io.Writer) error {
	w, a, err := dashboard.FindAgent(l, id, wave)
	if err != nil {
		return err
	}
	if a.RunDir != "" {
		if rec, err := runtime.ReadRecord(filepath.Join(a.RunDir, lanes.RuntimeFile)); err == nil && rec.SessionBackend == runtime.BackendKubernetes {
			return attachKube(ctx, e.lane, w, a, rec, stdout, stderr)
		}
	}
	client := tmuxadapter.New(e.layout.Socket())
	if a.SessionName != "" {
		ok, err := client.HasSession(ctx, a.SessionName)
		if err != nil {
			return fmt.Errorf("agent %s wave %d: session %s: %w", a.ID, w.Wave, a.SessionName, err)
		}
		if ok {
			return attachSession(client, a.SessionName)
		}
	}
	session := a.SessionName
	if session == "" {
		session = lanes.SessionName(w.Wave, a.ID)
	}
	if a.LogPath == "" {
		return fmt.Errorf("agent %s wave %d (%s): no tmux session and no run log yet", a.ID, w.Wave, a.State)
	}
	return showRunLog(ctx, w, a, fmt.Sprintf("session %s is gone from tmux socket %s", session, e.layout.Socket()), stdout, stderr)
}

// showRunLog is attach without a terminal to attach to: why says so, then
// the run's agent.log is shown, its tail and, while the run is in flight,
// new output until the run ends (or ctx is done).
func showRunLog(ctx context.Context, w state.Wave, a state.Agent, why string, stdout, stderr io.Writer) error {
	fmt.Fprintln(stderr, termtext.Escape(fmt.Sprintf("%s; showing agent %s's log %s", why, a.ID, a.LogPath)))
	lines, err := dashboard.LogTail(a.LogPath, attachTail)
	if err != nil {
		return fmt.Errorf("agent %s wave %d: %w", a.ID, w.Wave, err)
	}
	if len(lines) > 0 {
		fmt.Fprintln(stdout, strings.Join(lines, "\n"))
	}
	if a.State != state.AgentRunning && a.State != state.AgentLaunching {
		fmt.Fprintln(stderr, termtext.Escape(fmt.Sprintf("run %s is %s; nothing more will be written", a.RunDir, a.State)))
		return nil
	}
	fmt.Fprintln(stderr, "following new output until the run ends (Ctrl-C to stop)")
	var end runtime.State
	finished := func() bool {
		end = runtime.ObserveFiles(a.RunDir, time.Now()).Verdict.State
		return end != runtime.StateRunning && end != runtime.StateLaunching && end != runtime.StateUnknown
	}
	if err := dashboard.FollowLog(ctx, a.LogPath, stdout, finished); err != nil || ctx.Err() != nil {
		return err
	}
	fmt.Fprintln(stderr, termtext.Escape(fmt.Sprintf("run %s is %s; nothing more will be written", a.RunDir, end)))
	return nil
}

func attachDashboard(ctx context.Context, g *globals, e *laneEnv, stdout, stderr io.Writer) error {
	layout := e.layout
	client := tmuxadapter.New(layout.Socket())
	ok, err := client.HasSession(ctx, lanes.DashboardSession)
	if err != nil {
		return fmt.Errorf("dashboard session on %s: %w", layout.Socket(), err)
	}
	if ok {
		return attachSession(client, lanes.DashboardSession)
	}
	fmt.Fprintf(stderr, "no %s session on tmux socket %s; showing the dashboard here\n", lanes.DashboardSession, layout.Socket())
	return watchDashboard(ctx, g, e, -1, "", stdout)
}

// attachSession hands the terminal to tmux: attach-session, or
// switch-client from inside a client of the lane's server.
func attachSession(client *tmuxadapter.Client, session string) error {
	inside := dashboard.InsideLaneTmux(os.Getenv("TMUX"), client.Socket())
	cmd := dashboard.AttachCommand(client.AttachArgv(session, inside), inside)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("attach %s: %w", session, err)
	}
	return nil
}
