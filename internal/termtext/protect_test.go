package termtext

import (
	"strings"
	"testing"
)

// What a user reading a terminal is protected from: each case is text an
// issue, a worker or a wave file could hold, and what the terminal is
// given instead.
type protection struct{ name, in, want string }

func checkEscape(t *testing.T, cases []protection) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Escape(tc.in)
			if got != tc.want {
				t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if HasControl(got) {
				t.Errorf("Escape(%q) = %q still holds a character a terminal acts on", tc.in, got)
			}
			if !HasControl(tc.in) {
				t.Errorf("HasControl(%q) = false: an id or title holding it would be accepted", tc.in)
			}
		})
	}
}

func TestTermTextNeverLetsAnIssueTitleMoveTheCursor(t *testing.T) {
	checkEscape(t, []protection{
		{"clear screen and home", "Fix login\x1b[2J\x1b[H", `Fix login\x1b[2J\x1b[H`},
		{"cursor up over the line before", "ok\x1b[1A\x1b[2Kmerged", `ok\x1b[1A\x1b[2Kmerged`},
		{"carriage return overwrites the start", "failed\rpassed", `failed\x0dpassed`},
		{"backspaces erase a word", "not\x08\x08\x08now", `not\x08\x08\x08now`},
		{"C1 CSI without ESC", "x\u009b2Jy", `x\u009b2Jy`},
		{"window title", "\x1b]0;sudo password:\x07", `\x1b]0;sudo password:\x07`},
		{"hyperlink to somewhere else", "\x1b]8;;https://evil\x1b\\docs\x1b]8;;\x1b\\", `\x1b]8;;https://evil\x1b\docs\x1b]8;;\x1b\`},
		{"device query answered into the shell", "\x1b[6n\x1bP$q\x1b\\", `\x1b[6n\x1bP$q\x1b\`},
		{"line separator some viewers break on", "one\u2028two", `one\u2028two`},
	})
}

func TestTermTextNeverShowsALineInAnotherOrderThanItHolds(t *testing.T) {
	checkEscape(t, []protection{
		{"right-to-left override", "invoice\u202efdp.exe", `invoice\u202efdp.exe`},
		{"left-to-right override", "a\u202db", `a\u202db`},
		{"embeddings and pop", "\u202aa\u202bb\u202c", `\u202aa\u202bb\u202c`},
		{"isolates hide a comment's end", "ok\u2067 // \u2066done\u2069\u2068x\u2069", `ok\u2067 // \u2066done\u2069\u2068x\u2069`},
		{"marks", "x\u200ey\u200fz\u061c", `x\u200ey\u200fz\u061c`},
	})
}

func TestTermTextNeverHidesTextInInvisibleCharacters(t *testing.T) {
	checkEscape(t, []protection{
		{"zero-width space splits a word", "ad\u200bmin", `ad\u200bmin`},
		{"word joiner and invisible operators", "a\u2060b\u2062c", `a\u2060b\u2062c`},
		{"byte order mark", "\ufeffmain", `\ufeffmain`},
		{"soft hyphen", "pass\u00adword", `pass\u00adword`},
		{"tag characters smuggle ASCII", "hi\U000e0069\U000e0067", `hi\U000e0069\U000e0067`},
		{"bytes that are not UTF-8", "a\xff\xfeb", `a\xff\xfeb`},
	})
}

// Text people write prints as they wrote it.
func TestTermTextKeepsEveryScriptAndEmoji(t *testing.T) {
	for _, s := range []string{
		"naïve café ✓", "日本語のタイトル", "עברית ومرحبا", "👩‍💻 fixes", "❤️", "🏳️‍🌈",
		"می‌خواهم", // Persian with a zero-width non-joiner
		"tab-free ASCII: `rm -rf /` && $(x)",
	} {
		if HasControl(s) || Escape(s) != s || Line(s) != s {
			t.Errorf("%q is changed: Escape %q, Line %q", s, Escape(s), Line(s))
		}
	}
}

// A table cell or a report line is one line: colours an agent printed
// are dropped rather than shown as escapes, line breaks become spaces,
// and what is left that a terminal acts on is escaped.
func TestLineKeepsOneLineWithoutColours(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"\x1b[31mred\x1b[0m done", "red done"},
		{"first\nsecond\r\tthird", "first second  third"},
		{"\x1b]0;title\x07x", "x"},
		{"go \u202eevil", `go \u202eevil`},
		{"plain", "plain"},
		{"\x1b[1;32mok\x1b[m \x1b(Bset \x1bPq#0\x1b\\sixel", "ok set sixel"},
		{"cut short \x1b[31", `cut short \x1b[31`},
		{"unterminated title \x1b]0;x", `unterminated title \x1b]0;x`},
		{"lone \x1b", `lone \x1b`},
	} {
		got := Line(tc.in)
		if got != tc.want {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if HasControl(got) || strings.Contains(got, "\n") {
			t.Errorf("Line(%q) = %q is not one safe line", tc.in, got)
		}
	}
}
