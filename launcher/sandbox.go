package launcher

import (
	"context"
	"os"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/sandbox"
)

// decideSandbox resolves runtime.sandbox.mode once per launch (off
// unless set): with it, every wave agent runs sandboxed with the
// repository as its checkout — the agents work there and post their
// coordination records under its .wave — a private home, and the
// network of runtime.sandbox.allowHosts and its executor's endpoint.
// Agents in Kubernetes pods are not this machine's to sandbox.
func (l *Launcher) decideSandbox(ctx context.Context) error {
	sb := l.opt.Lane.Runtime.Sandbox
	mode := sb.RuntimeMode()
	if mode == sandbox.ModeOff || l.opt.Lane.Runtime.UsesKubernetes() {
		return nil
	}
	d, err := sandbox.Decide(ctx, "runtime.sandbox.mode", mode)
	if err != nil {
		return err
	}
	if !d.On {
		l.printf("warning: wave agents are not sandboxed (%s)", d.Why)
		return nil
	}
	home, _ := os.UserHomeDir()
	// The repository's object directories as they are before any agent
	// ran: what an agent writes in its alternates mounts nothing.
	borrow := sandbox.RepositoryBorrowed(l.opt.Lane.RepoRoot)
	l.sandbox = &runtime.Sandbox{Bwrap: d.Bwrap, GitWritable: true, Borrow: borrow, ReadOnly: sb.ReadOnlyPaths(home),
		AllowHosts: sb.AllowHosts, Network: sandbox.NetAllowlist}
	return nil
}
