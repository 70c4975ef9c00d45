package agentdrive

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// connect starts `wave-orchestrator mcp args…` in the repository and
// connects the MCP SDK's own client to it; the session closes with the
// test.
func connect(t *testing.T, r *e2etest.Repo, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(e2etest.Bin(), append([]string{"mcp"}, args...)...)
	cmd.Dir = r.Root
	cmd.Env = r.Command(context.Background()).Env
	client := mcp.NewClient(&mcp.Implementation{Name: "agentdrive-test", Version: "1"}, nil)
	s, err := client.Connect(e2etest.Context(t), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to wave-orchestrator mcp: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// call calls a tool and returns its text and whether it is a tool error;
// a protocol error fails the test.
func call(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := s.CallTool(e2etest.Context(t), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n"), res.IsError
}

func toolNames(t *testing.T, s *mcp.ClientSession) []string {
	t.Helper()
	res, err := s.ListTools(e2etest.Context(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if len(tl.Description) < 80 {
			t.Errorf("tool %s: a description of %d characters tells a model too little", tl.Name, len(tl.Description))
		}
	}
	slices.Sort(names)
	return names
}

var readTools = []string{"backlog_plan", "backlog_status", "output_tail", "questions", "run_state", "status", "usage", "wait"}

// Write tools are off by default: a server started without --allow-write
// lists only the read tools, and a client that calls a write tool anyway
// gets a tool error naming the flag, with nothing answered. With the
// flag, submit, answer and stop are listed too.
func TestWriteToolsAreOffUnlessTheServerIsStartedWithAllowWrite(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	ro := connect(t, r)
	if got := toolNames(t, ro); !slices.Equal(got, readTools) {
		t.Fatalf("read-only server lists %v, want %v", got, readTools)
	}
	for name, args := range map[string]map[string]any{
		"answer": {"id": "q-1", "text": "yes"}, "submit": {"kind": "launch"}, "stop": {"what": "lane"},
	} {
		text, isErr := call(t, ro, name, args)
		if !isErr || !strings.Contains(text, "--allow-write") {
			t.Errorf("%s on a read-only server: error %v, %q; want a tool error naming --allow-write", name, isErr, text)
		}
	}
	if evs := r.Events(); len(evs) != 0 {
		t.Fatalf("a refused write left events: %+v", evs)
	}
	rw := connect(t, r, "--allow-write")
	want := slices.Sorted(slices.Values(append([]string{"answer", "stop", "submit"}, readTools...)))
	if got := toolNames(t, rw); !slices.Equal(got, want) {
		t.Fatalf("--allow-write server lists %v, want %v", got, want)
	}
}

// A tool given what the command refuses answers with the command's own
// error, as a tool error that says how to fix it; the session goes on.
func TestBadToolInputIsAToolErrorInTheCommandsWords(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	s := connect(t, r, "--allow-write")
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"status", map[string]any{"wave": 7}, "no wave 7; the lane's waves are 0"},
		{"run_state", map[string]any{"runId": "20261201T000000.000Z-abcdef"}, "20261201T000000.000Z-abcdef"},
		{"answer", map[string]any{"id": "q-nope", "text": "yes"}, `no question "q-nope"`},
		{"output_tail", map[string]any{"wave": 0, "agent": "A1"}, "no agent run yet"},
		{"submit", map[string]any{"kind": "launch", "wave": 0}, "kind launch takes no wave"},
		{"submit", map[string]any{"kind": "backlog"}, "no open backlog run to resume"},
		{"wait", map[string]any{"timeoutSeconds": 0}, "minimum"},
		{"usage", map[string]any{"by": "colour"}, "colour"},
	}
	for _, c := range cases {
		text, isErr := call(t, s, c.tool, c.args)
		if !isErr || !strings.Contains(text, c.want) {
			t.Errorf("%s %v: error %v %q, want a tool error containing %q", c.tool, c.args, isErr, text, c.want)
		}
	}
	if text, isErr := call(t, s, "status", nil); isErr || !strings.Contains(text, `"lane": "main"`) {
		t.Fatalf("status after the errors: %v %s", isErr, text)
	}
}

// rawServer is the server on pipes, spoken to line by line.
type rawServer struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr strings.Builder
}

func startRaw(t *testing.T, r *e2etest.Repo) *rawServer {
	t.Helper()
	s := &rawServer{cmd: r.Command(context.Background(), "mcp")}
	var err error
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.out = bufio.NewScanner(out)
	s.out.Buffer(nil, 16<<20)
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.cmd.Process.Kill(); _ = s.cmd.Wait() })
	return s
}

func (s *rawServer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		t.Fatalf("write %q: %v", line, err)
	}
}

// reply reads the next message the server wrote.
func (s *rawServer) reply(t *testing.T) map[string]any {
	t.Helper()
	if !s.out.Scan() {
		t.Fatalf("the server closed its output: %v\nstderr: %s", s.out.Err(), s.stderr.String())
	}
	var m map[string]any
	if err := json.Unmarshal(s.out.Bytes(), &m); err != nil {
		t.Fatalf("server wrote %q: %v", s.out.Text(), err)
	}
	return m
}

// The server outlives a client's mistakes and its leaving: a line that
// is not JSON, and one that is JSON but no JSON-RPC message, each get an
// error reply and the next request is served; a client that goes away
// while a wait is in flight (600 s) ends the server at once, cleanly.
func TestTheServerSurvivesMalformedLinesAndAClientLeavingMidWait(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	s := startRaw(t, r)
	s.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := s.reply(t); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"questions","arg`)
	if m := s.reply(t); m["error"] == nil || m["id"] != nil {
		t.Fatalf("a cut-off line: %v, want a parse error", m)
	}
	s.send(t, `{"id":3,"method":"tools/call"}`)
	if m := s.reply(t); m["error"] == nil || m["id"] != 3.0 {
		t.Fatalf("a message without its version: %v, want an invalid-request error for id 3", m)
	}
	s.send(t, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"wait","arguments":{"timeoutSeconds":600}}}`)
	s.send(t, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"questions","arguments":{}}}`)
	if m := s.reply(t); m["id"] != 5.0 || m["result"] == nil {
		t.Fatalf("questions while a wait is in flight: %v", m)
	}
	if err := s.in.Close(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the server ended with %v after its client left\n%s", err, s.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the server still runs 30 s after its client left mid-wait\n%s", s.stderr.String())
	}
	if strings.Contains(s.stderr.String(), "panic") {
		t.Fatalf("stderr: %s", s.stderr.String())
	}
}
