package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/dashboard"
)

func newStatusCmd(g *globals) *cobra.Command {
	wave := -1
	var runID string
	c := &cobra.Command{
		Use:   "status",
		Short: "Print one snapshot of the lane: waves, agents, closure stages, blockers",
		Long: `Print one snapshot of the lane's state. The text view is the dashboard's
wave block for every wave; --json prints the versioned lane state documented
in docs/status-schema.md.`,
		Example: `  wave-orchestrator status
  wave-orchestrator status -w 1
  wave-orchestrator status --json | jq '.waves[] | {wave, status}'
  wave-orchestrator --lane side status
  wave-orchestrator status --run-id "$id" --json   # one submitted run`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if wave < -1 {
				return usageError{fmt.Errorf("--wave %d: must be a wave number", wave)}
			}
			// status is one short read of many small records that exits
			// right after: collecting less often saves about a sixth of
			// its CPU on a lane of 200 runs (bench/status).
			debug.SetGCPercent(400)
			if runID != "" {
				return showRun(c, g, runID)
			}
			l, _, err := loadLaneState(c.Context(), g)
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			if g.json {
				return dashboard.WriteStatusJSON(out, l, wave)
			}
			o := dashboard.Options{Width: outWidth(out), Color: outColor(out), Now: time.Now(), Wave: wave, Selected: -1}
			_, err = fmt.Fprint(out, dashboard.RenderStatus(l, o))
			return err
		},
	}
	waveVar(c, &wave, "wave", "w", -1, "show only wave `N`")
	c.Flags().StringVar(&runID, "run-id", "", "show submitted run `ID`: state (queued, running, completed, failed, stopped), pid, exit code, why")
	c.Flags().BoolVar(&g.json, "json", false, "print the lane state as JSON (schema: docs/status-schema.md)")
	return c
}

// outWidth is the terminal width of out, 100 when out is not a terminal.
func outWidth(out io.Writer) int {
	if f, ok := out.(*os.File); ok {
		return dashboard.Width(f, 100)
	}
	return 100
}

// outColor reports whether out gets colour (a terminal, NO_COLOR unset).
func outColor(out io.Writer) bool {
	f, ok := out.(*os.File)
	return ok && dashboard.ColorFor(f)
}

// showRun prints one submitted run's record.
func showRun(c *cobra.Command, g *globals, id string) error {
	e, err := openLane(g)
	if err != nil {
		return err
	}
	r, err := submittedOf(e).store.read(id)
	if err != nil {
		return err
	}
	if g.json {
		return writeRunJSON(c.OutOrStdout(), r)
	}
	printRun(c.OutOrStdout(), r)
	return nil
}
