package mdfence

import "testing"

// Text holding backticks, even a fence of its own, cannot close the
// delimiter around it.
func TestDelimitersOutrunTheText(t *testing.T) {
	for _, tc := range []struct{ in, block, span string }{
		{"plain", "```", "`"},
		{"a `b` c", "```", "``"},
		{"```\nrm -rf /\n```", "````", "````"},
		{"x ````` y `` z", "``````", "``````"},
	} {
		if got := Block(tc.in); got != tc.block {
			t.Errorf("Block(%q) = %q, want %q", tc.in, got, tc.block)
		}
		if got := Span(tc.in); got != tc.span {
			t.Errorf("Span(%q) = %q, want %q", tc.in, got, tc.span)
		}
	}
}
