package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/dashboard"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

func newDashboardCmd(g *globals) *cobra.Command {
	wave, watch := -1, false
	c := &cobra.Command{
		Use:   "dashboard",
		Short: "Show the lane's live dashboard (--watch), or print one frame",
		Long: `Show the lane's dashboard: header, progress, agents, closure stages, open
blockers and the last events. Without --watch one frame is printed (for
scripts and CI). With --watch the view refreshes on every change of the lane
state; keys: ↑/↓ or k/j select an agent, enter attaches to its tmux session,
l shows its log tail, q quits.`,
		Example: `  wave-orchestrator dashboard --watch      # live, interactive
  wave-orchestrator dashboard              # one frame, for scripts and CI
  wave-orchestrator dashboard -w 2         # one frame of wave 2`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if wave < -1 {
				return usageError{fmt.Errorf("--wave %d: must be a wave number", wave)}
			}
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			l, layout, err := loadLaneState(ctx, g)
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			if !watch {
				_, err := fmt.Fprint(out, dashboard.Frame(l, wave, outWidth(out), outColor(out), time.Now()))
				return err
			}
			return watchDashboard(ctx, g, layout, wave, out)
		},
	}
	waveVar(c, &wave, "wave", "w", -1, "show wave `N` (default: the latest)")
	c.Flags().BoolVar(&watch, "watch", false, "keep the view live and interactive")
	return c
}

// watchDashboard runs the live view: interactive on a terminal (a tmux
// pane included), frame-per-change otherwise.
func watchDashboard(ctx context.Context, g *globals, layout lanes.Layout, wave int, out io.Writer) error {
	cfg := dashboardConfig(g, layout, wave)
	f, isFile := out.(*os.File)
	if isFile && dashboard.IsTerminal(f) && dashboard.IsTerminal(os.Stdin) {
		cfg.Color = dashboard.ColorFor(f)
		return dashboard.Run(ctx, cfg, os.Stdin, f)
	}
	return dashboard.RunPlain(ctx, cfg, outWidth(out), out)
}

// dashboardConfig wires the view to the lane: the one loader, the lane
// state dir, and attach through tmuxadapter on the lane socket.
func dashboardConfig(g *globals, layout lanes.Layout, wave int) dashboard.Config {
	socket := layout.Socket()
	client := tmuxadapter.New(socket)
	inside := dashboard.InsideLaneTmux(os.Getenv("TMUX"), socket)
	return dashboard.Config{
		Load: func(ctx context.Context) (state.Lane, error) {
			l, _, err := loadLaneState(ctx, g)
			return l, err
		},
		StateDir: layout.StateDir,
		Wave:     wave,
		Attach: func(session string) *exec.Cmd {
			return dashboard.AttachCommand(client.AttachArgv(session, inside), inside)
		},
		HasSession: client.HasSession,
	}
}
