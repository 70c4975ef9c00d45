package backlog

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Surface is an issue's conflict surface: globs from Files:/Surface:
// lists in its body plus its area:* labels (the name after "area:",
// lower-cased: GitHub label names are case-insensitive). Entries the
// parser refused are kept in Rejected so they can be reported; they take
// no part in collisions.
type Surface struct {
	Globs    []string   `json:"globs"`
	Areas    []string   `json:"areas"`
	Rejected []Rejected `json:"rejected,omitempty"`
}

// Rejected is one Files:/Surface: entry that is not a usable glob, and why.
type Rejected struct {
	Entry  string `json:"entry"`
	Reason string `json:"reason"`
}

// Declared reports whether the surface names anything.
func (s Surface) Declared() bool { return len(s.Globs) > 0 || len(s.Areas) > 0 }

// Limits that keep a hostile issue body from making planning quadratic
// in its size.
const (
	maxSurfaceEntries = 200
	maxGlobLen        = 1024
)

// ParseSurface reads an issue's conflict surface. In the body, a line
// whose key is "Files" or "Surface" (any case; it may be a markdown
// heading or bold, and the colon may be inside the bold) introduces
// entries: those on the rest of the line, separated by commas or spaces,
// or — when the rest is empty — those on the "-"/"*" bullet lines that
// follow, up to a blank or non-bullet line. Where a line or bullet holds
// backticked spans, only those spans are entries ("- `a.go` — the
// parser" names a.go). Backticks and surrounding quotes are stripped and
// a leading "./" removed; absolute paths, ".." segments, backslashes,
// control characters and invalid globs are rejected into
// Surface.Rejected.
func ParseSurface(body string, labels []string) Surface {
	s := Surface{Globs: []string{}, Areas: []string{}}
	var entries []string
	lines := strings.Split(body, "\n")
	for i := 0; i < len(lines); i++ {
		rest, ok := surfaceKey(lines[i])
		if !ok {
			continue
		}
		if strings.TrimSpace(rest) != "" {
			entries = append(entries, splitEntries(rest)...)
			continue
		}
		for i+1 < len(lines) {
			item, ok := bulletItem(lines[i+1])
			if !ok {
				break
			}
			entries = append(entries, splitEntries(item)...)
			i++
		}
	}
	for _, e := range entries {
		s.addEntry(e)
	}
	for _, l := range labels {
		name, ok := cutFold(strings.TrimSpace(l), "area:")
		name = strings.ToLower(strings.TrimSpace(name))
		if ok && name != "" && !slices.Contains(s.Areas, name) {
			s.Areas = append(s.Areas, name)
		}
	}
	return s
}

func (s *Surface) addEntry(raw string) {
	g, reason := cleanEntry(raw)
	switch {
	case reason != "":
		s.Rejected = append(s.Rejected, Rejected{Entry: raw, Reason: reason})
	case g == "" || slices.Contains(s.Globs, g):
	case len(s.Globs) >= maxSurfaceEntries:
		s.Rejected = append(s.Rejected, Rejected{Entry: raw, Reason: fmt.Sprintf("more than %d entries", maxSurfaceEntries)})
	default:
		s.Globs = append(s.Globs, g)
	}
}

// surfaceKey recognises "Files:", "## Surface", "**Files:**", "**Files**:"
// and returns what follows the key.
func surfaceKey(line string) (rest string, ok bool) {
	t := strings.TrimSpace(line)
	heading := strings.HasPrefix(t, "#")
	t = strings.TrimSpace(strings.TrimLeft(t, "#"))
	bold := ""
	for _, b := range []string{"**", "__"} {
		if strings.HasPrefix(t, b) {
			bold, t = b, t[len(b):]
			break
		}
	}
	for _, key := range []string{"files", "surface"} {
		after, found := cutFold(t, key)
		if !found {
			continue
		}
		if bold != "" {
			if v, closed := strings.CutPrefix(after, bold+":"); closed {
				return v, true
			}
			if v, closed := strings.CutPrefix(after, ":"+bold); closed {
				return v, true
			}
			if v, closed := strings.CutPrefix(after, bold); closed && heading && strings.TrimSpace(v) == "" {
				return "", true
			}
			continue
		}
		if v, colon := strings.CutPrefix(after, ":"); colon {
			return v, true
		}
		if heading && strings.TrimSpace(after) == "" {
			return "", true
		}
	}
	return "", false
}

// cutFold is strings.CutPrefix ignoring ASCII case.
func cutFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// bulletItem returns the text of a "- x" or "* x" line.
func bulletItem(line string) (string, bool) {
	t := strings.TrimSpace(line)
	if len(t) < 2 || (t[0] != '-' && t[0] != '*') || (t[1] != ' ' && t[1] != '\t') {
		return "", false
	}
	return t[2:], true
}

// splitEntries splits a list: its backticked spans when it has any, else
// its comma- or space-separated words.
func splitEntries(s string) []string {
	if parts := strings.Split(s, "`"); len(parts) >= 3 {
		var spans []string
		for i := 1; i+1 < len(parts); i += 2 {
			spans = append(spans, parts[i])
		}
		return spans
	}
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// cleanEntry turns a raw entry into a glob, or says why it cannot be one.
// An empty glob with no reason means the entry was only punctuation.
func cleanEntry(raw string) (glob, reason string) {
	g := strings.ReplaceAll(raw, "`", "")
	g = strings.TrimSpace(strings.Trim(strings.TrimSpace(g), `"'`))
	switch {
	case g == "":
		return "", ""
	case hasControl(g):
		return "", "contains a control character, a bidi or invisible format character, or invalid UTF-8"
	case len(g) > maxGlobLen:
		return "", fmt.Sprintf("longer than %d bytes", maxGlobLen)
	case strings.Contains(g, `\`):
		return "", `contains '\': use '/' between path segments`
	case strings.HasPrefix(g, "/") || strings.HasPrefix(g, "~"):
		return "", "absolute path: surfaces are relative to the repository root"
	}
	segs := strings.Split(g, "/")
	kept := segs[:0]
	for i, seg := range segs {
		switch {
		case seg == "..":
			return "", "'..' leaves the repository"
		case seg == "." || (seg == "" && i < len(segs)-1):
			// "./a", "a//b": nothing to keep
		default:
			kept = append(kept, seg)
		}
	}
	g = strings.Join(kept, "/")
	if g == "" {
		return "", "names the whole repository: write ** if that is meant"
	}
	if err := ValidGlob(g); err != nil {
		return "", "invalid glob: " + err.Error()
	}
	return g, ""
}

// union merges surfaces, keeping first-seen order and dropping duplicates.
func union(ss ...Surface) Surface {
	u := Surface{Globs: []string{}, Areas: []string{}}
	for _, s := range ss {
		for _, g := range s.Globs {
			if !slices.Contains(u.Globs, g) {
				u.Globs = append(u.Globs, g)
			}
		}
		for _, a := range s.Areas {
			if !slices.Contains(u.Areas, a) {
				u.Areas = append(u.Areas, a)
			}
		}
	}
	return u
}

// Collide reports whether two surfaces can touch a common path (some pair
// of their globs intersects) or share an area label, with a short reason
// ("both touch internal/** and internal/x/*.go", "both area:api"). An
// undeclared surface collides with everything unless undeclaredParallel.
func Collide(a, b Surface, undeclaredParallel bool) (bool, string) {
	m := newMatcher()
	return m.collide(m.surface(a), m.surface(b), undeclaredParallel)
}

// matcher decides collisions for one planning pass. It compiles each
// distinct glob once and memoises intersections: surfaces share globs,
// and the collision graph asks about the same pairs again and again.
type matcher struct {
	globs map[string]*compiled
	memo  map[[2]int]bool
}

type compiled struct {
	text string
	id   int
	glob glob
	bad  bool // does not compile: intersects everything
}

// compiledSurface is a surface with its globs compiled.
type compiledSurface struct {
	Surface
	globs []*compiled
}

func newMatcher() *matcher {
	return &matcher{globs: map[string]*compiled{}, memo: map[[2]int]bool{}}
}

func (m *matcher) surface(s Surface) compiledSurface {
	cs := compiledSurface{Surface: s}
	for _, text := range s.Globs {
		cs.globs = append(cs.globs, m.compile(text))
	}
	return cs
}

// compile is glob text compiled, once per matcher.
func (m *matcher) compile(text string) *compiled {
	c, ok := m.globs[text]
	if !ok {
		g, err := compileGlob(text)
		c = &compiled{text: text, id: len(m.globs), glob: g, bad: err != nil}
		m.globs[text] = c
	}
	return c
}

// intersects reports whether some path matches both globs (see the
// package doc for the glob language): "internal/**" and "internal/x/*.go"
// intersect, "a/*.go" and "a/*.md" do not. A glob that does not compile
// (an unclosed '[', a reversed range) intersects everything: a conflict
// surface that cannot be read must not let two workers run side by side.
// ParseSurface rejects such globs, so a surface never holds one.
func (m *matcher) intersects(x, y *compiled) bool {
	if x.bad || y.bad {
		return true
	}
	if prefixesDisagree(x.glob, y.glob) {
		return false
	}
	k := [2]int{min(x.id, y.id), max(x.id, y.id)}
	v, ok := m.memo[k]
	if !ok {
		_, v = x.glob.intersect(y.glob)
		m.memo[k] = v
	}
	return v
}

func (m *matcher) collide(a, b compiledSurface, undeclaredParallel bool) (bool, string) {
	if !a.Declared() || !b.Declared() {
		if undeclaredParallel {
			return false, ""
		}
		return true, "no declared surface (Files:/Surface: list or area: label)"
	}
	for _, x := range a.Areas {
		for _, y := range b.Areas {
			if strings.EqualFold(x, y) {
				return true, "both area:" + x
			}
		}
	}
	for _, x := range a.globs {
		for _, y := range b.globs {
			if !m.intersects(x, y) {
				continue
			}
			if x.text == y.text {
				return true, "both touch " + x.text
			}
			return true, "both touch " + x.text + " and " + y.text
		}
	}
	return false, ""
}

// Outside lists the files of a change that no glob of the surface
// matches: the change went beyond what the issue declared, and the plan
// ran the issue beside others on the strength of that declaration. A
// surface without globs (undeclared, or area labels only) names no files
// to compare with, so nothing is outside it.
func Outside(s Surface, files []string) []string {
	if len(s.Globs) == 0 {
		return nil
	}
	m := newMatcher()
	own := m.surface(Surface{Globs: s.Globs})
	var out []string
	for _, f := range files {
		if f == "" || slices.Contains(out, f) {
			continue
		}
		probe := Surface{Globs: []string{f}}
		if _, bad := cleanEntry(f); bad != "" {
			out = append(out, f) // not even a usable path: never inside
			continue
		}
		if hit, _ := m.collide(m.surface(probe), own, false); !hit {
			out = append(out, f)
		}
	}
	return out
}
