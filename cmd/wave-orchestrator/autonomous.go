package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/submitted"
)

// autonomousOnly are autonomous's own flags, not forwarded to launch.
var autonomousOnly = []string{"max-attempts-per-wave", "dashboard", "resident-orchestrator"}

// launchRangeFlags choose waves; autonomous chooses them itself.
var launchRangeFlags = []string{"start-wave", "end-wave", "auto-next", "dry-run", "manifest-out", "reconcile-status", "state-file", "resume-control-state"}

func newAutonomousCmd(g *globals) *cobra.Command {
	f := &launchFlags{}
	var maxAttempts int
	c := &cobra.Command{
		Use:   "autonomous",
		Short: "Run the lane's remaining waves one at a time, each a submitted run, until done or a person is needed",
		Long: `Run the lane's waves that are not completed, lowest first, one at a time:
each is a submitted launch of that one wave (as submit; the watcher restarts a
killed launcher once), waited for, and submitted again up to
--max-attempts-per-wave times when it fails. Before each wave, and after a
wave that exits 43, it stops for a person: a question waiting for an answer
(coord act answer-human) or an open blocking coordination record (coord act
resolve). It prints the lane's result and exits 0 when every wave completed,
43 when a person is needed (saying which question or record), or the failed
wave's exit code (1, 42). Launch flags are passed to each launch; dashboards
are off unless --dashboard.`,
		Example: `  wave-orchestrator autonomous
  wave-orchestrator autonomous --max-attempts-per-wave 2 --max-retries-per-wave 1 --json
  wave-orchestrator autonomous --executor claude --agent-rate-limit-retries 3`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			for _, name := range launchRangeFlags {
				if c.Flags().Changed(name) {
					return usageError{fmt.Errorf("--%s: autonomous runs the lane's remaining waves itself, one launch each; use launch for a range", name)}
				}
			}
			if maxAttempts < 1 {
				return usageError{fmt.Errorf("--max-attempts-per-wave %d: must be 1 or more", maxAttempts)}
			}
			return runAutonomous(c, g, f, maxAttempts)
		},
	}
	f.register(c, false)
	fl := c.Flags()
	fl.IntVar(&maxAttempts, "max-attempts-per-wave", 1, "submit a failing wave at most `N` times (each launch retries within itself per --max-retries-per-wave)")
	fl.Bool("dashboard", false, "start the dashboard session for each wave (off by default)")
	fl.Bool("resident-orchestrator", false, "accepted and ignored: there is no resident orchestrator agent")
	fl.BoolVar(&g.json, "json", false, "print the lane's result as JSON")
	return c
}

func runAutonomous(c *cobra.Command, g *globals, f *launchFlags, maxAttempts int) error {
	if err := f.ref.check(c); err != nil {
		return err
	}
	f.ref.announce(c, c.ErrOrStderr())
	if c.Flags().Changed("resident-orchestrator") {
		fmt.Fprintln(c.ErrOrStderr(), "ignored: --resident-orchestrator (there is no resident orchestrator agent)")
	}
	e, err := openLane(g)
	if err != nil {
		return err
	}
	if err := checkProject(f.ref.project, e); err != nil {
		return err
	}
	ws, err := e.loadWaves()
	if err != nil {
		return err
	}
	bin, err := self()
	if err != nil {
		return err
	}
	res, err := launcher.Autonomous(c.Context(), launcher.AutonomousOptions{Layout: e.layout, Lane: e.lane, Waves: ws,
		MaxAttempts: maxAttempts, Progress: c.ErrOrStderr()}, waveSubmitter{e: e, bin: bin, base: autonomousArgs(c)})
	if err != nil {
		return err
	}
	if err := printAuto(c.OutOrStdout(), g.json, res); err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return withCode(res.ExitCode, nil)
	}
	return nil
}

// autonomousArgs are the launch flags given, for each wave's launch.
func autonomousArgs(c *cobra.Command) []string {
	var out []string
	for _, a := range forwardedArgs(c.Flags()) {
		name := strings.TrimPrefix(strings.SplitN(a, "=", 2)[0], "--")
		if !slices.Contains(autonomousOnly, name) {
			out = append(out, a)
		}
	}
	if d, _ := c.Flags().GetBool("dashboard"); !d && !c.Flags().Changed("no-dashboard") {
		out = append(out, "--no-dashboard=true")
	}
	return out
}

// waveSubmitter submits each wave autonomous runs as `submit launch` would,
// with the launch flags given (base), and waits for the run's record.
type waveSubmitter struct {
	e    *laneEnv
	bin  string
	base []string
}

func (s waveSubmitter) Submit(ctx context.Context, n int) (string, bool, error) {
	args := append(slices.Clone(s.base), fmt.Sprintf("--start-wave=%d", n), fmt.Sprintf("--end-wave=%d", n))
	rec, queued, err := enqueueRun(ctx, s.e, s.bin, "launch", args, false)
	if err != nil {
		return "", false, err
	}
	return rec.RunID, queued, nil
}

func (s waveSubmitter) Wait(ctx context.Context, id string) (launcher.RunEnd, error) {
	r, err := submitted.Open(s.e.layout).Wait(ctx, id)
	if err != nil {
		return launcher.RunEnd{}, err
	}
	return launcher.RunEnd{ExitCode: r.ExitStatus(), State: r.State, Stopped: r.State == submitted.Stopped}, nil
}

func printAuto(w io.Writer, asJSON bool, r launcher.AutoResult) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	var done []string
	for _, aw := range r.Waves {
		if aw.ExitCode == 0 {
			done = append(done, fmt.Sprint(aw.Wave))
		}
	}
	ran := "no wave run"
	if len(done) > 0 {
		ran = "waves run: " + strings.Join(done, ", ")
	}
	switch r.Result {
	case launcher.LaneCompleted:
		_, err := fmt.Fprintf(w, "lane %s: completed (%s)\n", r.Lane, ran)
		return err
	case launcher.LaneNeedsHuman:
		_, err := fmt.Fprintf(w, "lane %s: needs a person before wave %d can go on (%s): %s\n", r.Lane, *r.StoppedAt, ran, r.Why)
		return err
	}
	_, err := fmt.Fprintf(w, "lane %s: failed at wave %d (%s): %s\n", r.Lane, *r.StoppedAt, ran, r.Why)
	return err
}
