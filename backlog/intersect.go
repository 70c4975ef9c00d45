package backlog

import (
	"slices"
	"strings"
)

// product is the bookkeeping of a breadth-first search over the product
// of two automata with n1 and n2 positions: a state is a position in each
// and whether something has been consumed yet (paths and segments are
// never empty). States are dense indexes, so the search allocates a few
// slices and no maps.
type product struct {
	n2    int
	prev  []int32 // state → the state it was reached from; -1 unseen
	queue []int32
}

func newProduct(n1, n2 int) *product {
	p := &product{n2: n2, prev: make([]int32, n1*n2*2)}
	for i := range p.prev {
		p.prev[i] = -1
	}
	p.prev[0] = 0
	p.queue = append(p.queue, 0)
	return p
}

func (p *product) state(i, j int, consumed bool) int32 {
	s := int32((i*p.n2 + j) * 2)
	if consumed {
		s++
	}
	return s
}

func (p *product) split(s int32) (i, j int, consumed bool) {
	return int(s/2) / p.n2, int(s/2) % p.n2, s%2 == 1
}

// visit records a move and reports whether the state is new.
func (p *product) visit(to, from int32) bool {
	if p.prev[to] >= 0 {
		return false
	}
	p.prev[to] = from
	p.queue = append(p.queue, to)
	return true
}

func (p *product) pop() (int32, bool) {
	if len(p.queue) == 0 {
		return 0, false
	}
	s := p.queue[0]
	p.queue = p.queue[1:]
	return s, true
}

// intersect searches the product of the two segment automata. A "**"
// segment is a position that loops on any segment and may be left
// without consuming one; any other segment moves on by consuming one
// segment both sides accept — decided exactly by segment.intersect,
// memoised per pair of positions. It returns the common path with the
// fewest segments.
func (g glob) intersect(h glob) (string, bool) {
	if prefixesDisagree(g, h) {
		return "", false
	}
	la, lb := len(g.segs), len(h.segs)
	p := newProduct(la+1, lb+1)
	via := make([]string, len(p.prev)) // the segment consumed to reach a state
	memo := make([]int8, la*lb)        // 0 unknown, 1 common segment, -1 none
	common := make([]string, la*lb)
	pairWitness := func(i, j int) (string, bool) {
		k := i*lb + j
		if memo[k] == 0 {
			memo[k] = -1
			if w, ok := g.segs[i].intersect(h.segs[j]); ok {
				memo[k], common[k] = 1, w
			}
		}
		return common[k], memo[k] == 1
	}
	for {
		s, ok := p.pop()
		if !ok {
			return "", false
		}
		i, j, consumed := p.split(s)
		if i == la && j == lb && consumed {
			var segs []string
			for t := s; t != 0; t = p.prev[t] {
				if via[t] != "" {
					segs = append(segs, via[t])
				}
			}
			slices.Reverse(segs)
			return strings.Join(segs, "/"), true
		}
		if i < la && g.segs[i].globstar {
			p.visit(p.state(i+1, j, consumed), s)
		}
		if j < lb && h.segs[j].globstar {
			p.visit(p.state(i, j+1, consumed), s)
		}
		if i == la || j == lb {
			continue
		}
		w, ok := pairWitness(i, j)
		if !ok {
			continue
		}
		ni, nj := i, j
		if !g.segs[i].globstar {
			ni++
		}
		if !h.segs[j].globstar {
			nj++
		}
		if next := p.state(ni, nj, true); p.visit(next, s) {
			via[next] = w
		}
	}
}

// intersect returns a non-empty segment both segment patterns match.
func (s segment) intersect(t segment) (string, bool) {
	anySeg := []token{{set: segmentChars()}, {star: true, set: segmentChars()}}
	a, b := s.toks, t.toks
	if s.globstar {
		a = anySeg
	}
	if t.globstar {
		b = anySeg
	}
	return tokensIntersect(a, b)
}

// tokensIntersect searches the product of two segment patterns'
// automata: a star is a position that loops on any character and may be
// left without consuming one; a set token moves on by consuming one
// character in both sets. A move exists only when the two character sets
// intersect, so classes and negations are decided exactly.
func tokensIntersect(a, b []token) (string, bool) {
	p := newProduct(len(a)+1, len(b)+1)
	via := make([]rune, len(p.prev)) // the character consumed to reach a state
	ate := make([]bool, len(p.prev)) // whether reaching it consumed one
	for {
		s, ok := p.pop()
		if !ok {
			return "", false
		}
		i, j, consumed := p.split(s)
		if i == len(a) && j == len(b) && consumed {
			var rs []rune
			for t := s; t != 0; t = p.prev[t] {
				if ate[t] {
					rs = append(rs, via[t])
				}
			}
			slices.Reverse(rs)
			return string(rs), true
		}
		if i < len(a) && a[i].star {
			p.visit(p.state(i+1, j, consumed), s)
		}
		if j < len(b) && b[j].star {
			p.visit(p.state(i, j+1, consumed), s)
		}
		if i == len(a) || j == len(b) {
			continue
		}
		c, ok := firstCommon(a[i].set, b[j].set)
		if !ok {
			continue
		}
		ni, nj := i, j
		if !a[i].star {
			ni++
		}
		if !b[j].star {
			nj++
		}
		if next := p.state(ni, nj, true); p.visit(next, s) {
			via[next], ate[next] = c, true
		}
	}
}
