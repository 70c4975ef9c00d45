package runtime

import (
	"context"
	"os/exec"
	"syscall"
	"time"
)

// GroupCommand returns a command for a user-configured argv (a verify
// step, a probe, a claim hook) in its own process group: when ctx ends the
// whole group is killed (a `make test`'s children too, not only make), and
// Wait gives up on output pipes a leftover child still holds.
func GroupCommand(ctx context.Context, argv []string, dir string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}
