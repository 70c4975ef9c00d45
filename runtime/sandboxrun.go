package runtime

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/wave-orchestrator/wave-orchestrator/sandbox"
)

// SandboxName is Record.Sandbox for a run confined with bubblewrap.
const SandboxName = "bubblewrap"

// openSandbox opens the run's sandbox (nil when it has none) for an
// agent whose environment is env. Every host its proxy refuses goes
// into the run's record, which the agent cannot reach.
func (r *Runner) openSandbox(p *Payload, env []string, rw *recordWriter) (*sandbox.Box, error) {
	sb := p.Sandbox
	if sb == nil {
		return nil, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: our own binary: %w", err)
	}
	box, err := sandbox.Open(sandbox.Options{Bwrap: sb.Bwrap, Self: self, Checkout: p.Cwd, GitWritable: sb.GitWritable, Borrow: sb.Borrow,
		Writable: sb.Writable, ReadOnly: sb.ReadOnly, Needs: sb.Needs, AllowHosts: sb.AllowHosts, Network: sb.Network,
		Refused: func(hostport, why string) { r.blocked(rw, hostport, why) },
	}, env)
	if err != nil {
		return nil, err
	}
	if err := rw.update(func(rec *Record) { rec.Sandbox = SandboxName }); err != nil {
		r.Logger.Warn("record_write_failed", "path", rw.path, "err", err)
	}
	return box, nil
}

// blocked records a host the sandbox refused.
func (r *Runner) blocked(rw *recordWriter, hostport, why string) {
	r.Logger.Info("sandbox_refused", "host", hostport, "why", why)
	err := rw.update(func(rec *Record) {
		if len(rec.BlockedHosts) < MaxBlockedHosts {
			rec.BlockedHosts = append(rec.BlockedHosts, hostport)
		}
	})
	if err != nil {
		r.Logger.Warn("record_write_failed", "path", rw.path, "err", err)
	}
}

// sandboxNote is the log's line about the sandbox at the end of a run:
// the hosts refused (said then, not as they happen, so no line of ours
// lands inside a line of the agent's output).
func sandboxNote(rec Record) string {
	if len(rec.BlockedHosts) == 0 {
		return ""
	}
	return "[wave] the sandbox refused connections to: " + strings.Join(rec.BlockedHosts, ", ")
}

// agentCmd is the command that starts the agent with env: in its
// sandbox when it has one.
func agentCmd(p *Payload, env []string, box *sandbox.Box) (*exec.Cmd, error) {
	if box == nil {
		cmd := exec.Command(p.Argv[0], p.Argv[1:]...)
		cmd.Env = env
		return cmd, nil
	}
	return box.Cmd(p.Argv, env, p.Cwd)
}

// startConfined starts a sandbox's bwrap with sandbox.StopSignals
// ignored, which it keeps across exec, and takes the runner's own
// handling back as soon as bwrap runs: a stop sent to the run's group
// then reaches the agent inside with its grace, never bwrap. A stop that
// reaches the runner in the instant between is not lost: Terminate
// follows its TERM to the runner with one to the group.
func (r *Runner) startConfined(cmd *exec.Cmd) error {
	signal.Ignore(sandbox.StopSignals...)
	defer func() {
		signal.Reset(syscall.SIGQUIT)
		if r.sigs != nil {
			signal.Notify(r.sigs, runnerSignals...)
		}
	}()
	return cmd.Start()
}
