// Package mdfence owns how untrusted text (issue titles and bodies, worker
// questions and output, reviewer verdicts, file names) is quoted in the
// Markdown this tool writes: agent and reviewer prompts, and everything it
// posts to GitHub (comments, pull request bodies).
//
// Quoted text sits between backtick delimiters longer than any run of
// backticks in it, so nothing in the text can close them; inside a code
// span or a fenced code block GitHub renders no markup, so an @mention
// notifies nobody, #12 and org/repo#3 link and close nothing, and HTML
// (a <!-- --> comment, <details>) shows as the characters it is instead
// of hiding anything. On top of that, Inline and Fenced remove control
// characters and bidirectional formatting marks (which make a page show
// text in another order than it has) and break every "<!--", so the
// quoted text never holds the bytes of a hidden marker such as
// <!-- wave-orchestrator:<kind> … --> for a reader that scans the raw
// body rather than the rendered page.
package mdfence

import (
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

// Block is the fence of a fenced code block holding s: at least three
// backticks, one more than s's longest run.
func Block(s string) string { return strings.Repeat("`", max(3, longestRun(s)+1)) }

// Span is the delimiter of an inline code span holding s: one backtick
// more than s's longest run.
func Span(s string) string { return strings.Repeat("`", longestRun(s)+1) }

func longestRun(s string) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// Clean removes from untrusted text what termtext would escape on a
// terminal, but newline and tab: control characters (escape sequences,
// carriage returns, NULs), bidirectional formatting marks, and the
// zero-width and tag characters that hide text on a page.
func Clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !termtext.Unsafe(r) {
			return r
		}
		return -1
	}, s)
}

// commentOpen is what opens an HTML comment; defused is it with a zero
// width space between "<!" and "--", which no HTML parser (and no
// strings.Contains looking for a marker) takes for an opener.
const (
	commentOpen = "<!--"
	defused     = "<!\u200b--"
)

// Inline is s as one inline code span for one Markdown line: cleaned,
// whitespace (newlines too) folded to single spaces, cut to limit runes
// (limit <= 0: no cut) and delimited. Empty text is "".
func Inline(s string, limit int) string {
	s = strings.Join(strings.Fields(Clean(s)), " ")
	if r := []rune(s); limit > 3 && len(r) > limit {
		s = string(r[:limit-3]) + "..."
	}
	s = strings.ReplaceAll(s, commentOpen, defused)
	if s == "" {
		return ""
	}
	d := Span(s)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		// The spaces keep a backtick at either end of s from joining
		// the delimiter; CommonMark strips one space on each side.
		return d + " " + s + " " + d
	}
	return d + s + d
}

// Fenced is s as a fenced code block with info string info ("text"):
// cleaned, cut to limit runes (limit <= 0: no cut), its lines kept, ending
// in a newline. Empty text is an empty block.
func Fenced(s, info string, limit int) string {
	s = strings.Trim(Clean(s), "\n")
	if r := []rune(s); limit > 3 && len(r) > limit {
		s = string(r[:limit-3]) + "..."
	}
	s = strings.ReplaceAll(s, commentOpen, defused)
	f := Block(s)
	// The info string is ours, but one with a backtick would not be an
	// info string at all.
	info = strings.Join(strings.Fields(strings.ReplaceAll(Clean(info), "`", "")), "-")
	if s == "" {
		return f + info + "\n" + f + "\n"
	}
	return f + info + "\n" + s + "\n" + f + "\n"
}

// FirstBlock is the content of the first fenced code block of text (a
// line of three or more backticks, closed by the same run), with the
// "<!--" Fenced defused given back: what Fenced was given, cleaned.
func FirstBlock(text string) (string, bool) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		fence := l[:len(l)-len(strings.TrimLeft(l, "`"))]
		if len(fence) < 3 {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimRight(lines[j], " ") == fence {
				return strings.ReplaceAll(strings.Join(lines[i+1:j], "\n"), defused, commentOpen), true
			}
		}
		return "", false
	}
	return "", false
}
