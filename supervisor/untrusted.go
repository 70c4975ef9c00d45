package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/wave-orchestrator/wave-orchestrator/sandbox"
)

// untrustedCommand is argv, the repository's own code (backlog.setup, backlog.verify),
// run in dir the way a worker runs (docs/security-model.md): with env
// (which the caller made without the supervisor's secrets), in a session
// of its own, and, when the run is sandboxed, in a sandbox: dir
// read-write, its git metadata too only when gitWritable, the network
// network says. done ends the sandbox and returns the hosts it refused.
func (s *Supervisor) untrustedCommand(ctx context.Context, argv []string, dir string, env []string, gitWritable bool, network string) (cmd *exec.Cmd, done func() []string, err error) {
	if !s.sandbox.On {
		cmd = command(ctx, argv, dir)
		cmd.Env = env
		newSession(cmd)
		return cmd, func() []string { return nil }, nil
	}
	sb := s.o.Config.Backlog.Sandbox
	home, _ := os.UserHomeDir()
	self, err := filepath.Abs(s.o.Self)
	if err != nil {
		return nil, nil, err
	}
	var mu sync.Mutex
	var refused []string
	box, err := sandbox.Open(sandbox.Options{Bwrap: s.sandbox.Bwrap, Self: self, Checkout: dir, GitWritable: gitWritable, Borrow: s.borrow(),
		ReadOnly: sb.ReadOnlyPaths(home), AllowHosts: sb.AllowHosts, Network: network,
		Refused: func(hostport, _ string) {
			mu.Lock()
			refused = append(refused, hostport)
			mu.Unlock()
		}}, env)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	inner, err := box.Cmd(argv, env, dir)
	if err != nil {
		box.Close()
		return nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	cmd = command(ctx, inner.Args, dir)
	cmd.Env, cmd.ExtraFiles = inner.Env, inner.ExtraFiles
	newSession(cmd)
	return cmd, func() []string {
		for _, f := range inner.ExtraFiles {
			f.Close()
		}
		box.Close()
		mu.Lock()
		defer mu.Unlock()
		return refused
	}, nil
}
