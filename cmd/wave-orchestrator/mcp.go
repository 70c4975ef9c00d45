package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/mcpserver"
)

func newMCPCmd(g *globals) *cobra.Command {
	var allowWrite bool
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the lane to an agent over the Model Context Protocol on stdin/stdout (docs/mcp.md)",
		Long: `Run an MCP server on stdin and stdout for an agent such as Claude Code:
tools to read the lane (status, questions, backlog_status, backlog_plan,
usage, run_state, output_tail) and to wait for a run or the next change.
With --allow-write it also lists submit (a launch, resume or backlog run,
detached), answer and stop; without it they are refused and not listed.
Each tool runs the same code as the command it names. The client starts
it; ` + "`wave-orchestrator skill install`" + ` registers it for Claude Code.`,
		Example: `  claude mcp add wave-orchestrator -- wave-orchestrator mcp
  wave-orchestrator mcp --allow-write --lane main
  claude -p --mcp-config .mcp.json --allowedTools mcp__wave-orchestrator__status "What is running?"`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			root, err := g.root()
			if err != nil {
				return err
			}
			// The protocol owns stdout: anything else that writes there
			// from now on goes to stderr, which the client logs.
			proto := os.Stdout
			os.Stdout = os.Stderr
			logger := slog.New(slog.NewTextHandler(c.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
			s := mcpserver.New(mcpserver.Options{
				Lane:       &mcpLane{root: root, lane: g.lane},
				AllowWrite: allowWrite,
				Version:    readBuildInfo().short(),
				Logger:     logger,
			})
			return mcpserver.Serve(c.Context(), s, mcpserver.Stdio(os.Stdin, proto))
		},
	}
	c.Flags().BoolVar(&allowWrite, "allow-write", false, "list and serve the write tools: submit, answer, stop")
	return c
}

// mcpLane is mcpserver.Lane for the repository at root: the tools' command
// lines run through this binary's own command tree, in this process, with
// the server's repository and lane (a tool's own lane comes later on the
// line and wins).
type mcpLane struct {
	root, lane string
}

func (l *mcpLane) globalArgs() []string {
	a := []string{"--repo-root=" + l.root}
	if l.lane != "" {
		a = append(a, "--lane="+l.lane)
	}
	return a
}

func (l *mcpLane) Command(ctx context.Context, args []string) mcpserver.Outcome {
	return runInProcess(ctx, append(l.globalArgs(), args...))
}

// runInProcess runs a command line through a fresh command tree, as
// runCommand does, capturing what it prints; stdin is empty. A panic is
// an outcome too, never the end of the server.
func runInProcess(ctx context.Context, args []string) (o mcpserver.Outcome) {
	var out, errb bytes.Buffer
	defer func() {
		if p := recover(); p != nil {
			o = mcpserver.Outcome{Stdout: out.String(), Stderr: errb.String(), Code: exitcode.Failed,
				Err: fmt.Sprintf("internal error running %q: %v (please report it)", strings.Join(args, " "), p)}
		}
	}()
	root := newRootCmd(args...)
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetIn(strings.NewReader(""))
	code, msg := exitOf(root.ExecuteContext(ctx))
	return mcpserver.Outcome{Stdout: out.String(), Stderr: errb.String(), Code: code, Err: msg}
}
