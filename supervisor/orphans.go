package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os/exec"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// The repository's code the supervisor runs itself (backlog.verify,
// backlog.setup) runs in a session of its own, as the supervisor's
// child: nothing ends it when the supervisor is killed (a sandbox's
// bwrap dies with its parent; without the sandbox nothing does). So each
// such process is started held, its identity recorded in the run's log,
// and only then released; a supervisor that opens the run again ends
// every recorded one still running — the very process recorded, never a
// reused pid — before anything else (docs/merge-gate.md, "The
// pipeline").

// errUnrecorded: the run's log could not record a process, which then
// ran nothing — no verdict on the change.
var errUnrecorded = errors.New("the run's log could not record it")

// runRecorded runs cmd (what: verify, setup) for issue n in dir, its
// identity in the run's log before it runs anything. The error is the
// program's (its start, its exit) or wraps errUnrecorded.
func (s *Supervisor) runRecorded(j *job, n int, what, dir string, cmd *exec.Cmd) error {
	h, err := runtime.StartHeld(cmd)
	if err != nil {
		return err
	}
	id := h.ID()
	if err := j.record(backlog.Event{Kind: backlog.EvProcess, Issue: n, Outcome: backlog.ProcessStarted, Detail: what,
		Worktree: dir, Proc: &backlog.ProcID{Pid: id.Pid, Start: id.Start}}); err != nil {
		h.Abandon()
		_ = cmd.Wait()
		return fmt.Errorf("%s of #%d: %w: %w", what, n, errUnrecorded, err)
	}
	if err := h.Release(); err != nil {
		_ = cmd.Wait()
		return err
	}
	return cmd.Wait()
}

// endOrphans ends the processes of the repository's code the run's log
// says a supervisor started and that still run as recorded — left by a
// supervisor killed under them — and records that none is left, before
// their checkouts are removed or verified again.
func (s *Supervisor) endOrphans(ctx context.Context) error {
	procs := s.run().Processes
	if len(procs) == 0 {
		return nil
	}
	ids := make([]runtime.ProcID, len(procs))
	for i, p := range procs {
		ids[i] = runtime.ProcID{Pid: p.Pid, Start: p.Start}
	}
	found, err := runtime.EndSessions(ctx, ids, runtime.DefaultGrace)
	for _, p := range procs {
		for _, id := range found {
			if id.Pid == p.Pid && id.Start == p.Start {
				s.printf("%s: its %s (pid %d) was still running, left by the supervisor that stopped; ended it", whose(p.Issue), p.What, p.Pid)
			}
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		// Killed, if not yet gone (a process stuck in the kernel): the
		// next supervisor looks again.
		s.printf("warning: ending the verify and setup processes a stopped supervisor left: %s", oneLine(err.Error()))
		return nil
	}
	return s.emit(backlog.Event{Kind: backlog.EvProcess, Outcome: backlog.ProcessEnded})
}

// whose names the issue a verify or setup was for: n 0 is the base
// merged into the wave branch.
func whose(n int) string {
	if n == 0 {
		return "the base merge"
	}
	return fmt.Sprintf("#%d", n)
}
