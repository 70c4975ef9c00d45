package main

import (
	"context"
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/kube"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// newAgentRunCmd is the runner inside each agent's tmux pane
// (docs/run-records.md).
func newAgentRunCmd() *cobra.Command {
	var payload string
	c := &cobra.Command{
		Use:    "agent-run --payload <run>/launch.json",
		Short:  "Run one agent inside its tmux pane (internal)",
		Hidden: true,
		Example: `  # tmux runs this in each agent's pane; it is not for people:
  wave-orchestrator agent-run --payload .wave/lanes/main/waves/0/runs/A1-a1/launch.json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if payload == "" {
				return usageError{errMissingPayload}
			}
			if code := agentRun(c.Context(), payload); code != 0 {
				return withCode(code, nil)
			}
			return nil
		},
	}
	c.Flags().StringVar(&payload, "payload", "", "path of the run's launch.json")
	return c
}

// agentRun runs the agent of the launch.json at payload and returns the
// runner's exit code (the agent's final code).
func agentRun(ctx context.Context, payload string) int {
	// The runner handles TERM/INT/HUP itself (forward, record, exit
	// after the agent); main's signal context must not cut that short.
	ctx = context.WithoutCancel(ctx)
	// A run of the kubernetes backend also reports to its cluster.
	return runtime.RunAgentWith(ctx, payload, runtime.Stdio{In: os.Stdin, Out: os.Stdout},
		runtime.Hooks{NewReporter: kube.NewReporter, NewCheckout: kube.NewCheckout})
}

var errMissingPayload = errors.New("agent-run: --payload is required")
