package wave

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

// doc is a wave file split into lines with fenced code blocks marked, so
// that headings and bullets inside a ``` block are never read as
// structure (the reference reads them; a prompt quoting "## Agent" would
// then split the agent in two).
type doc struct {
	raw    []string // lines as written, "\r" kept (prompt text keeps it, like the reference)
	fenced []bool   // line is a fence delimiter or inside a fence
}

func newDoc(content string) *doc {
	d := &doc{raw: strings.Split(content, "\n")}
	d.fenced = make([]bool, len(d.raw))
	open := 0 // backtick count of the open fence; 0 when none
	for i := range d.raw {
		n := fenceRun(d.line(i))
		switch {
		case open == 0 && n >= 3:
			open = n
			d.fenced[i] = true
		case open > 0:
			d.fenced[i] = true
			if n >= open {
				open = 0
			}
		}
	}
	return d
}

// line is line i without its trailing "\r".
func (d *doc) line(i int) string { return strings.TrimSuffix(d.raw[i], "\r") }

// fenceRun counts the backticks opening a fence line (up to three spaces
// of indent allowed), or 0 when the line is no fence.
func fenceRun(s string) int {
	trimmed := strings.TrimLeft(s, " ")
	if len(s)-len(trimmed) > 3 {
		return 0
	}
	n := len(trimmed) - len(strings.TrimLeft(trimmed, "`"))
	if n < 3 {
		return 0
	}
	return n
}

// block is the body of a section: the heading line and the body lines.
type block struct {
	heading int // 0-based line index of the heading
	from    int // first body line
	to      int // one past the last body line
}

// lineNo is the 1-based line number of the heading.
func (b *block) lineNo() int { return b.heading + 1 }

// text is the body joined and trimmed like the reference's section text.
func (d *doc) text(b *block) string {
	return jsTrim(strings.Join(d.raw[b.from:b.to], "\n"))
}

// items calls fn for every non-blank body line, trimmed, with its 1-based line.
func (d *doc) items(b *block, fn func(line int, s string)) {
	if b == nil {
		return
	}
	for i := b.from; i < b.to; i++ {
		if s := jsTrim(d.raw[i]); s != "" {
			fn(i+1, s)
		}
	}
}

// isH2 reports a line that ends a `## ` section: "##" then whitespace or end.
func isH2(s string) bool {
	return strings.HasPrefix(s, "##") && (len(s) == 2 || isSpace(s[2]))
}

func isH3(s string) bool {
	return strings.HasPrefix(s, "###") && (len(s) == 3 || isSpace(s[3]))
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' }

// topSection finds the first unfenced `## <heading>` line; its body runs
// to the next unfenced `## ` line.
func (d *doc) topSection(heading string) *block {
	want := "## " + heading
	for i := range d.raw {
		if d.fenced[i] || strings.TrimRightFunc(d.line(i), unicode.IsSpace) != want {
			continue
		}
		b := &block{heading: i, from: i + 1, to: len(d.raw)}
		for j := i + 1; j < len(d.raw); j++ {
			if !d.fenced[j] && isH2(d.line(j)) {
				b.to = j
				break
			}
		}
		return b
	}
	return nil
}

// subsection finds the first unfenced line in [from, to) that ends with
// `### <heading>` — the reference's unanchored /### <heading>[\r\n]+/, so
// "#### Prompt" counts and "### Prompt " (trailing blank) does not. Its
// body runs to the next unfenced line starting `###` and a blank: like the
// reference, a `## ` line inside an agent's section does not end it.
func (d *doc) subsection(from, to int, heading string) *block {
	want := "### " + heading
	for i := from; i < to; i++ {
		if d.fenced[i] || !strings.HasSuffix(d.line(i), want) {
			continue
		}
		b := &block{heading: i, from: i + 1, to: to}
		for j := i + 1; j < to; j++ {
			if !d.fenced[j] && isH3(d.line(j)) {
				b.to = j
				break
			}
		}
		return b
	}
	return nil
}

var agentHeaderRe = regexp.MustCompile(`^## Agent ([^:]+):\s*(.+)$`)

type header struct {
	line      int // 0-based
	id, title string
}

// agentHeaders lists unfenced `## Agent <ID>: <title>` lines. A line that
// starts like a header but does not parse is reported, not skipped.
func (d *doc) agentHeaders(ps *problems) []header {
	var hs []header
	for i := range d.raw {
		l := d.line(i)
		if d.fenced[i] || !strings.HasPrefix(l, "## Agent ") {
			continue
		}
		m := agentHeaderRe.FindStringSubmatch(l)
		if m == nil || jsTrim(m[1]) == "" || jsTrim(m[2]) == "" {
			ps.add(i+1, "", "bad-agent-header", "%q: want \"## Agent <ID>: <title>\"", l)
			continue
		}
		id, title := jsTrim(m[1]), jsTrim(m[2])
		// Ids and titles reach terminals, tmux and file names: an escape
		// sequence in one would be run by the terminal that shows it, a bidi
		// override would show it in another order than it has.
		if termtext.HasControl(id) {
			ps.add(i+1, id, "agent-id-control-character", "agent id %q holds a control, bidi or invisible format character (ids are printable text)", id)
		}
		if termtext.HasControl(title) {
			ps.add(i+1, id, "agent-title-control-character", "agent title %q holds a control, bidi or invisible format character", title)
		}
		hs = append(hs, header{line: i, id: id, title: title})
	}
	return hs
}

// jsTrim trims like JavaScript's String.prototype.trim (which also drops a BOM).
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' })
}
