package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/runs"
	"github.com/wave-orchestrator/wave-orchestrator/submitted"
)

// submitOnly are submit's own flags, not the launcher's.
var submitOnly = map[string]bool{"json": true, "no-queue": true, "repo-root": true, "lane": true, "help": true}

func newSubmitCmd(g *globals) *cobra.Command {
	f := &launchFlags{}
	var resumeWave int
	var noQueue bool
	c := &cobra.Command{
		Use:   "submit",
		Short: "Start a launch (or, with --wave, a resume) detached and return its run id at once",
		Long: `Queue a launch with the given launch flags (or a resume, when --wave is
given, with the resume flags) and return at once with its run id, lane and
state file. The launcher runs detached in tmux session "launcher" on the
lane's socket (tmux -L <socket> attach -t launcher shows its console) under
a small watcher that survives this command's exit: the watcher restarts a
launcher killed by a signal once (the restart adopts the live agents) and
fails the run when it dies again. A submit while a run is active on the
lane (a submitted one, or a foreground launch or backlog run) is queued: one
at a time per lane, first in first out, each starting once the lane is free.
--no-queue refuses with exit 32 instead. Follow a run with wait and status
--run-id.`,
		Example: `  wave-orchestrator submit --json
  wave-orchestrator submit --start-wave 1 --end-wave 2 --no-dashboard
  wave-orchestrator submit --wave 0 --phase cont-qa-closure   # a resume
  id=$(wave-orchestrator submit --json | jq -r .runId) && wave-orchestrator wait --run-id "$id"`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runSubmit(c, g, f, resumeWave, noQueue)
		},
	}
	f.register(c, false)
	fl := c.Flags()
	waveVar(c, &resumeWave, "wave", "w", -1, "resume wave `N` instead of launching (then --phase, --agent, --rerun-proven apply)")
	fl.StringVarP(&f.phase, "phase", "p", "", "with --wave: the phase to re-run")
	fl.StringArrayVarP(&f.agents, "agent", "a", nil, "with --wave: re-run agent `ID` (repeatable)")
	fl.BoolVar(&f.rerunProven, "rerun-proven", false, "with --wave: reuse no proven agent")
	fl.BoolVar(&noQueue, "no-queue", false, "refuse (exit 32) instead of queueing when a run is active on the lane")
	fl.BoolVar(&g.json, "json", false, "print {runId, lane, statePath} as JSON")
	return c
}

// forwardedArgs rebuilds the launcher's flags from those given to submit.
func forwardedArgs(fs *pflag.FlagSet) []string {
	var out []string
	fs.Visit(func(fl *pflag.Flag) {
		if submitOnly[fl.Name] {
			return
		}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+fl.Name+"="+v)
			}
			return
		}
		out = append(out, "--"+fl.Name+"="+fl.Value.String())
	})
	return out
}

func runSubmit(c *cobra.Command, g *globals, f *launchFlags, resumeWave int, noQueue bool) error {
	resume := resumeWave >= 0
	if !resume && (f.phase != "" || len(f.agents) > 0 || f.rerunProven) {
		return usageError{fmt.Errorf("--phase, --agent and --rerun-proven need --wave (a resume)")}
	}
	if resume {
		for _, name := range []string{"start-wave", "end-wave", "auto-next", "dry-run", "manifest-out"} {
			if c.Flags().Changed(name) {
				return usageError{fmt.Errorf("--%s is a launch flag; with --wave the run is a resume", name)}
			}
		}
	}
	if err := f.ref.check(c); err != nil {
		return err
	}
	f.ref.announce(c, c.ErrOrStderr())
	e, err := openLane(g)
	if err != nil {
		return err
	}
	if err := checkProject(f.ref.project, e); err != nil {
		return err
	}
	if resume {
		// Refused now, not as the queued run's why later.
		l, err := launcher.Status(c.Context(), e.layout)
		if err != nil {
			return err
		}
		if err := e.knownWave(l, resumeWave); err != nil {
			return usageError{fmt.Errorf("submit --wave %d: %w; resume one of those, or submit a launch (without --wave) for a new wave", resumeWave, err)}
		}
	}
	bin, err := self()
	if err != nil {
		return err
	}
	command := "launch"
	if resume {
		command = "resume"
	}
	rec, busy, err := enqueueRun(c.Context(), e, bin, command, forwardedArgs(c.Flags()), noQueue)
	if err != nil {
		return err
	}
	return printSubmitted(c.OutOrStdout(), g.json, rec, submitted.Open(e.layout).Path(rec.RunID), busy)
}

// enqueueRun records a queued run of command with the launcher's args
// and makes sure the lane's watcher runs in its launcher session; busy
// says it waits behind another run. With noQueue a busy lane is refused
// (exit 32), recording nothing.
func enqueueRun(ctx context.Context, e *laneEnv, bin, command string, args []string, noQueue bool) (*submitted.Run, bool, error) {
	start := func(ctx context.Context) error {
		argv := []string{bin, "--repo-root", e.lane.RepoRoot, "--lane", e.lane.Name, "submit-watch"}
		return runs.StartWatcher(ctx, e.layout, e.lane.RepoRoot, argv)
	}
	rec, busy, err := submitted.Open(e.layout).Submit(ctx, command, args, noQueue, start)
	if errors.Is(err, submitted.ErrBusy) {
		return nil, busy, withCode(exitcode.LaneBusy, err)
	}
	return rec, busy, err
}

func printSubmitted(w io.Writer, asJSON bool, r *submitted.Run, path string, queued bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(map[string]any{"runId": r.RunID, "lane": r.Lane, "statePath": path, "queued": queued})
	}
	fmt.Fprintf(w, "run_id=%s lane=%s state_path=%s\n", r.RunID, r.Lane, shellQuote(path))
	if queued {
		fmt.Fprintf(w, "queued: a run is active on lane %s; this one starts when the runs before it end\n", r.Lane)
	}
	return nil
}

// stopQueued marks the lane's queued submitted runs stopped (by `stop`)
// before the watcher can start one.
func stopQueued(ctx context.Context, e *laneEnv, out io.Writer) {
	ids, err := submitted.Open(e.layout).StopQueued(ctx)
	for _, id := range ids {
		fmt.Fprintf(out, "queued run %s stopped\n", id)
	}
	if err != nil {
		fmt.Fprintln(out, "queued runs not stopped:", err)
	}
}
