package backlog

import (
	"strings"
	"unicode"
)

// ResultTag starts the marker line a worker prints last:
//
//	[backlog-result] state=done|needs-input|blocked question="..." detail=...
//
// Keys are separated by spaces; a value with spaces is double-quoted,
// with \" and \\ as its only escapes. detail= runs to the end of the line
// (unquoted when it is exactly one quoted string). state is required;
// unknown keys are ignored so a later worker may say more.
const ResultTag = "[backlog-result]"

// Result states.
const (
	ResultDone       = "done"
	ResultNeedsInput = "needs-input"
	ResultBlocked    = "blocked"
)

// Result is a parsed [backlog-result] marker.
type Result struct {
	State    string `json:"state"`
	Question string `json:"question,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

// ParseResult returns the last well-formed marker line of an agent's
// text: its log decoded by gate.DecodeLog, so a marker inside claude's
// json or stream-json events, or codex's or opencode's, is a line here. A line may be indented, wrapped in one pair of
// backticks, and end in "\r". A line that is not well-formed (no or an
// unknown state, an unterminated quote, a word that is not key=value) is
// passed over, so a template echoed from the prompt
// ("state=done|needs-input|blocked") never counts. ok is false when no
// line is well-formed.
func ParseResult(log string) (Result, bool) {
	// A carriage return starts the line over on a terminal, so what
	// follows one is a line of its own (progress output, CRLF logs).
	lines := strings.FieldsFunc(log, func(r rune) bool { return r == '\n' || r == '\r' })
	for i := len(lines) - 1; i >= 0; i-- {
		if r, ok := parseResultLine(lines[i]); ok {
			return r, true
		}
	}
	return Result{}, false
}

func parseResultLine(line string) (Result, bool) {
	t := strings.TrimSpace(line)
	if len(t) >= 2 && strings.HasPrefix(t, "`") && strings.HasSuffix(t, "`") && strings.Count(t, "`") == 2 {
		t = strings.TrimSpace(t[1 : len(t)-1])
	}
	rest, ok := cutFold(t, ResultTag)
	if !ok || (rest != "" && !startsWithSpace(rest)) {
		return Result{}, false
	}
	var r Result
	for {
		rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		if rest == "" {
			break
		}
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 || strings.IndexFunc(rest[:eq], unicode.IsSpace) >= 0 {
			return Result{}, false
		}
		key := strings.ToLower(rest[:eq])
		rest = rest[eq+1:]
		if key == "detail" {
			r.Detail = detailValue(rest)
			break
		}
		var v string
		if v, rest, ok = nextValue(rest); !ok {
			return Result{}, false
		}
		switch key {
		case "state":
			r.State = strings.ToLower(v)
		case "question":
			r.Question = v
		}
	}
	switch r.State {
	case ResultDone, ResultNeedsInput, ResultBlocked:
		return r, true
	}
	return Result{}, false
}

func startsWithSpace(s string) bool {
	return strings.IndexFunc(s, unicode.IsSpace) == 0
}

// nextValue reads one value: a quoted string followed by a space or the
// end, or a run of non-space characters.
func nextValue(s string) (v, rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		end := strings.IndexFunc(s, unicode.IsSpace)
		if end < 0 {
			return s, "", true
		}
		return s[:end], s[end:], true
	}
	v, n, ok := unquote(s)
	if !ok || (n < len(s) && !startsWithSpace(s[n:])) {
		return "", "", false
	}
	return v, s[n:], true
}

// unquote reads a quoted string at the start of s and returns its value
// and the bytes it used.
func unquote(s string) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return b.String(), i + 1, true
		case c == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\'):
			b.WriteByte(s[i+1])
			i++
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}

// detailValue is the rest of the line, unquoted when it is exactly one
// quoted string.
func detailValue(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, `"`) {
		if v, n, ok := unquote(s); ok && n == len(s) {
			return v
		}
	}
	return s
}

// FormatResult prints r as a marker line ParseResult reads back as r.
// Newlines in the values become spaces: a marker is one line.
func FormatResult(r Result) string {
	oneLine := strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")
	var b strings.Builder
	b.WriteString(ResultTag + " state=" + r.State)
	if r.Question != "" {
		b.WriteString(" question=" + quote(oneLine.Replace(r.Question)))
	}
	if d := oneLine.Replace(r.Detail); d != "" {
		if strings.TrimSpace(d) != d || strings.HasPrefix(d, `"`) {
			d = quote(d)
		}
		b.WriteString(" detail=" + d)
	}
	return b.String()
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
