package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runs"
)

// holdLane readies this process to drive the lane (`launch`, `backlog
// run`) and takes its lock; holder names who may hold it instead, for the
// exit-32 message. A closed stdout (`launch | head`) must not kill the
// driver mid-run: catching SIGPIPE (not ignoring it, which children would
// inherit) turns it into write errors we can drop. release undoes both.
func holdLane(e *laneEnv, holder string) (release func(), err error) {
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	lock, err := lanes.AcquireLock(e.layout.LockPath())
	if err != nil {
		signal.Stop(sigpipe)
		var le *lanes.LockedError
		if errors.As(err, &le) {
			return nil, withCode(exitcode.LaneBusy, fmt.Errorf("%s is active on lane %s: %w", holder, e.lane.Name, err))
		}
		return nil, err
	}
	return func() {
		lock.Release()
		signal.Stop(sigpipe)
	}, nil
}

// startDashboard starts (or respawns in place) the lane's dashboard
// session running `dashboard --watch` with viewArgs, and says how to
// attach. A failure to start it is reported and never stops the run.
func startDashboard(ctx context.Context, c *cobra.Command, e *laneEnv, bin string, viewArgs ...string) {
	argv := append(append([]string{bin, "dashboard", "--watch"}, viewArgs...), "--repo-root", e.lane.RepoRoot, "--lane", e.lane.Name)
	if err := runs.StartDashboard(ctx, e.layout, e.lane.RepoRoot, argv); err != nil {
		fmt.Fprintln(c.ErrOrStderr(), "dashboard not started:", err)
		return
	}
	fmt.Fprintf(c.OutOrStdout(), "dashboard: tmux -L %s attach -t %s\n", e.layout.Socket(), lanes.DashboardSession)
}
