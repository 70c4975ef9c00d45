package backlog

import (
	"math/rand/v2"
	"path"
	"strings"
	"testing"
)

func TestGlobsIntersect(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		// the contract's examples
		{"internal/**", "internal/x/*.go", true},
		{"a/*.go", "a/*.md", false},
		// plain paths
		{"a.go", "a.go", true},
		{"a.go", "b.go", false},
		{"cmd/main.go", "cmd/main_test.go", false},
		// a plain path also covers what is under it (a directory)
		{"internal", "internal/x.go", true},
		{"internal/", "internal/x/y.go", true},
		{"internal/", "internal", true},
		{"internal", "internalx/y.go", false},
		{"internal/gate", "internal/gatekeeper.go", false},
		// ... unless its name has an extension: then it is a file
		{"README.md", "**/*.go", false},
		{"cmd/main.go", "cmd/main.go/x", false},
		{"Makefile", "**/*.go", true},
		{".github", ".github/workflows/ci.yml", true},
		{"docs/v1.2", "docs/v1.2/a.md", false},
		// '*' stays inside one segment
		{"a/*", "a/b/c", false},
		{"a/*", "a/b", true},
		{"*.go", "cmd/main.go", false},
		{"*/main.go", "cmd/main.go", true},
		{"a/*/c", "a/c.go", false},
		// '**' is any number of segments, zero included
		{"**", "x", true},
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/c/main.go", true},
		{"**/*.go", "a/b/c/main.md", false},
		{"a/**/b", "a/x/y/c", true}, // "a/x/y/c" may be a directory holding b
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c.go", false},
		{"a/**", "b/**", false},
		{"**/x", "y/**", true},
		{"a/**/b/**/c", "**/c/b/a", false},
		{"a/**/b/**/c", "**/b/a/c", true},
		// "a**b" is "a*b"
		{"a**b", "axyb", true},
		{"a**b", "ax/yb", false},
		// two wildcard patterns
		{"*.go", "main.*", true},
		{"*_test.go", "*.md", false},
		{"a*", "*b", true},
		{"a*b", "*ba", false},
		{"?", "ab", false},
		{"??", "ab", true},
		{"*", "?*?", true},
		// classes, ranges, negation
		{"[abc].go", "b.go", true},
		{"[abc].go", "d.go", false},
		{"[a-f]*.go", "[g-z]*.go", false},
		{"[a-f]*.go", "[e-z]*.go", true},
		{"[!a].go", "a.go", false},
		{"[^a].go", "b.go", true},
		{"[!a-y]", "[!b-z]", true}, // both admit '0'
		{"[!a]", "[!b]", true},
		{"[a]", "[!a]", false},
		{"[]]", "]", true},
		{"[!]]", "]", false},
		{"[a-]", "-", true},
		{"[*]", "x", false}, // a class is the way to write a literal '*'
		{"[*]", "[*]", true},
		// empty and "." segments are ignored
		{"a//b", "a/b", true},
		{"./a/./b", "a/b", true},
		// a class that matches no character matches no path
		{"[!\x00-\U0010FFFF]", "**", false},
		// patterns that do not compile collide with everything
		{"a[", "b", true},
		{"[z-a]", "q", true},
	}
	for _, c := range cases {
		for _, ab := range [][2]string{{c.a, c.b}, {c.b, c.a}} {
			if got := GlobsIntersect(ab[0], ab[1]); got != c.want {
				t.Errorf("GlobsIntersect(%q, %q) = %v, want %v", ab[0], ab[1], got, c.want)
			}
		}
	}
}

// GlobsIntersect is the rule Collide applies to a pair of globs.
func GlobsIntersect(a, b string) bool {
	m := newMatcher()
	return m.intersects(m.compile(a), m.compile(b))
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

func TestGlobWitnessMatchesBoth(t *testing.T) {
	for _, c := range [][2]string{
		{"internal/**", "internal/x/*.go"},
		{"a/**/b/**/c", "**/b/a/c"},
		{"[!a-y]", "[!b-z]"},
		{"**", "**"},
		{"[a-f]*.go", "[e-z]*.go"},
	} {
		w, ok := globWitness(c[0], c[1])
		if !ok || !oracleMatch(c[0], w) || !oracleMatch(c[1], w) {
			t.Errorf("witness of %q and %q = %q (ok %v): does not match both", c[0], c[1], w, ok)
		}
	}
}

// oracleMatch matches one path against the documented glob language by
// brute force: backtracking over segments, with the standard library's
// path.Match (whose negation is '^') for a single segment.
func oracleMatch(pattern, p string) bool {
	var ps []string
	for _, s := range strings.Split(pattern, "/") {
		if s != "" && s != "." {
			ps = append(ps, strings.ReplaceAll(s, "[!", "[^"))
		}
	}
	plain := !strings.ContainsAny(pattern, "*?[")
	file := len(ps) > 0 && strings.Contains(ps[len(ps)-1][1:], ".")
	if strings.HasSuffix(pattern, "/") || (plain && !file) {
		ps = append(ps, "**")
	}
	return matchSegments(ps, strings.Split(p, "/"))
}

func matchSegments(ps, ss []string) bool {
	if len(ps) == 0 {
		return len(ss) == 0
	}
	if ps[0] == "**" {
		for k := 0; k <= len(ss); k++ {
			if matchSegments(ps[1:], ss[k:]) {
				return true
			}
		}
		return false
	}
	if len(ss) == 0 {
		return false
	}
	ok, err := path.Match(ps[0], ss[0])
	return err == nil && ok && matchSegments(ps[1:], ss[1:])
}

// validPath reports whether p is a non-empty path of non-empty segments.
func validPath(p string) bool {
	return p != "" && !strings.HasPrefix(p, "/") && !strings.HasSuffix(p, "/") && !strings.Contains(p, "//")
}

// oraclePaths is every valid path over {a,b,c,.} of at most n bytes.
func oraclePaths(n int) []string {
	var out []string
	var grow func(cur string)
	grow = func(cur string) {
		if len(cur) > n {
			return
		}
		if validPath(cur) {
			out = append(out, cur)
		}
		for _, c := range []string{"a", "b", "c", ".", "/"} {
			next := cur + c
			if c == "/" && (cur == "" || strings.HasSuffix(cur, "/")) {
				continue
			}
			grow(next)
		}
	}
	grow("")
	return out
}

// oracleTokens are the pieces random patterns are built from: letters
// the paths use, wildcards, classes with ranges and both negations, and
// separators (so "**" segments, trailing '/' and "a//b" all occur).
func oracleTokens() []string {
	return []string{"a", "b", ".", "?", "*", "**", "/", "/", "[ab]", "[!a]", "[^b]", "[a-b]", "[b-c]", "[!a-b]"}
}

func patternFrom(picks []byte) string {
	toks := oracleTokens()
	var b strings.Builder
	for _, p := range picks {
		b.WriteString(toks[int(p)%len(toks)])
	}
	return b.String()
}

// checkAgainstOracle is the fuzz property: GlobsIntersect(a, b) is true
// exactly when some path matches both — its witness when true, and no
// enumerated path when false.
func checkAgainstOracle(t *testing.T, a, b string, paths []string) {
	t.Helper()
	w, got := globWitness(a, b)
	if live := GlobsIntersect(a, b); live != got {
		t.Fatalf("GlobsIntersect(%q, %q) = %v, its witness search says %v", a, b, live, got)
	}
	if a == "" || b == "" { // does not compile: collides with everything
		if !got {
			t.Fatalf("GlobsIntersect(%q, %q) = false for an empty pattern", a, b)
		}
		return
	}
	if got {
		if !validPath(w) || !oracleMatch(a, w) || !oracleMatch(b, w) {
			t.Fatalf("GlobsIntersect(%q, %q) = true, but witness %q does not match both", a, b, w)
		}
		return
	}
	for _, p := range paths {
		if oracleMatch(a, p) && oracleMatch(b, p) {
			t.Fatalf("GlobsIntersect(%q, %q) = false, but %q matches both", a, b, p)
		}
	}
	if GlobsIntersect(b, a) {
		t.Fatalf("GlobsIntersect is not symmetric for %q, %q", a, b)
	}
}

func TestGlobsIntersectAgainstOracle(t *testing.T) {
	paths := oraclePaths(5)
	rng := rand.New(rand.NewPCG(1, 2))
	n := 1000
	if testing.Short() {
		n = 200
	}
	for range n {
		pick := func() []byte {
			b := make([]byte, 1+rng.IntN(5))
			for i := range b {
				b[i] = byte(rng.IntN(len(oracleTokens())))
			}
			return b
		}
		checkAgainstOracle(t, patternFrom(pick()), patternFrom(pick()), paths)
	}
}

func FuzzGlobsIntersect(f *testing.F) {
	paths := oraclePaths(5)
	f.Add([]byte{4, 5, 0}, []byte{0, 5, 3})
	f.Add([]byte{0, 3}, []byte{3, 1})
	f.Add([]byte{7, 5, 4}, []byte{8, 12})
	f.Add([]byte{0, 5, 4, 5, 1}, []byte{4, 5, 1, 5, 0})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if len(a) > 6 || len(b) > 6 {
			return
		}
		checkAgainstOracle(t, patternFrom(a), patternFrom(b), paths)
	})
}

// FuzzGlobsIntersectAnyText: arbitrary text never panics, is symmetric,
// and a valid glob intersects itself.
func FuzzGlobsIntersectAnyText(f *testing.F) {
	f.Add("internal/**", "internal/x/*.go")
	f.Add("[!]]", "a[")
	f.Add("\xff/*", "[\xff-\xfe]")
	f.Fuzz(func(t *testing.T, a, b string) {
		if GlobsIntersect(a, b) != GlobsIntersect(b, a) {
			t.Fatalf("not symmetric: %q, %q", a, b)
		}
		if ValidGlob(a) == nil && !GlobsIntersect(a, a) {
			t.Fatalf("valid glob %q does not intersect itself", a)
		}
	})
}
