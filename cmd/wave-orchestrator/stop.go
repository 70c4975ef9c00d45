package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/runs"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/submitted"
)

func newStopCmd(g *globals) *cobra.Command {
	var agent string
	var keepDashboard bool
	c := &cobra.Command{
		Use:   "stop",
		Short: "Terminate a lane's runs (TERM, grace, KILL) and kill their sessions",
		Long: `Terminate every run of the lane at once (TERM to each agent's process
group, a grace period, then KILL) and kill the lane's tmux sessions. A live
launcher is asked to stop and ends its wave as stopped; its lock is never
taken. Exits 1, naming each failure, when something could not be stopped.`,
		Example: `  wave-orchestrator stop
  wave-orchestrator stop --agent A2           # only A2's run
  wave-orchestrator stop --keep-dashboard
  wave-orchestrator --lane side stop`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			e, err := openLane(g)
			if err != nil {
				return err
			}
			// A live launcher is asked to stop through its control file;
			// its lock is never taken from it.
			if agent == "" {
				// First, so the watcher cannot start a queued run once
				// the active one stops.
				stopQueued(ctx, e, c.OutOrStdout())
			}
			if agent == "" && lanes.Held(e.layout.LockPath()) {
				if err := launcher.RequestStop(e.layout); err != nil {
					return err
				}
				fmt.Fprintln(c.OutOrStdout(), "asked the running launcher to stop")
			}
			n, failed := terminateRuns(ctx, e, agent, c.OutOrStdout())
			if agent == "" {
				closeOpenWaveRuns(e)
				var keep []string
				if keepDashboard {
					keep = append(keep, lanes.DashboardSession)
				}
				// A submitted run's watcher records the stopped run and ends
				// by itself; queued runs are stopped before they start.
				if submitted.Open(e.layout).WatcherAlive() {
					keep = append(keep, lanes.LauncherSession)
				}
				if err := runs.KillSessions(ctx, e.layout, keep...); err != nil {
					failed = append(failed, err.Error())
				}
			}
			if agent != "" && n == 0 && len(failed) == 0 {
				return fmt.Errorf("no running run of agent %s on lane %s", agent, e.lane.Name)
			}
			fmt.Fprintf(c.OutOrStdout(), "%d run(s) terminated\n", n)
			if len(failed) > 0 {
				return withCode(exitcode.Failed, fmt.Errorf("stop lane %s: %d thing(s) failed:\n  - %s", e.lane.Name, len(failed), strings.Join(failed, "\n  - ")))
			}
			return nil
		},
	}
	c.Flags().StringVarP(&agent, "agent", "a", "", "stop only this agent's run (a live launcher retries it while retries remain)")
	_ = c.RegisterFlagCompletionFunc("agent", completeAgents)
	c.Flags().BoolVar(&keepDashboard, "keep-dashboard", false, "leave the dashboard session")
	return c
}

// closeOpenWaveRuns records a stop for every wave run left open by a dead
// launcher, so the next launch starts afresh instead of adopting the runs
// just terminated. It only does so while holding the lane lock: a live
// launcher records its own stop.
func closeOpenWaveRuns(e *laneEnv) {
	lock, err := lanes.AcquireLockQuiet(e.layout.LockPath())
	if err != nil {
		return
	}
	defer lock.Release()
	evs, _, err := state.ReadEvents(e.layout.EventsPath())
	if err != nil {
		return
	}
	open := map[int]bool{}
	for _, ev := range evs {
		if ev.EntityType == state.EntityWaveRun {
			open[ev.Wave] = ev.Action == "started"
		}
	}
	for n, isOpen := range open {
		if isOpen {
			ev := state.NewEvent(e.lane.Name, n, state.EntityWaveRun, fmt.Sprintf("wave-%d", n), state.WaveStopped, 0,
				map[string]any{"detail": "stopped by `wave-orchestrator stop` after its launcher died"})
			ev.Source, ev.Actor = "stop", "stop"
			_ = state.Append(e.layout.EventsPath(), ev)
		}
	}
}

// terminateRuns terminates every live run of the lane (or of agent), all
// at once, and returns how many it terminated and what failed.
func terminateRuns(ctx context.Context, e *laneEnv, agent string, out io.Writer) (int, []string) {
	grace := time.Duration(e.lane.Runtime.TerminateGraceMs) * time.Millisecond
	live := runs.Live(e.layout, agent)
	errs := runs.TerminateAll(ctx, e.lane, e.layout, live, grace)
	// failed goes into stop's error, which main prints escaped.
	var failed []string
	n := 0
	for i, rec := range live {
		if errs[i] != nil {
			failed = append(failed, fmt.Sprintf("run %s (session %s): %v", rec.RunID, rec.SessionName, errs[i]))
			continue
		}
		n++
		where := "session " + rec.SessionName
		if k := rec.Kubernetes; k != nil {
			where = "job " + k.Namespace + "/" + k.Job
		}
		fmt.Fprintln(out, termtext.Escape(fmt.Sprintf("terminated %s (%s)", rec.RunID, where)))
	}
	return n, failed
}
