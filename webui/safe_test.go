package webui

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

// The page escapes exactly what the terminal views escape (termtext's
// Unsafe), tab, newline and carriage return aside (a log's layout): one
// rule, kept in two languages.
func TestThePageEscapesWhatTheTerminalEscapes(t *testing.T) {
	js, err := pageFS.ReadFile("page/app.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^const unsafeChar = /(.*)/gu;$`).FindSubmatch(js)
	k := regexp.MustCompile(`(?m)^const keptFormat = (".*");$`).FindSubmatch(js)
	if m == nil || k == nil {
		t.Fatal("app.js: no `const unsafeChar = /…/gu;` or `const keptFormat = \"…\";` line")
	}
	// JavaScript's \uXXXX is Go's \x{XXXX}; \p{Cf} is the same class.
	src := regexp.MustCompile(`\\u([0-9a-fA-F]{4})`).ReplaceAllString(string(m[1]), `\x{$1}`)
	re, err := regexp.Compile(src)
	if err != nil {
		t.Fatalf("app.js unsafeChar %s: %v", m[1], err)
	}
	kept, err := strconv.Unquote(string(k[1]))
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for r := rune(0); r <= unicode.MaxRune && bad < 10; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		page := re.MatchString(string(r)) && !strings.ContainsRune(kept, r)
		term := termtext.Unsafe(r) && r != '\t' && r != '\n' && r != '\r'
		if page != term {
			t.Errorf("%U: the page escapes it: %v, the terminal: %v", r, page, term)
			bad++
		}
	}
}
