package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/coord"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

// autonomousOnly are autonomous's own flags, not forwarded to launch.
var autonomousOnly = []string{"max-attempts-per-wave", "dashboard", "resident-orchestrator"}

// launchRangeFlags choose waves; autonomous chooses them itself.
var launchRangeFlags = []string{"start-wave", "end-wave", "auto-next", "dry-run", "manifest-out", "reconcile-status", "state-file", "resume-control-state"}

// Lane results of autonomous.
const (
	laneCompleted  = "completed"
	laneNeedsHuman = "needs-human"
	laneFailed     = "failed"
)

// autoResult is what autonomous prints at the end (--json).
type autoResult struct {
	Lane   string     `json:"lane"`
	Result string     `json:"result"` // completed | needs-human | failed
	Waves  []autoWave `json:"waves"`
	// StoppedAt is the wave it stopped at (null when every wave completed).
	StoppedAt *int   `json:"stoppedAt"`
	Why       string `json:"why"`
	ExitCode  int    `json:"exitCode"`
}

type autoWave struct {
	Wave     int      `json:"wave"`
	RunIDs   []string `json:"runIds"`
	ExitCode int      `json:"exitCode"`
	State    string   `json:"state"`
}

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
	base := autonomousArgs(c)
	out := c.ErrOrStderr()
	res := autoResult{Lane: e.lane.Name, Waves: []autoWave{}}
	for {
		sel, err := launcher.New(launcher.Options{Layout: e.layout, Lane: e.lane, Waves: ws, AutoNext: true, EndWave: -1}, nil).Selected()
		if err != nil {
			return err
		}
		if len(sel) == 0 {
			res.Result = laneCompleted
			break
		}
		n := sel[0].Number
		if done := slices.ContainsFunc(res.Waves, func(w autoWave) bool { return w.Wave == n && w.ExitCode == 0 }); done {
			return fmt.Errorf("autonomous: wave %d passed but is not recorded completed in %s; not running it again", n, e.layout.LedgerPath())
		}
		if why := needsPerson(e, n); why != "" {
			res.stop(laneNeedsHuman, n, why, exitNeedsHuman)
			break
		}
		aw, err := runAutoWave(c, e, bin, base, n, maxAttempts, out)
		res.Waves = append(res.Waves, aw)
		if err != nil {
			return err
		}
		if aw.ExitCode == 0 {
			continue
		}
		if why := needsPerson(e, n); why != "" || aw.ExitCode == exitNeedsHuman {
			if why == "" {
				why = fmt.Sprintf("wave %d stopped with no safe retry (exit 43); `status` says why", n)
			}
			res.stop(laneNeedsHuman, n, why, exitNeedsHuman)
			break
		}
		res.stop(laneFailed, n, fmt.Sprintf("wave %d failed after %d attempt(s) (exit %d); `status -w %d` shows the failures", n, len(aw.RunIDs), aw.ExitCode, n), aw.ExitCode)
		break
	}
	if err := printAuto(c.OutOrStdout(), g.json, res); err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return withCode(res.ExitCode, nil)
	}
	return nil
}

func (r *autoResult) stop(result string, n int, why string, code int) {
	r.Result, r.StoppedAt, r.Why, r.ExitCode = result, &n, why, code
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

// runAutoWave submits wave n up to attempts times, waiting for each run.
func runAutoWave(c *cobra.Command, e *laneEnv, bin string, base []string, n, attempts int, out io.Writer) (autoWave, error) {
	aw := autoWave{Wave: n, RunIDs: []string{}}
	args := append(slices.Clone(base), fmt.Sprintf("--start-wave=%d", n), fmt.Sprintf("--end-wave=%d", n))
	for k := 1; k <= attempts; k++ {
		rec, queued, err := enqueueRun(c.Context(), e, bin, "launch", args, false)
		if err != nil {
			return aw, err
		}
		aw.RunIDs = append(aw.RunIDs, rec.RunID)
		note := ""
		if queued {
			note = " (queued behind the lane's active run)"
		}
		fmt.Fprintf(out, "autonomous: wave %d attempt %d/%d: run %s%s\n", n, k, attempts, rec.RunID, note)
		r, err := waitRun(c.Context(), submittedOf(e).store, rec.RunID)
		if err != nil && c.Context().Err() != nil {
			return aw, fmt.Errorf("autonomous interrupted at wave %d; its run %s goes on (wait --run-id %s, or stop): %w", n, rec.RunID, rec.RunID, err)
		}
		if err != nil {
			return aw, err
		}
		aw.ExitCode, aw.State = runExitCode(r), r.State
		fmt.Fprintf(out, "autonomous: wave %d run %s %s (exit %d)\n", n, r.RunID, r.State, aw.ExitCode)
		if aw.ExitCode == 0 || aw.ExitCode == exitNeedsHuman || r.State == runStopped || needsPerson(e, n) != "" {
			break
		}
	}
	return aw, nil
}

// needsPerson says what holds wave n for a person: a question of the
// lane still waiting, or an open blocking record of the wave.
func needsPerson(e *laneEnv, n int) string {
	esc := termtext.Escape
	if qs, _, err := questions.List(e.layout); err == nil {
		var ids []string
		for _, q := range questions.PendingOf(qs) {
			if q.Blocking && q.Wave != nil {
				ids = append(ids, fmt.Sprintf("%s (%s: %q)", esc(q.ID), esc(q.Where()), esc(q.Text)))
			}
		}
		if len(ids) > 0 {
			return fmt.Sprintf("pending question(s) for a person: %s; answer with `coord act answer-human ID --response TEXT`", strings.Join(ids, ", "))
		}
	}
	recs, _, _ := coord.Read(e.layout.CoordinationPath(n))
	var ids []string
	for _, r := range coord.Open(recs) {
		ids = append(ids, fmt.Sprintf("%s (%s by %s: %q)", esc(r.ID), esc(r.Kind), esc(r.AgentID), esc(r.Summary)))
	}
	if len(ids) > 0 {
		return fmt.Sprintf("open blocking record(s) in wave %d: %s; resolve with `coord act resolve ID` (or dismiss)", n, strings.Join(ids, ", "))
	}
	return ""
}

func printAuto(w io.Writer, asJSON bool, r autoResult) error {
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
	case laneCompleted:
		_, err := fmt.Fprintf(w, "lane %s: completed (%s)\n", r.Lane, ran)
		return err
	case laneNeedsHuman:
		_, err := fmt.Fprintf(w, "lane %s: needs a person before wave %d can go on (%s): %s\n", r.Lane, *r.StoppedAt, ran, r.Why)
		return err
	}
	_, err := fmt.Fprintf(w, "lane %s: failed at wave %d (%s): %s\n", r.Lane, *r.StoppedAt, ran, r.Why)
	return err
}
