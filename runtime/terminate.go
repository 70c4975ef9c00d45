package runtime

import (
	"context"
	"syscall"
	"time"
)

// DefaultGrace is the wait between SIGTERM and SIGKILL.
const DefaultGrace = 5 * time.Second

// Terminate stops a run: SIGTERM to the runner (which forwards it to the
// agent's group and records it), then to the agent's group should the
// runner not have passed it on within a second, up to grace for both to
// exit, then SIGKILL to the group and, if it still lingers, the
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

	start := time.Now()
	signalIfSame(rec.RunnerPid, rec.RunnerStartTime, false, syscall.SIGTERM)
	if runner() {
		// The runner passes the stop on and records it as one. Were the
		// group signalled at the same instant, the agent could exit
		// before the runner took its own TERM, and the record would say
		// "failed" for a run that was stopped. The group is signalled
		// directly only when the runner has not passed the stop on.
		if err := waitUntil(ctx, min(grace/2, time.Second), func() bool { return !group() }); err != nil {
			return err
		}
	}
	signalGroup(pgid, rec.ExecutorStartTime, syscall.SIGTERM)
	if err := waitUntil(ctx, max(grace-time.Since(start), 0), func() bool { return !runner() && !group() }); err != nil {
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
