package manifest

import (
	"math/rand/v2"
	"testing"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// The docs list's order is ICU's root collation for every ASCII path:
// checked against golang.org/x/text/collate (what SortPaths used before;
// tests may link it, the binary does not) on every pair of ASCII
// characters and on random keys built from them and from path-like parts.
func TestPathOrderIsICURootOrderForASCII(t *testing.T) {
	c := collate.New(language.Und)
	sign := func(n int) int { return min(max(n, -1), 1) }
	check := func(a, b string) {
		t.Helper()
		if got, want := sign(comparePaths(a, b)), sign(c.CompareString(a, b)); got != want {
			t.Fatalf("comparePaths(%q, %q) = %d, ICU root order says %d", a, b, got, want)
		}
	}
	var ascii []string
	for b := range 128 {
		ascii = append(ascii, string(rune(b)))
	}
	for _, a := range ascii {
		for _, b := range ascii {
			check(a, b)
			check(a+"x", b)
			check("A"+a, "a"+b)
		}
	}
	parts := append([]string{"docs/", "README", "readme", ".md", "a", "A", "b", "B", "-", "_", ".", "/", "0", "1", "10", " ", "\x01", "Z", "z"}, ascii...)
	rng := rand.New(rand.NewPCG(1, 2))
	key := func() string {
		s := ""
		for range rng.IntN(6) {
			s += parts[rng.IntN(len(parts))]
		}
		return s
	}
	for range 200_000 {
		check(key(), key())
	}
}

func TestNonASCIIPathsSortAfterASCIIOnes(t *testing.T) {
	paths := []string{"docs/é.md", "docs/z.md", "docs/Z.md", "docs/e.md"}
	SortPaths(paths, func(s string) string { return s })
	want := []string{"docs/e.md", "docs/z.md", "docs/Z.md", "docs/é.md"}
	for i := range want {
		if paths[i] != want[i] {
			t.Fatalf("order %q, want %q", paths, want)
		}
	}
}
