package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runs"
	"github.com/wave-orchestrator/wave-orchestrator/supervisor"
)

func newBacklogStopCmd(g *globals) *cobra.Command {
	var run string
	var finish bool
	c := &cobra.Command{
		Use:   "stop",
		Short: "Ask the lane's backlog supervisor to stop: workers are terminated, worktrees and claims kept; `backlog run` resumes",
		Example: `  wave-orchestrator backlog stop            # pause; backlog run resumes
  wave-orchestrator backlog stop --finish   # end now with what merged`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			e, dir, err := openLaneRun(g, run)
			if err != nil {
				return err
			}
			if err := supervisor.RequestStop(dir, finish); err != nil {
				return err
			}
			what := "stop (workers stopped, worktrees and claims kept; `backlog run` resumes)"
			if finish {
				what = "finish now (ready work merged, the rest parked, final PR opened)"
			}
			fmt.Fprintf(c.OutOrStdout(), "asked backlog run %s to %s\n", filepath.Base(dir), what)
			if lanes.Held(e.layout.LockPath()) {
				return nil
			}
			// No supervisor is alive to act on the request: stop its
			// workers here; the request tells the next `backlog run`.
			bin, err := self()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithCancel(c.Context())
			defer cancel()
			// On kubernetes, Terminate deletes each worker's Job and pod.
			wr, err := runs.Open(ctx, e.lane, e.layout, bin, nil)
			if err != nil {
				return err
			}
			grace := time.Duration(e.lane.Runtime.TerminateGraceMs) * time.Millisecond
			n, err := supervisor.StopWorkers(ctx, dir, wr, grace)
			fmt.Fprintf(c.OutOrStdout(), "no supervisor is running on this lane: stopped %d worker(s); `backlog run` resumes the run\n", n)
			return err
		},
	}
	c.Flags().StringVar(&run, "run", "", "backlog run id (default: the newest)")
	c.Flags().BoolVar(&finish, "finish", false, "end the run instead of pausing it: merge what is ready, park the rest, open the final PR")
	return c
}

func newBacklogCloseCmd(g *globals) *cobra.Command {
	var run string
	c := &cobra.Command{
		Use:     "close",
		Short:   "Close a run's merged issues once its final PR is merged (for a base that is not the default branch)",
		Example: `  wave-orchestrator backlog close --run 20261201T090000Z-backlog-3f9a1c`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			be, err := openBacklog(c.Context(), g, c.ErrOrStderr())
			if err != nil {
				return err
			}
			dir, err := runlog.Find(be.layout.StateDir, run)
			if err != nil {
				return err
			}
			n, err := supervisor.Close(c.Context(), dir, be.src, be.git, be.cfg, c.OutOrStdout())
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "closed %d issue(s)\n", n)
			return nil
		},
	}
	c.Flags().StringVar(&run, "run", "", "backlog run id (default: the newest)")
	return c
}
