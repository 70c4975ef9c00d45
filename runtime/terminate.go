package runtime

import (
	"context"
	"syscall"
	"time"
)

// DefaultGrace is the wait between SIGTERM and SIGKILL.
const DefaultGrace = 5 * time.Second

// Terminate stops a run: SIGTERM to the runner (which forwards it to the
// agent's group and records it) and to the agent's group, up to grace for
// both to exit, then SIGKILL to the group and, if it still lingers, the
// runner. The group is signalled while any member no older than the
// recorded agent start is alive, even after its leader exited; a pid whose
// start time no longer matches the record is never signalled. The runner,
// if alive, writes the terminal record itself.
func Terminate(ctx context.Context, rec Record, grace time.Duration) error {
	if grace <= 0 {
		grace = DefaultGrace
	}
	pgid := rec.Pgid
	if pgid == 0 {
		pgid = rec.ExecutorPid
	}
	runner := func() bool { return ProcAlive(rec.RunnerPid, rec.RunnerStartTime) && rec.RunnerStartTime != 0 }
	group := func() bool { return groupAlive(pgid, rec.ExecutorStartTime) }

	signalIfSame(rec.RunnerPid, rec.RunnerStartTime, false, syscall.SIGTERM)
	signalGroup(pgid, rec.ExecutorStartTime, syscall.SIGTERM)
	if err := waitUntil(ctx, grace, func() bool { return !runner() && !group() }); err != nil {
		return err
	}
	signalGroup(pgid, rec.ExecutorStartTime, syscall.SIGKILL)
	// The runner should now record the kill and exit on its own.
	if err := waitUntil(ctx, grace, func() bool { return !runner() }); err != nil {
		return err
	}
	signalIfSame(rec.RunnerPid, rec.RunnerStartTime, false, syscall.SIGKILL)
	return nil
}

// waitUntil polls cond (cheap /proc reads) until it holds, d passes or ctx
// ends; only the last is an error.
func waitUntil(ctx context.Context, d time.Duration, cond func() bool) error {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return nil
		case <-tick.C:
		}
	}
	return nil
}
