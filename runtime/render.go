package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// paneRender turns the JSON event lines of claude `stream-json`/`json`,
// codex `exec --json` and opencode `--format json` into the text they
// carry, for the pane only: agent.log keeps every byte (markers, usage,
// salvage and adoption read it). Other output passes through unchanged
// and at once; only a line that starts with '{' is held until its end.
type paneRender struct {
	w    io.Writer
	line []byte
	json bool // the current line is being held
	mid  bool // inside a passed-through line
	// messages: a message event was shown, so a result event's answer
	// (stream-json repeats the last message there) is not shown again.
	messages bool
}

// maxRenderLine bounds a held line; a longer one is passed through raw.
const maxRenderLine = 1 << 20

func newPaneRender(w io.Writer) *paneRender { return &paneRender{w: w} }

func (r *paneRender) Write(p []byte) (int, error) {
	n := len(p)
	var out []byte
	for len(p) > 0 {
		if !r.json && !r.mid {
			i := 0
			for i < len(p) && (p[i] == ' ' || p[i] == '\t') {
				i++
			}
			if i < len(p) && p[i] == '{' {
				r.json = true
			} else if i < len(p) {
				r.mid = true
			}
		}
		j := bytes.IndexByte(p, '\n')
		end := len(p)
		if j >= 0 {
			end = j + 1
		}
		chunk := p[:end]
		p = p[end:]
		switch {
		case r.json && len(r.line)+len(chunk) > maxRenderLine:
			out = append(append(out, r.line...), chunk...)
			r.line, r.json, r.mid = r.line[:0], false, j < 0
		case r.json:
			r.line = append(r.line, chunk...)
			if j >= 0 {
				out = append(out, r.renderEvent(r.line)...)
				r.line, r.json = r.line[:0], false
			}
		default:
			out = append(out, chunk...)
			if j >= 0 {
				r.mid = false
			}
		}
	}
	if len(out) > 0 {
		if _, err := r.w.Write(out); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// renderEvent is the text of one event line ("\r\n"-terminated lines), or
// the line itself when it is not an event this knows.
func (r *paneRender) renderEvent(line []byte) []byte {
	var ev map[string]any
	if json.Unmarshal(bytes.TrimSpace(line), &ev) != nil {
		return line
	}
	texts, known := eventTexts(ev, r.messages)
	if t, _ := ev["type"].(string); t == "assistant" {
		r.messages = true
	}
	if !known {
		return line
	}
	var b strings.Builder
	for _, t := range texts {
		b.WriteString(strings.ReplaceAll(strings.TrimRight(strings.ReplaceAll(t, "\r\n", "\n"), "\n"), "\n", "\r\n"))
		b.WriteString("\r\n")
	}
	return []byte(b.String())
}

// eventTexts reads the shapes the vendors print; known is false for a
// JSON line that is none of them.
func eventTexts(ev map[string]any, messagesShown bool) (texts []string, known bool) {
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	obj := func(m map[string]any, k string) map[string]any { o, _ := m[k].(map[string]any); return o }
	switch typ := str(ev, "type"); {
	case typ == "assistant" || typ == "user":
		msg := obj(ev, "message")
		blocks, _ := msg["content"].([]any)
		for _, x := range blocks {
			bl, _ := x.(map[string]any)
			switch str(bl, "type") {
			case "text":
				texts = append(texts, str(bl, "text"))
			case "tool_use":
				texts = append(texts, "→ "+str(bl, "name"))
			}
		}
		if s := str(msg, "content"); s != "" {
			texts = append(texts, s)
		}
		return texts, true
	case typ == "system":
		if m := str(ev, "model"); m != "" {
			return []string{"[claude] " + str(ev, "subtype") + " (" + m + ")"}, true
		}
		return nil, true
	case typ == "result":
		var m usage.Meter
		m.Write(append(mustJSON(ev), '\n'))
		s := "[claude] " + str(ev, "subtype")
		if u := m.Total(); u.Known() {
			s += ": " + u.String()
		}
		if a := str(ev, "result"); a != "" && !messagesShown {
			// json output prints only this line: it holds the answer.
			return []string{a, s}, true
		}
		return []string{s}, true
	case typ == "item.completed" || typ == "item.started":
		it := obj(ev, "item")
		switch str(it, "type") {
		case "agent_message", "reasoning":
			return []string{str(it, "text")}, true
		case "command_execution":
			if typ == "item.started" {
				return []string{"$ " + str(it, "command")}, true
			}
			return []string{strings.TrimRight(str(it, "aggregated_output"), "\n")}, true
		}
		return nil, true
	case strings.HasPrefix(typ, "turn.") || strings.HasPrefix(typ, "thread."):
		if u := obj(ev, "usage"); u != nil {
			return []string{fmt.Sprintf("[codex] %s: %v in, %v out", typ, u["input_tokens"], u["output_tokens"])}, true
		}
		return nil, true
	case obj(ev, "part") != nil:
		part := obj(ev, "part")
		switch str(part, "type") {
		case "text":
			return []string{str(part, "text")}, true
		case "tool":
			return []string{"→ " + str(part, "tool")}, true
		}
		return nil, true
	}
	return nil, false
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
