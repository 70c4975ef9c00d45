package backlog

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

// charRange is an inclusive range of runes.
type charRange struct{ lo, hi rune }

// charSet is a set of runes as sorted, disjoint, non-adjacent ranges.
// Sets used in segments never contain '/'.
type charSet []charRange

// segmentChars is every rune a path segment may contain.
func segmentChars() charSet {
	return charSet{{0, '/' - 1}, {'/' + 1, unicode.MaxRune}}
}

// normalizeSet sorts and merges ranges, then drops '/'.
func normalizeSet(rs []charRange) charSet {
	slices.SortFunc(rs, func(a, b charRange) int { return int(a.lo) - int(b.lo) })
	var out charSet
	for _, r := range rs {
		if n := len(out); n > 0 && r.lo <= out[n-1].hi+1 {
			out[n-1].hi = max(out[n-1].hi, r.hi)
			continue
		}
		out = append(out, r)
	}
	return out.intersect(segmentChars())
}

// intersect returns the runes in both s and t.
func (s charSet) intersect(t charSet) charSet {
	var out charSet
	for i, j := 0, 0; i < len(s) && j < len(t); {
		lo, hi := max(s[i].lo, t[j].lo), min(s[i].hi, t[j].hi)
		if lo <= hi {
			out = append(out, charRange{lo, hi})
		}
		if s[i].hi < t[j].hi {
			i++
		} else {
			j++
		}
	}
	return out
}

// complement returns the segment runes not in s.
func (s charSet) complement() charSet {
	var out charSet
	next := rune(0)
	for _, r := range s {
		if r.lo > next {
			out = append(out, charRange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, charRange{next, unicode.MaxRune})
	}
	return out.intersect(segmentChars())
}

// firstCommon returns a rune in both sets, a readable one when it can
// (so a witness path is printable): a letter, else a digit, else a
// printable character, else any.
func firstCommon(s, t charSet) (rune, bool) {
	prefer := [...]charRange{{'a', 'z'}, {'0', '9'}, {'!', unicode.MaxRune}, {0, unicode.MaxRune}}
	best, rank := rune(-1), len(prefer)
	for i, j := 0, 0; i < len(s) && j < len(t) && rank > 0; {
		lo, hi := max(s[i].lo, t[j].lo), min(s[i].hi, t[j].hi)
		for k := range rank {
			if l, h := max(lo, prefer[k].lo), min(hi, prefer[k].hi); l <= h {
				best, rank = l, k
				break
			}
		}
		if s[i].hi < t[j].hi {
			i++
		} else {
			j++
		}
	}
	return best, best >= 0
}

// token is one step of a segment pattern: one character of set, or a
// star (any run of characters of set, which is then every segment
// character).
type token struct {
	star bool
	set  charSet
}

// segment is one slash-separated part of a glob.
type segment struct {
	globstar bool // the whole segment is "**"
	toks     []token
}

// glob is a compiled pattern. prefix holds its leading segments that are
// plain names: two globs whose prefixes differ where both have one cannot
// intersect, which settles most pairs of a backlog without a search.
type glob struct {
	segs   []segment
	prefix []string
}

// compileGlob parses a pattern into segments (see the package doc for the
// language). A pattern ending in '/', or without metacharacters and
// without an extension, gets a trailing "**": it names a directory (or a
// file) and everything under it.
func compileGlob(p string) (glob, error) {
	if p == "" {
		return glob{}, errors.New("empty pattern")
	}
	var g glob
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "." {
			continue
		}
		if s == "**" {
			g.addGlobstar()
			continue
		}
		toks, err := compileSegment(s)
		if err != nil {
			return glob{}, fmt.Errorf("segment %q: %w", s, err)
		}
		g.segs = append(g.segs, segment{toks: toks})
	}
	if strings.HasSuffix(p, "/") || (!strings.ContainsAny(p, "*?[") && !namesFile(g)) {
		g.addGlobstar()
	}
	for _, seg := range g.segs {
		name, ok := seg.name()
		if !ok {
			break
		}
		g.prefix = append(g.prefix, name)
	}
	return g, nil
}

// name returns the segment's text when it matches exactly one string.
func (s segment) name() (string, bool) {
	if s.globstar {
		return "", false
	}
	var b strings.Builder
	for _, t := range s.toks {
		if t.star || len(t.set) != 1 || t.set[0].lo != t.set[0].hi {
			return "", false
		}
		b.WriteRune(t.set[0].lo)
	}
	return b.String(), true
}

// prefixesDisagree reports whether g and h differ in a leading plain
// segment both have: then no path matches both.
func prefixesDisagree(g, h glob) bool {
	for i := range min(len(g.prefix), len(h.prefix)) {
		if g.prefix[i] != h.prefix[i] {
			return true
		}
	}
	return false
}

// namesFile reports whether a plain pattern's last segment has an
// extension ("main.go", not "gate", ".github" or "Makefile"): such a path
// is taken to be a file, with nothing under it.
func namesFile(g glob) bool {
	if len(g.segs) == 0 || g.segs[len(g.segs)-1].globstar {
		return false
	}
	toks := g.segs[len(g.segs)-1].toks
	for i, t := range toks {
		if i > 0 && !t.star && len(t.set) == 1 && t.set[0] == (charRange{'.', '.'}) {
			return true
		}
	}
	return false
}

// addGlobstar appends a "**" segment; "**/**" is the same as "**".
func (g *glob) addGlobstar() {
	if n := len(g.segs); n > 0 && g.segs[n-1].globstar {
		return
	}
	g.segs = append(g.segs, segment{globstar: true})
}

func compileSegment(s string) ([]token, error) {
	rs := []rune(s)
	var toks []token
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '*':
			if n := len(toks); n == 0 || !toks[n-1].star {
				toks = append(toks, token{star: true, set: segmentChars()})
			}
		case '?':
			toks = append(toks, token{set: segmentChars()})
		case '[':
			set, next, err := compileClass(rs, i+1)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{set: set})
			i = next
		default:
			toks = append(toks, token{set: charSet{{rs[i], rs[i]}}})
		}
	}
	return toks, nil
}

// compileClass parses a class whose body starts at rs[i] (just after
// '['); next is the index of its closing ']'.
func compileClass(rs []rune, i int) (set charSet, next int, err error) {
	neg := i < len(rs) && (rs[i] == '!' || rs[i] == '^')
	if neg {
		i++
	}
	var ranges []charRange
	for first := true; ; first = false {
		if i >= len(rs) {
			return nil, 0, errors.New("unclosed '[' class")
		}
		if rs[i] == ']' && !first {
			break
		}
		lo, hi := rs[i], rs[i]
		if i+2 < len(rs) && rs[i+1] == '-' && rs[i+2] != ']' {
			hi = rs[i+2]
			if lo > hi {
				return nil, 0, fmt.Errorf("class range %q-%q is reversed", lo, hi)
			}
			i += 2
		}
		ranges = append(ranges, charRange{lo, hi})
		i++
	}
	set = normalizeSet(ranges)
	if neg {
		set = set.complement()
	}
	return set, i, nil
}

// ValidGlob reports why p is not a usable surface glob (nil when it is):
// a syntax error, or a pattern no path can match (such as "[!\x00-\U0010FFFF]").
func ValidGlob(p string) error {
	g, err := compileGlob(p)
	if err != nil {
		return err
	}
	if _, ok := g.intersect(glob{segs: []segment{{globstar: true}}}); !ok {
		return errors.New("matches no path")
	}
	return nil
}

// hasControl reports whether s holds a control character, a bidi or
// invisible format character, or invalid UTF-8 (termtext.HasControl).
func hasControl(s string) bool { return termtext.HasControl(s) }
