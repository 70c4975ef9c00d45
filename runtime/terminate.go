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
// runner. A pid whose start time no longer matches the record is never
// signalled. The runner, if alive, writes the terminal record itself.
func Terminate(ctx context.Context, rec Record, grace time.Duration) error {
	if grace <= 0 {
		grace = DefaultGrace
	}
	runner := func() bool { return ProcAlive(rec.RunnerPid, rec.RunnerStartTime) && rec.RunnerStartTime != 0 }
	agent := func() bool { return ProcAlive(rec.ExecutorPid, rec.ExecutorStartTime) && rec.ExecutorStartTime != 0 }

	signalIfSame(rec.RunnerPid, rec.RunnerStartTime, false, syscall.SIGTERM)
	signalIfSame(rec.ExecutorPid, rec.ExecutorStartTime, true, syscall.SIGTERM)
	if err := waitUntil(ctx, grace, func() bool { return !runner() && !agent() }); err != nil {
		return err
	}
	signalIfSame(rec.ExecutorPid, rec.ExecutorStartTime, true, syscall.SIGKILL)
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
