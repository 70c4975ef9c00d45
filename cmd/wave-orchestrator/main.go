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
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/sandbox"
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
	if code, ok := runInternal(ctx, args); ok {
		return code
	}
	return runCommand(ctx, args)
}

// runCommand runs args through the command tree.
func runCommand(ctx context.Context, args []string) int {
	root := newRootCmd(args...)
	root.SetArgs(args)
	code, msg := exitOf(root.ExecuteContext(ctx))
	if msg != "" {
		// Errors quote wave files, agent ids and paths: escape them.
		fmt.Fprintln(os.Stderr, "wave-orchestrator:", termtext.EscapeLines(msg))
	}
	return code
}

// exitOf is the exit code a command's error means and the message to
// print for it ("" for none).
func exitOf(err error) (int, string) {
	if err == nil {
		return exitcode.OK, ""
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			return ee.code, ee.err.Error()
		}
		return ee.code, ""
	}
	if isUsageError(err) {
		return exitcode.Usage, err.Error()
	}
	return exitcode.Failed, err.Error()
}

// runInternal runs the internal commands every agent run starts — the
// runner and the simulated agents — without building the command tree,
// which costs each of these processes more than the rest of its start-up
// in Go. It takes only the exact forms the launcher and the executors
// write (`agent-run --payload <path>`, `local …`, `local-worker …`,
// `sandbox-shim …`, the supervisor's held starts' `hold …`) and
// behaves as the cobra command would; anything else (`agent-run --help`,
// a global flag first, a missing payload) goes through cobra.
func runInternal(ctx context.Context, args []string) (code int, ok bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case "agent-run":
		if len(args) == 3 && args[1] == "--payload" && args[2] != "" && args[2][0] != '-' {
			return agentRun(ctx, args[2]), true
		}
	case "local":
		// Both take their flags unparsed (DisableFlagParsing): what cobra
		// would hand them is exactly the rest of the line.
		return runLocal(args[1:], os.Stdout), true
	case "local-worker":
		return runLocalWorker(args[1:], os.Stdout), true
	case runtime.HoldCommand:
		return runtime.HoldMain(args)
	}
	// A sandbox's first process inside.
	return sandbox.Main(args)
}
