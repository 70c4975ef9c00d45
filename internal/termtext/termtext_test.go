package termtext

import (
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want, lines string }{
		{"A1", "A1", "A1"},
		{"line one\n\tline two", `line one\x0a\x09line two`, "line one\n\\x09line two"},
		{"A\x1b[2J\x1b]0;pwned\x07", `A\x1b[2J\x1b]0;pwned\x07`, `A\x1b[2J\x1b]0;pwned\x07`},
		{"del\x7f", `del\x7f`, `del\x7f`},
		{"csi\u009b31m", `csi\u009b31m`, `csi\u009b31m`},
		{"bad\xffutf8", `bad\xffutf8`, `bad\xffutf8`},
		{"naïve ✓", "naïve ✓", "naïve ✓"},
		{"\r\x00", `\x0d\x00`, `\x0d\x00`},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := EscapeLines(tc.in); got != tc.lines {
			t.Errorf("EscapeLines(%q) = %q, want %q", tc.in, got, tc.lines)
		}
	}
}

func TestHasControl(t *testing.T) {
	for s, want := range map[string]bool{
		"A1": false, "Agent ü": false, "A\x1b": true, "A\t1": true, "A\n": true,
		"A\u0085": true, "A\x7f": true, "A\xff": true,
	} {
		if got := HasControl(s); got != want {
			t.Errorf("HasControl(%q) = %v", s, got)
		}
	}
}

func FuzzEscapeIsSafe(f *testing.F) {
	f.Add("A\x1b[31m\u009b\xff\n")
	f.Add("\u202e\u2066\U000e0041\u200b")
	f.Fuzz(func(t *testing.T, s string) {
		if out := Escape(s); HasControl(out) {
			t.Fatalf("Escape(%q) = %q holds a control character", s, out)
		}
		if out := Line(s); HasControl(out) {
			t.Fatalf("Line(%q) = %q holds a control character", s, out)
		}
		for _, line := range strings.Split(EscapeLines(s), "\n") {
			if HasControl(line) {
				t.Fatalf("EscapeLines(%q) holds a control character in %q", s, line)
			}
		}
	})
}
