package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/submitted"
)

func newWaitCmd(g *globals) *cobra.Command {
	var runID string
	var timeoutS int
	c := &cobra.Command{
		Use:   "wait",
		Short: "Wait for a submitted run to end and exit with its exit code",
		Long: `Block until submitted run --run-id ends, then exit with its launcher's
exit code (0 passed, 1 failed, 42, 43: as launch). With --timeout-seconds N,
give up after N seconds with exit 124, changing nothing. The run's state
file is watched (fsnotify); nothing is polled.`,
		Example: `  wave-orchestrator wait --run-id 20261201T221500.123Z-a1b2c3
  wave-orchestrator wait --run-id "$id" --timeout-seconds 600 --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runID == "" {
				return usageError{errors.New("--run-id is required")}
			}
			if timeoutS < 0 {
				return usageError{fmt.Errorf("--timeout-seconds %d: must be 0 (no limit) or more", timeoutS)}
			}
			e, err := openLane(g)
			if err != nil {
				return err
			}
			ctx := c.Context()
			if timeoutS > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(timeoutS)*time.Second)
				defer cancel()
			}
			if err := submitted.ValidRunID(runID); err != nil {
				return usageError{err}
			}
			r, err := submitted.Open(e.layout).Wait(ctx, runID)
			if err != nil {
				if errors.Is(err, context.DeadlineExceeded) {
					if r != nil && g.json {
						_ = writeRunJSON(c.OutOrStdout(), r)
					}
					return withCode(exitcode.Timeout, fmt.Errorf("run %s still %s after %ds", runID, stateOf(r), timeoutS))
				}
				return err
			}
			if g.json {
				if err := writeRunJSON(c.OutOrStdout(), r); err != nil {
					return err
				}
			} else {
				printRun(c.OutOrStdout(), r)
			}
			if code := r.ExitStatus(); code != 0 {
				return withCode(code, nil)
			}
			return nil
		},
	}
	c.Flags().StringVar(&runID, "run-id", "", "the run id `submit` printed")
	c.Flags().IntVar(&timeoutS, "timeout-seconds", 0, "give up after `N` seconds with exit 124 (0: wait as long as it takes)")
	c.Flags().BoolVar(&g.json, "json", false, "print the run's final state as JSON")
	return c
}

func stateOf(r *submitted.Run) string {
	if r == nil {
		return "unknown"
	}
	return r.State
}

func writeRunJSON(w io.Writer, r *submitted.Run) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// printRun is one run as key=value words; why is escaped (it quotes the
// launcher's output).
func printRun(w io.Writer, r *submitted.Run) {
	code := "-"
	if r.ExitCode != nil {
		code = fmt.Sprint(*r.ExitCode)
	}
	fmt.Fprintf(w, "run_id=%s lane=%s state=%s pid=%d exit_code=%s restarts=%d\n", r.RunID, r.Lane, r.State, r.Pid, code, r.Restarts)
	if r.Why != "" {
		fmt.Fprintf(w, "why: %s\n", termtext.EscapeLines(r.Why))
	}
}
