package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

func newStopCmd(g *globals) *cobra.Command {
	var agent string
	var keepDashboard bool
	c := &cobra.Command{
		Use:   "stop",
		Short: "Terminate a lane's runs (TERM, grace, KILL) and kill their sessions",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			e, err := openLane(g)
			if err != nil {
				return err
			}
			// A live launcher is asked to stop through its control file;
			// its lock is never taken from it.
			if agent == "" && lanes.Held(e.layout.LockPath()) {
				if err := jsonfile.Write(e.layout.ControlPath(), map[string]any{"stop": true, "requestedAt": time.Now().UTC()}); err != nil {
					return err
				}
				fmt.Fprintln(c.OutOrStdout(), "asked the running launcher to stop")
			}
			tm := tmuxadapter.New(e.layout.Socket())
			backend := runtime.NewTmuxBackend(tm, "", nil)
			grace := time.Duration(e.lane.Runtime.TerminateGraceMs) * time.Millisecond
			// Run records, not events, say what is in flight: a run whose
			// launcher died before recording it is still found.
			dirs, _ := filepath.Glob(filepath.Join(e.layout.StateDir, "waves", "*", "runs", "*"))
			n := 0
			for _, d := range dirs {
				rec, err := runtime.ReadRecord(filepath.Join(d, lanes.RuntimeFile))
				if err != nil || agent != "" && rec.AgentID != agent {
					continue
				}
				if rec.TerminalDisposition != runtime.Running && rec.TerminalDisposition != runtime.Launching {
					continue
				}
				if err := backend.Terminate(ctx, d, grace, false); err != nil {
					fmt.Fprintf(c.ErrOrStderr(), "%s: %v\n", rec.RunID, err)
					continue
				}
				n++
				fmt.Fprintf(c.OutOrStdout(), "terminated %s (session %s)\n", rec.RunID, rec.SessionName)
			}
			if agent == "" && !keepDashboard {
				_ = tm.KillSession(context.WithoutCancel(ctx), lanes.DashboardSession)
			}
			if agent != "" && n == 0 {
				return fmt.Errorf("no running run of agent %s on lane %s", agent, e.lane.Name)
			}
			fmt.Fprintf(c.OutOrStdout(), "%d run(s) terminated\n", n)
			return nil
		},
	}
	c.Flags().StringVar(&agent, "agent", "", "stop only this agent's run")
	c.Flags().BoolVar(&keepDashboard, "keep-dashboard", false, "leave the dashboard session")
	return c
}
