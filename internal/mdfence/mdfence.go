// Package mdfence owns how untrusted text is quoted in the Markdown this
// tool writes (agent and reviewer prompts, pull request bodies): between
// backtick delimiters longer than any run of backticks in the text, so
// nothing in the text can close them.
package mdfence

import "strings"

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
