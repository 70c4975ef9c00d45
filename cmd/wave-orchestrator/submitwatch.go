package main

import (
	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/submitted"
)

// newSubmitWatchCmd is the watcher `submit` starts in the launcher
// session: it runs the lane's queued runs one at a time, each as a child
// launcher, and restarts a launcher that dies by a signal once.
func newSubmitWatchCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:    "submit-watch",
		Short:  "Run the lane's submitted runs (started by submit; not for direct use)",
		Hidden: true,
		Example: `  # started by submit in the lane's launcher session:
  wave-orchestrator --repo-root /src/app --lane main submit-watch`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			e, err := openLane(g)
			if err != nil {
				return err
			}
			bin, err := self()
			if err != nil {
				return err
			}
			w := submitted.Watcher{Queue: submitted.Open(e.layout), Out: c.OutOrStdout(),
				Launcher: []string{bin, "--repo-root", e.lane.RepoRoot, "--lane", e.lane.Name}}
			return w.Run(c.Context())
		},
	}
}
