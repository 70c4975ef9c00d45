package agentdrive

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

// server is the name the tools are registered under: Claude Code calls
// them mcp__<server>__<tool>.
const server = "wave-orchestrator"

func tool(name string) string { return "mcp__" + server + "__" + name }

// claude is the real Claude Code CLI against model, offline: its own
// config directory, no telemetry or update checks, as root only in a
// sandbox.
type claude struct {
	t      *testing.T
	bin    string
	model  *e2etest.FakeModel
	config string // CLAUDE_CONFIG_DIR
}

func newClaude(t *testing.T) *claude {
	t.Helper()
	c := &claude{t: t, bin: e2etest.ClaudeBin(t), model: e2etest.NewFakeModel(t), config: t.TempDir()}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("model requests:\n%s", c.model.Requests())
		}
	})
	return c
}

func (c *claude) env() []string {
	return append(os.Environ(), "ANTHROPIC_BASE_URL="+c.model.URL, "ANTHROPIC_API_KEY=test", "CLAUDE_CONFIG_DIR="+c.config,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "IS_SANDBOX=1", "TMUX_TMPDIR="+e2etest.TmuxDir())
}

// run runs claude with args in dir and returns what it printed; a
// failure to start or a non-zero exit fails the test.
func (c *claude) run(dir string, args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Dir, cmd.Env = dir, c.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// mcpConfig writes an --mcp-config file that starts the built binary's
// server the way `skill install` registers it (no repository named: the
// server finds it from the directory Claude Code starts it in).
func mcpConfig(t *testing.T, args ...string) string {
	t.Helper()
	cfg := map[string]any{"mcpServers": map[string]any{server: map[string]any{
		"type": "stdio", "command": e2etest.Bin(), "args": append([]string{"mcp"}, args...),
		"env": map[string]string{"TMUX_TMPDIR": e2etest.TmuxDir()},
	}}}
	b, _ := json.Marshal(cfg)
	p := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// ask runs one prompt in dir with the server of cfg as Claude Code's
// only MCP server and the named tools allowed.
func (c *claude) ask(dir, cfg, prompt string, tools ...string) string {
	c.t.Helper()
	var allowed []string
	for _, n := range tools {
		allowed = append(allowed, tool(n))
	}
	return c.run(dir, "-p", prompt, "--mcp-config", cfg, "--strict-mcp-config", "--allowedTools", strings.Join(allowed, ","))
}

// results is the model's record of tool results, failing the test when
// there are not n.
func (c *claude) results(n int) []e2etest.ToolResult {
	c.t.Helper()
	rs := c.model.ToolResults()
	if len(rs) != n {
		c.t.Fatalf("%d tool results came back, want %d: %+v", len(rs), n, rs)
	}
	return rs
}

// offered is every tool name the CLI offered the model in any request.
func (c *claude) offered() map[string]bool {
	names := map[string]bool{}
	for _, b := range c.model.Bodies() {
		var req struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if json.Unmarshal([]byte(b), &req) == nil {
			for _, tl := range req.Tools {
				names[tl.Name] = true
			}
		}
	}
	return names
}

func fixed(v any) func([]e2etest.ToolResult) any {
	return func([]e2etest.ToolResult) any { return v }
}

// Claude Code, given the server, asks for the status of a live wave
// whose agent waits for a person: the tool result it sends back to the
// model is the `status --json` document of that wave, waiting for input
// with A1's question.
func TestClaudeCodeReadsTheStatusOfALiveWave(t *testing.T) {
	t.Parallel()
	c := newClaude(t)
	r := e2etest.NewRepo(t)
	askingWave(r)
	l := startLaunch(t, r)
	q := pendingQuestion(t, r, l)
	c.model.ScriptTools("How is the wave going?", []e2etest.ToolStep{{Tool: tool("status"), Input: fixed(map[string]any{"wave": 0})}}, "Wave 0 waits for an answer.")
	out := c.ask(r.Root, mcpConfig(t), "How is the wave going?", "status")
	res := c.results(1)[0]
	if res.IsError || res.Tool != tool("status") {
		t.Fatalf("status result %+v\nclaude said: %s", res, out)
	}
	var doc struct {
		Lane  string `json:"lane"`
		Waves []struct {
			Wave      int    `json:"wave"`
			Status    string `json:"status"`
			Questions []struct {
				ID string `json:"id"`
			} `json:"questions"`
			Agents []struct {
				ID string `json:"id"`
			} `json:"agents"`
		} `json:"waves"`
	}
	if err := json.Unmarshal([]byte(res.Text), &doc); err != nil || len(doc.Waves) != 1 {
		t.Fatalf("the status result is no status document (%v):\n%s", err, res.Text)
	}
	w := doc.Waves[0]
	if doc.Lane != "main" || w.Wave != 0 || w.Status != "waiting-for-input" || len(w.Questions) != 1 || w.Questions[0].ID != q.ID {
		t.Fatalf("status through Claude Code: %+v", doc)
	}
	if !strings.Contains(out, "Wave 0 waits for an answer.") {
		t.Fatalf("claude printed %q, not the model's final words", out)
	}
}

// questionID is the id of the only question in a questions tool result.
func questionID(t *testing.T, rs []e2etest.ToolResult) string {
	t.Helper()
	var qs []struct {
		ID string `json:"id"`
	}
	if len(rs) == 0 || json.Unmarshal([]byte(rs[0].Text), &qs) != nil || len(qs) != 1 {
		t.Errorf("the questions result holds no single question: %+v", rs)
		return "q-none"
	}
	return qs[0].ID
}

// The human loop through Claude Code: the model lists the pending
// questions, then answers A1's with the person's words, using the id the
// first tool returned; the server (started with --allow-write) answers it
// as `answer` does, the live launcher starts A1 again with the answer in
// its prompt, and the launch completes.
func TestClaudeCodeAnswersAQuestionAndTheAgentCarriesOnWithIt(t *testing.T) {
	t.Parallel()
	c := newClaude(t)
	r := e2etest.NewRepo(t)
	askingWave(r)
	l := startLaunch(t, r)
	q := pendingQuestion(t, r, l)
	const answer = "PostgreSQL 16, the shared cluster"
	c.model.ScriptTools("The person says: PostgreSQL 16", []e2etest.ToolStep{
		{Tool: tool("questions"), Input: fixed(map[string]any{})},
		{Tool: tool("answer"), Input: func(before []e2etest.ToolResult) any {
			return map[string]any{"id": questionID(t, before), "text": answer, "operator": "ana"}
		}},
	}, "Answered.")
	c.ask(r.Root, mcpConfig(t, "--allow-write"), "The person says: PostgreSQL 16, the shared cluster. Relay it.", "questions", "answer")
	rs := c.results(2)
	if rs[0].IsError || !strings.Contains(rs[0].Text, askedQuestion) {
		t.Fatalf("questions result %+v", rs[0])
	}
	if rs[1].IsError || !strings.Contains(rs[1].Text, "answered "+q.ID) || !strings.Contains(rs[1].Text, "launcher of lane main is running") {
		t.Fatalf("answer result %+v", rs[1])
	}
	if code := l.wait(t); code != 0 {
		t.Fatalf("launch exit %d after the answer through Claude Code\n%s", code, l.console())
	}
	answerReachedA1(t, r, q, answer)
	qs, _, _ := questions.List(r.Layout())
	if len(qs) != 1 || qs[0].Operator != "ana" {
		t.Fatalf("questions after: %+v", qs)
	}
}

// Without --allow-write the server lists no write tool: Claude Code
// offers the model no answer tool, refuses the model's call to it, and
// the question stays pending with the launcher waiting for it.
func TestClaudeCodeCannotAnswerThroughAReadOnlyServer(t *testing.T) {
	t.Parallel()
	c := newClaude(t)
	r := e2etest.NewRepo(t)
	askingWave(r)
	l := startLaunch(t, r)
	q := pendingQuestion(t, r, l)
	c.model.ScriptTools("Answer it yourself", []e2etest.ToolStep{
		{Tool: tool("questions"), Input: fixed(map[string]any{})},
		{Tool: tool("answer"), Input: func(before []e2etest.ToolResult) any {
			return map[string]any{"id": questionID(t, before), "text": "MySQL"}
		}},
	}, "I could not answer it.")
	c.ask(r.Root, mcpConfig(t), "Answer it yourself: MySQL.", "questions", "answer")
	rs := c.results(2)
	if rs[0].IsError || !rs[1].IsError {
		t.Fatalf("results %+v: want questions read and answer refused", rs)
	}
	offered := c.offered()
	if !offered[tool("questions")] {
		t.Fatalf("Claude Code never offered the model the server's questions tool: %v", offered)
	}
	for _, w := range []string{"submit", "answer", "stop"} {
		if offered[tool(w)] {
			t.Fatalf("Claude Code offered the model %s of a read-only server", tool(w))
		}
	}
	qs, _, _ := questions.List(r.Layout())
	if len(qs) != 1 || qs[0].ID != q.ID || qs[0].State != questions.Pending {
		t.Fatalf("the question after a refused answer: %+v", qs)
	}
	if l.cmd.ProcessState != nil {
		t.Fatalf("the launcher ended: %s", l.console())
	}
}
