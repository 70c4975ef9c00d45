package e2etest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ToolStep is one scripted model turn that asks for a tool by name (a
// tool_use block of the Messages API). Input builds the tool's arguments
// from the results of the steps before it, so a step can use what an
// earlier tool returned (a question's id).
type ToolStep struct {
	Tool  string
	Input func(before []ToolResult) any
}

// ToolResult is one tool_result block the CLI sent back in its next
// request: the tool it answers, the text it carried, and whether the CLI
// marked it an error.
type ToolResult struct {
	ToolUseID, Tool, Text string
	IsError               bool
}

// toolScript is a conversation ScriptTools set up.
type toolScript struct {
	trigger string
	steps   []ToolStep
	final   string
}

// ScriptTools scripts the model for a conversation whose user text holds
// trigger and whose request offers tools (the CLI's side queries offer
// none): each turn asks for the next step's tool, once the previous
// step's result came back; after the last result it ends its turn with
// final. Every result is recorded (ToolResults). Other requests get the
// default script.
func (f *FakeModel) ScriptTools(trigger string, steps []ToolStep, final string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tools = append(f.tools, toolScript{trigger: trigger, steps: steps, final: final})
}

// ToolResults is every tool result the CLI sent back so far, in order,
// each once.
func (f *FakeModel) ToolResults() []ToolResult {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ToolResult(nil), f.results...)
}

// Bodies is every Messages request body received so far, as sent.
func (f *FakeModel) Bodies() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.bodies...)
}

// scriptedTurn is the reply of a ScriptTools conversation to req, and
// false when req belongs to none.
func (f *FakeModel) scriptedTurn(req msgRequest) (content []block, stop, what string, ok bool) {
	if len(req.Tools) == 0 {
		return nil, "", "", false
	}
	var user string
	var results []ToolResult
	for _, m := range req.Messages {
		for _, b := range blocksOf(m.Content) {
			switch {
			case m.Role == "user" && b.Type == "text":
				user += b.Text + "\n"
			case m.Role == "user" && b.Type == "tool_result":
				results = append(results, ToolResult{ToolUseID: b.ToolUseID, Text: resultText(b.Content), IsError: b.IsError})
			}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.tools {
		if !strings.Contains(user, s.trigger) {
			continue
		}
		for i := range results {
			if n, ok := stepOf(results[i].ToolUseID); ok && n < len(s.steps) {
				results[i].Tool = s.steps[n].Tool
			}
			f.record(results[i])
		}
		n := len(results)
		if n >= len(s.steps) {
			return []block{{Type: "text", Text: s.final}}, "end_turn", "scripted final", true
		}
		in, _ := json.Marshal(s.steps[n].Input(results))
		id := fmt.Sprintf("toolu_script_%d", n)
		return []block{{Type: "tool_use", ID: id, Name: s.steps[n].Tool, Input: in}}, "tool_use", "tool_use " + s.steps[n].Tool, true
	}
	return nil, "", "", false
}

// record keeps r once (the CLI resends the whole conversation each turn).
func (f *FakeModel) record(r ToolResult) {
	for _, have := range f.results {
		if have.ToolUseID == r.ToolUseID {
			return
		}
	}
	f.results = append(f.results, r)
}

func stepOf(id string) (int, bool) {
	var n int
	_, err := fmt.Sscanf(id, "toolu_script_%d", &n)
	return n, err == nil
}

// resultText is a tool_result's content: a string, or the text of its
// blocks.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var bs []block
	_ = json.Unmarshal(raw, &bs)
	var out []string
	for _, b := range bs {
		if b.Type == "text" {
			out = append(out, b.Text)
		}
	}
	return strings.Join(out, "\n")
}
