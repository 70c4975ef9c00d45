package supervisor

import (
	"context"
	"fmt"
	"os"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/sandbox"
)

// decideSandbox resolves backlog.sandbox.mode once, before anything is
// claimed: on, where bubblewrap cannot work, refuses the run.
func (s *Supervisor) decideSandbox(ctx context.Context) error {
	d, err := sandbox.Decide(ctx, "backlog.sandbox.mode", s.o.Config.Backlog.Sandbox.BacklogMode())
	if err != nil {
		if where := s.o.Config.KeyLine("backlog.sandbox.mode"); where != "" {
			return fmt.Errorf("%s: %w", where, err)
		}
		return err
	}
	s.sandbox = d
	return nil
}

// noteSandbox records, when the run does not say so already, whether
// this process's workers are sandboxed, and warns when they are not.
// Workers in pods are not this machine's to sandbox.
func (s *Supervisor) noteSandbox(ctx context.Context) error {
	if s.pods() {
		return nil
	}
	out, why := backlog.SandboxOn, ""
	if !s.sandbox.On {
		out, why = backlog.SandboxOff, s.sandbox.Why
		s.printf("warning: workers are not sandboxed (%s): they can read your home directory and reach any host", why)
	}
	if cur := s.run().Sandbox; cur != nil && cur.On == s.sandbox.On && cur.Why == why {
		return nil
	}
	return s.emit(backlog.Event{Kind: backlog.EvSandbox, Outcome: out, Detail: why})
}

// runSandbox is the sandbox of a worker's run (gitWritable) or a
// reviewer's, nil when workers are not sandboxed.
func (s *Supervisor) runSandbox(gitWritable bool) *runtime.Sandbox {
	if !s.sandbox.On || s.pods() {
		return nil
	}
	sb := s.o.Config.Backlog.Sandbox
	home, _ := os.UserHomeDir()
	return &runtime.Sandbox{Bwrap: s.sandbox.Bwrap, GitWritable: gitWritable, Borrow: s.borrow(), ReadOnly: sb.ReadOnlyPaths(home),
		AllowHosts: sb.AllowHosts, Network: sandbox.NetAllowlist}
}

// borrow is the object directories a sandboxed checkout's git may read:
// this clone's, which no sandbox writes (what a worker writes in its own
// clone's alternates mounts nothing).
func (s *Supervisor) borrow() []string { return sandbox.Borrowed(s.o.Git.ObjectsDir()) }

// noteBlocked records the hosts the sandbox refused issue n's run (a
// worker's, a reviewer's or verify's, as what says; n 0: the verify of
// the base merged at the end), through j.
func (s *Supervisor) noteBlocked(j *job, n int, what string, hosts []string) error {
	if len(hosts) == 0 {
		return nil
	}
	s.printf("#%d: the sandbox refused its %s connections to %v", n, what, hosts)
	return j.record(backlog.Event{Kind: backlog.EvBlocked, Issue: n, Hosts: hosts, Detail: what})
}
