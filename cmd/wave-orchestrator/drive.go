package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/runs"
)

// laneDrive is what `launch` and `backlog run` share once their own
// checks have passed: take the lane, open its runs on the lane's
// backend, start the dashboard, say how to watch an agent, run the loop,
// and turn its end into the exit: a stop asked for, an interruption
// (saying where the agents go on), or the loop's exit code.
type laneDrive struct {
	holder string // who else may hold the lane, for exit 32's message
	// held runs once the lane is ours, before anything starts.
	held      func()
	dashboard bool
	view      []string // the dashboard's view flags
	// watch is how to watch one agent on wr's backend ("" for nothing).
	watch func(wr *runs.Runs) string
	// stopped is the loop's error for a stop someone asked for, and
	// onStopped the command's answer to it.
	stopped   error
	onStopped func() error
	// who, agents and again word an interruption: "launcher interrupted;
	// agents keep running <where>; run `launch` again to adopt them".
	who, agents, again string
	inPods             string // <where> on kubernetes
	logger             *slog.Logger
}

// run drives loop, which runs the lane's agents on wr and returns its
// exit code.
func (d laneDrive) run(ctx context.Context, c *cobra.Command, e *laneEnv, bin string, loop func(ctx context.Context, wr *runs.Runs) (int, error)) error {
	release, err := holdLane(e, d.holder)
	if err != nil {
		return err
	}
	defer release()
	if d.held != nil {
		d.held()
	}
	wr, err := runs.Open(ctx, e.lane, e.layout, bin, d.logger)
	if err != nil {
		return err
	}
	defer wr.Close()
	if d.dashboard {
		startDashboard(ctx, c, e, bin, d.view...)
	}
	// The dashboard session outlives the run: its final frame and result
	// line stay until the user quits it, `stop` clears it, or the next
	// run replaces it.
	if hint := d.watch(wr); hint != "" {
		fmt.Fprintln(c.OutOrStdout(), hint)
	}
	code, err := loop(ctx, wr)
	switch {
	case errors.Is(err, d.stopped):
		return d.onStopped()
	case ctx.Err() != nil:
		where := "in tmux (socket " + e.layout.Socket() + ")"
		if wr.Kubernetes() {
			where = d.inPods
		}
		return withCode(exitcode.Failed, fmt.Errorf("%s interrupted; %s keep running %s; %s", d.who, d.agents, where, d.again))
	case err != nil:
		return err
	case code != 0:
		return withCode(code, nil)
	}
	return nil
}
