// Package mcpserver owns wave-orchestrator's Model Context Protocol server
// (`wave-orchestrator mcp`, docs/mcp.md): the tools an agent such as Claude
// Code uses to read a lane — its status, questions, backlog, spend,
// submitted runs, an agent's output — and to wait for it, and, only when
// the server was started with write access, to submit runs, answer
// questions and stop.
//
// It owns what the model reads: tool names, descriptions, input schemas,
// results, and errors in words with their fix. It does no lane work of its
// own: each tool call becomes the command line the CLI would run, which
// the binary runs in its own process (Lane.Command), so a tool reads and
// writes exactly what the command does — the same records, intents,
// idempotence and error messages. Untrusted text a tool returns (an
// agent's output) is cleaned and fenced as data.
package mcpserver

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name is the server's name in the MCP handshake and the name `skill
// install` registers it under: Claude Code calls its tools
// mcp__wave-orchestrator__<tool>.
const Name = "wave-orchestrator"

// Outcome is what one command printed and how it ended, as a shell would
// see it.
type Outcome struct {
	Stdout, Stderr string
	// Code is the process exit code the command would have ended with.
	Code int
	// Err is the error message the CLI would print after
	// "wave-orchestrator: " ("" when none).
	Err string
}

// TailQuery names whose output to read: a wave agent (Wave and Agent) or
// a backlog worker (Issue, of the newest backlog run or Run).
type TailQuery struct {
	Lane  string
	Wave  *int
	Agent string
	Issue *int
	Run   string
}

// Tail is the end of a run's log as written, untrusted.
type Tail struct {
	// Text is the log's last bytes (a bounded read), raw.
	Text string
	// Source says whose log it is, in words: "wave 0 agent A1, run
	// A1-a2 (running), /…/agent.log".
	Source string
}

// Lane is what the tools need from the binary: its own commands, run as
// typed on a command line, and what no command prints.
type Lane interface {
	// Command runs the CLI with args (a command line after the program
	// name, global flags included) in this process.
	Command(ctx context.Context, args []string) Outcome
	// Tail reads the end of an agent's or worker's log.
	Tail(ctx context.Context, q TailQuery) (Tail, error)
	// SubmitBacklog queues `backlog run` with args (its flags) as a
	// submitted run, detached, as `submit` queues a launch.
	SubmitBacklog(ctx context.Context, lane string, args []string, noQueue bool) Outcome
}

// Options configure a server.
type Options struct {
	Lane Lane
	// AllowWrite lists and serves the write tools (submit, answer, stop).
	AllowWrite bool
	// Version is the binary's version line, sent in the handshake.
	Version string
	Logger  *slog.Logger
}

// New builds the server with the read tools, and the write tools when
// o.AllowWrite.
func New(o Options) *mcp.Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "wave-orchestrator", Version: o.Version},
		&mcp.ServerOptions{Instructions: instructions(o.AllowWrite), Logger: o.Logger,
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	t := tools{lane: o.Lane}
	t.addRead(s)
	if o.AllowWrite {
		t.addWrite(s)
	} else {
		s.AddReceivingMiddleware(refuseWrites)
	}
	return s
}

// Serve runs s on t until the client goes away or ctx ends. A client
// that disconnects is the normal end, not an error.
func Serve(ctx context.Context, s *mcp.Server, t mcp.Transport) error {
	err := s.Run(ctx, t)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func instructions(write bool) string {
	s := `wave-orchestrator runs fleets of coding agents on this repository: waves of agents (launch, resume) and backlog runs (one worker per issue, merged one at a time into a wave branch, one final pull request). Read a lane with status, questions, backlog_status, usage; follow a run with run_state, wait and output_tail; preview a backlog run with backlog_plan. The tools never merge anything by hand: the orchestrator merges after its gates pass.`
	if write {
		return s + ` Write tools: submit (starts a run detached and returns its run id at once), answer (relays a person's answer to a question), stop.`
	}
	return s + ` This server is read-only: submit, answer and stop exist only when it is started with ` + "`wave-orchestrator mcp --allow-write`" + `; until then use the CLI or ask the person.`
}

// refuseWrites answers a call of a write tool on a read-only server as a
// tool error that names the flag, instead of the protocol's "unknown
// tool": a client may call a tool it saw elsewhere.
func refuseWrites(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && isWriteTool(p.Name) {
			r := &mcp.CallToolResult{}
			r.SetError(fmt.Errorf("%s is a write tool and this server is read-only: the person running it must start it with `wave-orchestrator mcp --allow-write` (or install it with `wave-orchestrator skill install --allow-write`); until then, ask them to do this step", p.Name))
			return r, nil
		}
		return next(ctx, method, req)
	}
}
