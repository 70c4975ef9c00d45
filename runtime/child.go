package runtime

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"syscall"
)

// Child is a process this one starts and waits for: a submitted run's
// launcher under the lane's watcher. It runs in this process's group (a
// terminal's Ctrl-C reaches both), and a stop is passed on to it as
// SIGTERM, which a launcher answers by ending its wave.
type Child struct {
	cmd *exec.Cmd
}

// Ended is how a child ended: its exit code, or the signal that killed
// it (Code is then -1).
type Ended struct {
	Code   int
	Signal syscall.Signal
}

// StartChild starts argv with its output going to stdout and stderr.
func StartChild(argv []string, stdout, stderr io.Writer) (*Child, error) {
	if len(argv) == 0 {
		return nil, errors.New("start child: empty command line")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Child{cmd: cmd}, nil
}

// Pid is the child's process id.
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Wait waits for the child to end. When ctx ends first the child is sent
// SIGTERM once and still waited for: it ends in its own time. The error
// is for a child whose end could not be learned.
func (c *Child) Wait(ctx context.Context) (Ended, error) {
	stop := context.AfterFunc(ctx, func() { _ = c.cmd.Process.Signal(syscall.SIGTERM) })
	defer stop()
	err := c.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return Ended{Code: -1, Signal: ws.Signal()}, nil
		}
		return Ended{Code: ee.ExitCode()}, nil
	}
	if err != nil {
		return Ended{Code: -1}, err
	}
	return Ended{}, nil
}
