package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

func newStopCmd(g *globals) *cobra.Command {
	var agent string
	var keepDashboard bool
	c := &cobra.Command{
		Use:   "stop",
		Short: "Terminate a lane's runs (TERM, grace, KILL) and kill their sessions",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			e, err := openLane(g)
			if err != nil {
				return err
			}
			// A live launcher is asked to stop through its control file;
			// its lock is never taken from it.
			if agent == "" && lanes.Held(e.layout.LockPath()) {
				if err := jsonfile.Write(e.layout.ControlPath(), map[string]any{"stop": true, "requestedAt": time.Now().UTC()}); err != nil {
					return err
				}
				fmt.Fprintln(c.OutOrStdout(), "asked the running launcher to stop")
			}
			tm := tmuxadapter.New(e.layout.Socket())
			backend := runtime.NewTmuxBackend(tm, "", nil)
			grace := time.Duration(e.lane.Runtime.TerminateGraceMs) * time.Millisecond
			// Run records, not events, say what is in flight: a run whose
			// launcher died before recording it is still found.
			dirs, _ := filepath.Glob(filepath.Join(e.layout.StateDir, "waves", "*", "runs", "*"))
			var live []*runtime.Record
			for _, d := range dirs {
				rec, err := runtime.ReadRecord(filepath.Join(d, lanes.RuntimeFile))
				if err != nil || agent != "" && rec.AgentID != agent {
					continue
				}
				if rec.TerminalDisposition == runtime.Running || rec.TerminalDisposition == runtime.Launching {
					live = append(live, rec)
				}
			}
			// All at once: each run gets one grace period, not one after
			// another.
			var wg sync.WaitGroup
			errs := make([]error, len(live))
			for i, rec := range live {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = backend.Terminate(ctx, filepath.Dir(rec.StatusPath), grace, false)
				}()
			}
			wg.Wait()
			n := 0
			for i, rec := range live {
				if errs[i] != nil {
					fmt.Fprintln(c.ErrOrStderr(), termtext.EscapeLines(fmt.Sprintf("%s: %v", rec.RunID, errs[i])))
					continue
				}
				n++
				fmt.Fprintln(c.OutOrStdout(), termtext.Escape(fmt.Sprintf("terminated %s (session %s)", rec.RunID, rec.SessionName)))
			}
			if agent == "" {
				closeOpenWaveRuns(e)
			}
			if agent == "" {
				// Leftover sessions (kept, or of runs already over) go too.
				ss, _ := tm.ListSessions(ctx)
				for _, sess := range ss {
					if sess.Name != lanes.DashboardSession || !keepDashboard {
						_ = tm.KillSession(context.WithoutCancel(ctx), sess.Name)
					}
				}
			}
			if agent != "" && n == 0 {
				return fmt.Errorf("no running run of agent %s on lane %s", agent, e.lane.Name)
			}
			fmt.Fprintf(c.OutOrStdout(), "%d run(s) terminated\n", n)
			return nil
		},
	}
	c.Flags().StringVar(&agent, "agent", "", "stop only this agent's run")
	c.Flags().BoolVar(&keepDashboard, "keep-dashboard", false, "leave the dashboard session")
	return c
}

// closeOpenWaveRuns records a stop for every wave run left open by a dead
// launcher, so the next launch starts afresh instead of adopting the runs
// just terminated. It only does so while holding the lane lock: a live
// launcher records its own stop.
func closeOpenWaveRuns(e *laneEnv) {
	lock, err := lanes.AcquireLock(e.layout.LockPath())
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
