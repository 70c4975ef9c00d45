// Package termtext owns how untrusted text (agent ids and titles, prompts,
// issue and coordination text, paths, git output, log lines) is made safe
// to print on a terminal. Two kinds of character are never printed raw:
//
//   - control characters (C0, DEL, C1 — the parts of escape sequences),
//     which move the cursor, change colours, set the window title or talk
//     to the terminal;
//   - invisible format characters: the bidirectional overrides, embeddings
//     and isolates (U+202A–U+202E, U+2066–U+2069) and marks, which make a
//     line show its characters in another order than it holds them, and
//     the zero-width and tag characters, which hide text in plain sight.
//
// Each is rewritten as a visible Go-style escape, so what a user sees is
// what the text holds. The zero-width joiner and non-joiner stay: scripts
// and emoji need them and they cannot reorder or hide anything.
package termtext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every control character (tab and newline too) and
// invisible format character written as \xNN, \uNNNN or \UNNNNNNNN and
// bytes that are not UTF-8 written as \xNN: the form for one-line fields.
// Text without any of them is returned as is.
func Escape(s string) string { return escape(s, false) }

// EscapeLines is Escape for multi-line text (error reports, problem
// lists): newlines are kept, everything else is escaped.
func EscapeLines(s string) string { return escape(s, true) }

// Line is s for one line of a table cell or a report: well-formed escape
// sequences (agents and git colour their output) are dropped, tabs,
// carriage returns and newlines become spaces, and everything else Escape
// rewrites is escaped.
func Line(s string) string {
	if !HasControl(s) {
		return s
	}
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, stripSequences(s))
	return Escape(s)
}

// stripSequences drops the well-formed ESC sequences of s: CSI (colours,
// cursor moves), the string sequences OSC, DCS, SOS, PM and APC ended by
// BEL or ST, and the short ones (ESC, intermediates, final). An ESC that
// starts none of them stays, for Escape to show.
func stripSequences(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != 0x1b {
			b.WriteByte(s[i])
			i++
			continue
		}
		n := sequenceLen(s[i:])
		if n == 0 {
			b.WriteByte(s[i])
			n = 1
		}
		i += n
	}
	return b.String()
}

// sequenceLen is the length of the escape sequence at the start of s
// (s[0] is ESC), 0 when it is not a complete one.
func sequenceLen(s string) int {
	if len(s) < 2 {
		return 0
	}
	switch s[1] {
	case '[':
		i := 2
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
			i++
		}
		if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
			return i + 1
		}
		return 0
	case ']', 'P', 'X', '^', '_':
		for i := 2; i < len(s); i++ {
			switch {
			case s[i] == 0x07:
				return i + 1
			case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
				return i + 2
			case s[i] == 0x1b:
				return 0
			}
		}
		return 0
	}
	i := 1
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		return i + 1
	}
	return 0
}

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
		case !Unsafe(r):
			b.WriteString(s[i : i+size])
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// Unsafe reports whether r may not reach a terminal (or a page) raw: a
// control character (C0, DEL, C1) or an invisible format character
// (Unicode's Cf: bidi marks, overrides and isolates, zero-width spaces,
// the byte order mark, tag characters) other than the zero-width joiner
// and non-joiner; and the line and paragraph separators, which some
// terminals and viewers take for a newline.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return true
	case r < 0xa0:
		return false
	case r == '\u200c' || r == '\u200d':
		return false
	case r == '\u2028' || r == '\u2029':
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// HasControl reports whether s holds a character Unsafe rejects or invalid
// UTF-8: what Escape rewrites, and what identifiers and one-line titles
// may not hold.
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
		if (r == utf8.RuneError && size <= 1) || Unsafe(r) {
			return true
		}
		i += size
	}
	return false
}
