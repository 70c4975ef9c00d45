package backlog

import (
	"slices"
	"strings"
)

// GlobsIntersect reports whether some path matches both patterns (see the
// package doc for the glob language): "internal/**" and "internal/x/*.go"
// intersect, "a/*.go" and "a/*.md" do not. A pattern that does not
// compile (an unclosed '[', a reversed range) is treated as intersecting
// everything: a conflict surface that cannot be read must not let two
// workers run side by side. ParseSurface rejects such patterns, so a
// surface never holds one.
func GlobsIntersect(a, b string) bool {
	_, ok := globWitness(a, b)
	return ok
}

// globWitness is GlobsIntersect with a path matching both (empty when a
// pattern does not compile).
func globWitness(a, b string) (string, bool) {
	ga, err := compileGlob(a)
	if err != nil {
		return "", true
	}
	gb, err := compileGlob(b)
	if err != nil {
		return "", true
	}
	return ga.intersect(gb)
}

// pathState is a position in both patterns' segment lists, and whether a
// segment has been consumed yet (a path is never empty).
type pathState struct {
	i, j     int
	consumed bool
}

// intersect explores the product of the two segment automata breadth
// first. A "**" segment is a state that loops on any segment and may be
// left without consuming one; any other segment moves on by consuming
// one segment that both sides' segment patterns accept — decided by
// segmentsIntersect, memoised per pair. It returns the shortest common
// path (in segments) when there is one.
func (g glob) intersect(h glob) (string, bool) {
	type step struct {
		from pathState
		seg  string // "" for a move that consumes nothing
	}
	type pair struct{ i, j int }
	segMemo := map[pair]*string{}
	common := func(i, j int) (string, bool) {
		k := pair{i, j}
		if w, seen := segMemo[k]; seen {
			return derefOK(w)
		}
		w, ok := g.segs[i].intersect(h.segs[j])
		if !ok {
			segMemo[k] = nil
			return "", false
		}
		segMemo[k] = &w
		return w, true
	}

	start := pathState{}
	prev := map[pathState]step{start: {}}
	queue := []pathState{start}
	visit := func(to, from pathState, seg string) {
		if _, seen := prev[to]; !seen {
			prev[to] = step{from, seg}
			queue = append(queue, to)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s.i == len(g.segs) && s.j == len(h.segs) && s.consumed {
			return rebuildPath(s, start, func(t pathState) (pathState, string) {
				p := prev[t]
				return p.from, p.seg
			}), true
		}
		if s.i < len(g.segs) && g.segs[s.i].globstar {
			visit(pathState{s.i + 1, s.j, s.consumed}, s, "")
		}
		if s.j < len(h.segs) && h.segs[s.j].globstar {
			visit(pathState{s.i, s.j + 1, s.consumed}, s, "")
		}
		if s.i == len(g.segs) || s.j == len(h.segs) {
			continue
		}
		w, ok := common(s.i, s.j)
		if !ok {
			continue
		}
		next := pathState{s.i, s.j, true}
		if !g.segs[s.i].globstar {
			next.i++
		}
		if !h.segs[s.j].globstar {
			next.j++
		}
		visit(next, s, w)
	}
	return "", false
}

func derefOK(w *string) (string, bool) {
	if w == nil {
		return "", false
	}
	return *w, true
}

// rebuildPath walks parent links from end back to start and joins the
// consumed segments.
func rebuildPath(end, start pathState, parent func(pathState) (pathState, string)) string {
	var segs []string
	for s := end; s != start; {
		var seg string
		s, seg = parent(s)
		if seg != "" {
			segs = append(segs, seg)
		}
	}
	slices.Reverse(segs)
	return strings.Join(segs, "/")
}

// intersect returns a non-empty segment both segment patterns match.
func (s segment) intersect(t segment) (string, bool) {
	anySeg := []token{{star: true}, {set: segmentChars()}}
	a, b := s.toks, t.toks
	switch {
	case s.globstar && t.globstar:
		a, b = anySeg, anySeg
	case s.globstar:
		a = anySeg
	case t.globstar:
		b = anySeg
	}
	return tokensIntersect(a, b)
}

// charState is a position in both token lists, and whether a character
// has been consumed yet (a segment is never empty).
type charState struct {
	p, q     int
	consumed bool
}

// tokensIntersect explores the product of two segment patterns'
// automata: a star is a state that loops on any character and may be
// left without consuming one; a set token moves on by consuming one
// character in both sets. A move exists only when the two character sets
// intersect, so classes and negations are decided exactly.
func tokensIntersect(a, b []token) (string, bool) {
	type step struct {
		from charState
		ch   rune // -1 for a move that consumes nothing
	}
	start := charState{}
	prev := map[charState]step{start: {}}
	queue := []charState{start}
	visit := func(to, from charState, ch rune) {
		if _, seen := prev[to]; !seen {
			prev[to] = step{from, ch}
			queue = append(queue, to)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s.p == len(a) && s.q == len(b) && s.consumed {
			var rs []rune
			for t := s; t != start; t = prev[t].from {
				if ch := prev[t].ch; ch >= 0 {
					rs = append(rs, ch)
				}
			}
			slices.Reverse(rs)
			return string(rs), true
		}
		if s.p < len(a) && a[s.p].star {
			visit(charState{s.p + 1, s.q, s.consumed}, s, -1)
		}
		if s.q < len(b) && b[s.q].star {
			visit(charState{s.p, s.q + 1, s.consumed}, s, -1)
		}
		if s.p == len(a) || s.q == len(b) {
			continue
		}
		both := tokenSet(a[s.p]).intersect(tokenSet(b[s.q]))
		if len(both) == 0 {
			continue
		}
		next := charState{s.p, s.q, true}
		if !a[s.p].star {
			next.p++
		}
		if !b[s.q].star {
			next.q++
		}
		visit(next, s, both.pick())
	}
	return "", false
}

func tokenSet(t token) charSet {
	if t.star {
		return segmentChars()
	}
	return t.set
}
