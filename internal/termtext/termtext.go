// Package termtext owns how untrusted text (agent ids and titles, prompts,
// issue and coordination text, paths, log lines) is made safe to print on
// a terminal: every control character that could move the cursor, change
// colours, set the window title or talk to the terminal (C0, DEL, C1 —
// the parts of escape sequences) is rewritten as a visible Go-style
// escape, so what a user sees is what the text holds.
package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every C0 control (tab and newline too), DEL and
// C1 control written as \xNN or \uNNNN and bytes that are not UTF-8
// written as \xNN: the form for one-line fields. Text without any of them
// is returned as is.
func Escape(s string) string { return escape(s, false) }

// EscapeLines is Escape for multi-line text (error reports, problem
// lists): newlines are kept, everything else is escaped.
func EscapeLines(s string) string { return escape(s, true) }

func escape(s string, keepNewlines bool) string {
	if !HasControl(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' && keepNewlines:
			b.WriteByte('\n')
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// HasControl reports whether s holds a control character (C0 including
// tab and newline, DEL, C1) or invalid UTF-8: what Escape rewrites, and
// what identifiers and one-line titles may not hold.
func HasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return true
		}
		if c >= 0x80 {
			return unicodeControl(s[i:])
		}
	}
	return false
}

func unicodeControl(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return true
		}
		i += size
	}
	return false
}
