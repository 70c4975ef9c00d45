package gate

import (
	"encoding/json"
	"slices"
	"strings"
)

// DecodeLog is the text an agent wrote, however its CLI printed it: the
// one decoder every marker parser reads through, in wave mode
// ([wave-*] markers, ParseLog) and in backlog mode ([backlog-result]).
// A plain text log stays as it is (ANSI escapes removed); a JSON event
// line is replaced by the agent texts it carries: claude
// `--output-format json` (result) and `stream-json` (message content and
// the result event), codex `exec --json` (item text, aggregated_output)
// and opencode `run --format json` (part text). A text repeated by a
// later event (stream-json's result repeats the last answer) is kept
// once. Each text ends in a newline.
func DecodeLog(log string) string {
	var b strings.Builder
	for _, t := range AgentTexts(log) {
		b.WriteString(t)
		if !strings.HasSuffix(t, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// AgentTexts is DecodeLog as its pieces, in reading order: runs of plain
// lines and the texts decoded from JSON event lines. A piece is read on
// its own: a code fence one message leaves open does not swallow the
// next message. A JSON line inside a fence of plain text is quoted, not
// an event, and stays as it is.
func AgentTexts(log string) []string {
	d := decoder{seen: map[string]bool{}}
	d.decode(StripANSI(log), 0)
	return d.out
}

type decoder struct {
	out  []string
	seen map[string]bool
}

// maxJSONDepth bounds recursion through JSON lines embedding text that
// itself holds JSON lines (codex running a command that prints events).
const maxJSONDepth = 4

func (d *decoder) decode(text string, depth int) {
	var plain []string
	flush := func() {
		if len(plain) > 0 {
			d.out = append(d.out, strings.Join(plain, "\n"))
			plain = nil
		}
	}
	fenceMark := ""
	for _, raw := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(visibleLine(raw))
		if fenceMark == "" && depth < maxJSONDepth {
			if texts, ok := embeddedTexts(trimmed); ok {
				flush()
				for _, t := range texts {
					if !d.seen[t] {
						d.seen[t] = true
						d.decode(t, depth+1)
					}
				}
				continue
			}
		}
		if m := fenceOpener(trimmed); m != "" && (fenceMark == "" || strings.HasPrefix(trimmed, fenceMark)) {
			if fenceMark == "" {
				fenceMark = m
			} else {
				fenceMark = ""
			}
		}
		plain = append(plain, raw)
	}
	if len(plain) == 1 && plain[0] == "" {
		plain = nil // the newline that ended the last event line
	}
	flush()
}

// embeddedTexts returns the agent texts of a JSON event line; ok is
// false when the line is not a JSON object or array.
func embeddedTexts(trimmed string) ([]string, bool) {
	if trimmed == "" || (trimmed[0] != '{' && trimmed[0] != '[') {
		return nil, false
	}
	var v any
	if json.Unmarshal([]byte(trimmed), &v) != nil {
		return nil, false
	}
	var out []string
	collectTexts(v, &out)
	return out, true
}

// collectTexts gathers the strings event formats put agent text in:
// codex `--json` (text, aggregated_output), claude stream-json
// (message.content[].text, or content as a plain string), opencode
// (part.text) and the answer of claude `--output-format
// json|stream-json` (result).
func collectTexts(v any, out *[]string) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			collectTexts(e, out)
		}
	case map[string]any:
		for _, k := range []string{"text", "aggregated_output", "content", "result"} {
			if s, ok := x[k].(string); ok && s != "" {
				*out = append(*out, s)
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			switch x[k].(type) {
			case map[string]any, []any:
				collectTexts(x[k], out)
			}
		}
	}
}
