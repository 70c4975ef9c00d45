package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/wave-orchestrator/wave-orchestrator/config"
)

// verifyCommand is backlog.verify's command at the would-be merge commit
// checked out in dir. It runs the worker's code, so it gets what a
// worker gets (docs/security-model.md): never a secret of the
// supervisor's environment (config.SecretEnvNames: the GitHub token,
// every notify sink's URL, anything named like a key), nor its
// terminal; and, when the run is sandboxed, a sandbox of its own — dir
// read-write, its git metadata read-only, the network
// backlog.sandbox.verifyNetwork says (the allowlist by default). done
// ends the sandbox and returns the hosts it refused.
func (s *Supervisor) verifyCommand(ctx context.Context, n int, argv []string, dir, commit string) (cmd *exec.Cmd, done func() []string, err error) {
	env := verifyEnv(s.o.Config, os.Environ(), n, commit)
	cmd, done, err = s.untrustedCommand(ctx, argv, dir, env, false, s.o.Config.Backlog.Sandbox.VerifyNet())
	if err != nil {
		return nil, nil, fmt.Errorf("verify #%d: %w", n, err)
	}
	return cmd, done, nil
}

// newSession starts cmd in a session of its own: with no controlling
// terminal it can neither read the supervisor's nor type into it.
func newSession(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Setsid = false, true
}

// verifyEnv is environ without its secrets and the supervisor's tmux,
// with the issue and the merge commit verify checks.
func verifyEnv(cfg *config.Config, environ []string, n int, commit string) []string {
	drop := map[string]bool{"TMUX": true, "TMUX_PANE": true}
	for _, k := range cfg.SecretEnvNames(environ) {
		drop[k] = true
	}
	out := make([]string, 0, len(environ)+2)
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			out = append(out, kv)
		}
	}
	return append(out, "WAVE_ISSUE_NUMBER="+strconv.Itoa(n), "WAVE_MERGE_COMMIT="+commit)
}
