package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/dashboard"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/supervisor"
)

func newBacklogStatusCmd(g *globals) *cobra.Command {
	var run string
	var asJSON bool
	c := &cobra.Command{
		Use:   "status",
		Short: "One snapshot of a backlog run: tally merged / in flight / blocked / needs-input, and every issue",
		Example: `  wave-orchestrator backlog status
  wave-orchestrator backlog status --run 20261201T090000Z-backlog-3f9a1c --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			e, dir, err := openLaneRun(g, run)
			if err != nil {
				return err
			}
			v, err := backlogStatusView(c.Context(), e, dir)
			if err != nil {
				return err
			}
			nt := runNotifications(dir)
			if asJSON {
				enc := json.NewEncoder(c.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(withNotifications{v, nt})
			}
			dashboard.RenderBacklogStatus(c.OutOrStdout(), v)
			_, err = fmt.Fprint(c.OutOrStdout(), notifyLine(nt))
			return err
		},
	}
	c.Flags().StringVar(&run, "run", "", "backlog run id (default: the newest)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the snapshot as JSON (docs/backlog-status-schema.md)")
	return c
}

// backlogStatusView is the `backlog status --json` document of the run in
// dir (also what `serve` answers on /api/v1/backlog).
func backlogStatusView(ctx context.Context, e *laneEnv, dir string) (backlog.StatusView, error) {
	repo, _ := gitops.Open(ctx, e.lane.RepoRoot, e.gitOptions(nil))
	return supervisor.Status(ctx, dir, repo, lanes.Held(e.layout.LockPath()), time.Now())
}
