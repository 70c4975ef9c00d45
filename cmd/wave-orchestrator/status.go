package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/dashboard"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/submitted"
)

func newStatusCmd(g *globals) *cobra.Command {
	wave := -1
	var runID string
	var waitChange, exitCode bool
	var timeoutS int
	c := &cobra.Command{
		Use:   "status",
		Short: "Print one snapshot of the lane: waves, agents, closure stages, blockers",
		Long: `Print one snapshot of the lane's state. The text view is the dashboard's
wave block for every wave; --json prints the versioned lane state documented
in docs/status-schema.md.

--wait-change blocks until the lane's state changes (a wave, phase, agent,
marker, blocker or failure; not the clocks), or --timeout-seconds pass, and
then prints it; it returns at once when a question already waits for a
person (only the answer would change the lane). --exit-code makes the exit code say what the state is:
0 completed, 10 running or waiting, 20 input required (an open
human-feedback, human-escalation or clarification request), 30 changed
(with --wait-change, a change that is none of those), 40 failed.`,
		Example: `  wave-orchestrator status
  wave-orchestrator status -w 1
  wave-orchestrator status --json | jq '.waves[] | {wave, status}'
  wave-orchestrator --lane side status
  wave-orchestrator status --run-id "$id" --json   # one submitted run
  wave-orchestrator status --wait-change --timeout-seconds 300 --exit-code`,
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
			if timeoutS < 0 {
				return usageError{fmt.Errorf("--timeout-seconds %d: must be 0 (no limit) or more", timeoutS)}
			}
			e, err := openWaveRepo(g)
			if err != nil {
				return err
			}
			var l state.Lane
			changed := false
			if waitChange {
				l, changed, err = waitForChange(c.Context(), e, timeoutS, c.ErrOrStderr())
			} else {
				l, err = launcher.Status(c.Context(), e.layout)
			}
			if err != nil {
				return err
			}
			if err := e.knownWave(l, wave); err != nil {
				return err
			}
			out := c.OutOrStdout()
			if g.json {
				err = dashboard.WriteStatusJSON(out, l, wave)
			} else {
				o := dashboard.Options{Width: outWidth(out), Color: outColor(out), Now: time.Now(), Wave: wave, Selected: -1}
				_, err = fmt.Fprint(out, dashboard.RenderStatus(l, o)+notifyLine(l.Notifications))
			}
			if err != nil || !exitCode {
				return err
			}
			code := laneCode(l)
			if changed && code == exitcode.StatusRunning {
				code = exitcode.StatusChanged
			}
			if code != 0 {
				return withCode(code, nil)
			}
			return nil
		},
	}
	waveVar(c, &wave, "wave", "w", -1, "show only wave `N`")
	c.Flags().BoolVar(&waitChange, "wait-change", false, "block until the lane's state changes, then print it")
	c.Flags().IntVar(&timeoutS, "timeout-seconds", 0, "with --wait-change: stop waiting after `N` seconds (0: no limit)")
	c.Flags().BoolVar(&exitCode, "exit-code", false, "exit 0 completed, 10 running/waiting, 20 input required, 30 changed, 40 failed")
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
	r, err := submitted.Open(e.layout).Read(id)
	if err != nil {
		return err
	}
	if g.json {
		return writeRunJSON(c.OutOrStdout(), r)
	}
	printRun(c.OutOrStdout(), r)
	return nil
}

// waitForChange is --wait-change: the lane once it changed, or as it is
// when the timeout passes; at once when a question already waits for a
// person (nothing but the person's answer would change it).
func waitForChange(ctx context.Context, e *laneEnv, timeoutS int, stderr io.Writer) (state.Lane, bool, error) {
	if timeoutS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(timeoutS)*time.Second)
		defer cancel()
	}
	l, changed, err := waitLaneChange(ctx, e.layout, func(l state.Lane) bool {
		if laneCode(l) == exitcode.StatusInputRequired {
			fmt.Fprintln(stderr, "status: input is required already (`questions --pending`); not waiting")
			return false
		}
		fmt.Fprintln(stderr, "status: waiting for the lane's state to change")
		return true
	})
	if err != nil || changed || laneCode(l) == exitcode.StatusInputRequired {
		return l, changed, err
	}
	if err == nil && !changed {
		// Read once more with a live context: the watch's may have ended.
		l, err = launcher.Status(context.WithoutCancel(ctx), e.layout)
	}
	return l, changed, err
}
