package backlog

import (
	"strings"
	"testing"
)

func TestParseResult(t *testing.T) {
	done := Result{State: ResultDone}
	cases := []struct {
		name string
		log  string
		want Result
		ok   bool
	}{
		{"plain", "[backlog-result] state=done", done, true},
		{"all keys", `[backlog-result] state=needs-input question="Which DB?" detail=waiting on a choice`,
			Result{ResultNeedsInput, "Which DB?", "waiting on a choice"}, true},
		{"blocked", "[backlog-result] state=blocked detail=tests need a GPU", Result{ResultBlocked, "", "tests need a GPU"}, true},
		{"keys in any order", `[backlog-result] question=why state=blocked`, Result{ResultBlocked, "why", ""}, true},
		{"state case folded", "[backlog-result] state=DONE", done, true},
		{"quoted value with escaped quotes", `[backlog-result] state=needs-input question="Use \"v2\" or keep C:\\tmp\x?"`,
			Result{ResultNeedsInput, `Use "v2" or keep C:\tmp\x?`, ""}, true},
		{"detail runs to the end of the line", `[backlog-result] state=done detail=set retries=3 question="no" x`,
			Result{ResultDone, "", `set retries=3 question="no" x`}, true},
		{"detail that is one quoted string is unquoted", `[backlog-result] state=done detail="  padded \"x\"  "`,
			Result{ResultDone, "", `  padded "x"  `}, true},
		{"detail with two quoted strings stays raw", `[backlog-result] state=done detail="a" and "b"`,
			Result{ResultDone, "", `"a" and "b"`}, true},
		{"leading spaces, CR line end", "  \t[backlog-result] state=done detail=ok\r\n", Result{ResultDone, "", "ok"}, true},
		{"wrapped in backticks", "`[backlog-result] state=done`", done, true},
		{"unknown keys ignored", "[backlog-result] state=done commits=3", done, true},
		{"last well-formed line wins", "[backlog-result] state=blocked\nwork...\n[backlog-result] state=done\n", done, true},
		{"a later malformed line does not erase it", "[backlog-result] state=done\n[backlog-result] state=maybe\n[backlog-result] state=\"x", done, true},
		{"the prompt's template never counts", `[backlog-result] state=done|needs-input|blocked question="..." detail=...`, Result{}, false},
		{"unknown state", "[backlog-result] state=finished", Result{}, false},
		{"no state", `[backlog-result] question="x?"`, Result{}, false},
		{"unterminated quote", `[backlog-result] state=needs-input question="which`, Result{}, false},
		{"quote glued to the next word", `[backlog-result] state=done question="a"b`, Result{}, false},
		{"a word that is not key=value", "[backlog-result] state=done and more", Result{}, false},
		{"tag glued to text", "[backlog-result]state=done", Result{}, false},
		{"mentioned mid-line", "I will print [backlog-result] state=done at the end", Result{}, false},
		{"empty log", "", Result{}, false},
		{"text after a carriage return is its own line", "50% done\r[backlog-result] state=done", done, true},
	}
	for _, c := range cases {
		got, ok := ParseResult(c.log)
		if ok != c.ok || got != c.want {
			t.Errorf("%s: ParseResult(%q) = %+v, %v; want %+v, %v", c.name, c.log, got, ok, c.want, c.ok)
		}
	}
}

func TestFormatResultRoundTrips(t *testing.T) {
	for _, r := range []Result{
		{State: ResultDone},
		{State: ResultNeedsInput, Question: `Use "v2" \ or not?`, Detail: "ask the owner"},
		{State: ResultBlocked, Detail: `  "quoted" start and padding `},
		{State: ResultDone, Detail: `x="y" z`},
	} {
		line := FormatResult(r)
		if got, ok := ParseResult("noise\n" + line + "\n"); !ok || got != r {
			t.Errorf("FormatResult(%+v) = %q parses as %+v, %v", r, line, got, ok)
		}
	}
	if line := FormatResult(Result{State: ResultBlocked, Detail: "a\nb"}); strings.Contains(line, "\n") {
		t.Errorf("marker spans lines: %q", line)
	}
}

// FuzzParseResult: any log parses without panicking to a known state or
// nothing, and any result a worker can express survives printing and
// parsing.
func FuzzParseResult(f *testing.F) {
	f.Add("[backlog-result] state=done detail=all good", "q", "d")
	f.Add(`[backlog-result] state=needs-input question="a \"b\" c" detail="x"`, `a "b"`, " pad ")
	f.Add("`[backlog-result] state=blocked`\r\n[backlog-result] state=", `\`, `"`)
	f.Add("[backlog-result] question=\"\xff\" state=done", "\xff", "=")
	f.Fuzz(func(t *testing.T, log, question, detail string) {
		if r, ok := ParseResult(log); ok {
			switch r.State {
			case ResultDone, ResultNeedsInput, ResultBlocked:
			default:
				t.Fatalf("state %q from %q", r.State, log)
			}
		}
		if strings.ContainsAny(question+detail, "\r\n") {
			return
		}
		want := Result{State: ResultNeedsInput, Question: question, Detail: detail}
		line := FormatResult(want)
		got, ok := ParseResult(log + "\n" + line)
		if !ok || got != want {
			t.Fatalf("FormatResult(%+v) = %q parses as %+v, %v", want, line, got, ok)
		}
	})
}
