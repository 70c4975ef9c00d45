package main

import (
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/localagent"
)

// newLocalCmd is the built-in simulated agent the `local` executor runs.
// Flags are parsed by localagent itself, so cobra passes them through.
func newLocalCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "local --prompt-file <path> [--delay 2s] [--exit-code N] [--fail-attempts N] [--verdict V] [--security S]",
		Short:  "Run the built-in simulated agent (used by the local executor)",
		Hidden: true,
		Example: `  # the local executor runs this for an agent; to try it by hand:
  wave-orchestrator local --prompt-file prompt.md --delay 1s --exit-code 0`,
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			if code := runLocal(args, c.OutOrStdout()); code != 0 {
				return withCode(code, nil)
			}
			return nil
		},
	}
}

// newLocalWorkerCmd is the built-in simulated backlog worker the `local`
// executor runs for `backlog run`.
func newLocalWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "local-worker --prompt-file <path> [--delay 2s]",
		Short:              "Run the built-in simulated backlog worker (used by the local executor in backlog mode)",
		Example:            "  wave-orchestrator local-worker --prompt-file prompt.md --delay 2s   # as the local executor starts it",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			if code := runLocalWorker(args, c.OutOrStdout()); code != 0 {
				return withCode(code, nil)
			}
			return nil
		},
	}
}

// runLocal runs the simulated agent and returns its exit code.
func runLocal(args []string, out io.Writer) int {
	// Like a real agent, the simulated one dies of SIGTERM/SIGINT
	// (main catches them for the launcher's sake).
	signal.Reset(syscall.SIGTERM, os.Interrupt)
	return localagent.Main(args, out, os.Getenv)
}

// runLocalWorker runs the simulated backlog worker and returns its exit
// code.
func runLocalWorker(args []string, out io.Writer) int {
	signal.Reset(syscall.SIGTERM, os.Interrupt)
	return localagent.WorkerMain(args, out, os.Getenv)
}
