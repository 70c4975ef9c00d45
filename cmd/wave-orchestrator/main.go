// Command wave-orchestrator runs fleets of AI coding agents on one
// repository in waves, each agent in its own tmux session on a per-lane
// tmux server. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

// exitError carries an exit code through cobra's error return.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, err error) error { return &exitError{code: code, err: err} }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

func run(ctx context.Context, args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitcode.OK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(os.Stderr, "wave-orchestrator:", termtext.EscapeLines(ee.err.Error()))
		}
		return ee.code
	}
	// Errors quote wave files, agent ids and paths: escape them.
	fmt.Fprintln(os.Stderr, "wave-orchestrator:", termtext.EscapeLines(err.Error()))
	if isUsageError(err) {
		return exitcode.Usage
	}
	return exitcode.Failed
}
