package manifest

import (
	"slices"
	"unicode/utf8"
)

// SortPaths sorts s stably by key in the order of JavaScript's
// String.prototype.localeCompare (ICU root collation), which the reference
// uses for the docs list. For ASCII keys the order is ICU's exactly
// (TestPathOrderIsICURootOrderForASCII checks it against
// golang.org/x/text/collate); a non-ASCII character sorts after every
// ASCII one, by code point, where ICU would interleave accented letters
// with their base letters. The collation package is not linked for this:
// its tables cost every process of the binary (each agent's runner
// among them) about 0.4 ms of initialisation.
func SortPaths[T any](s []T, key func(T) string) {
	slices.SortStableFunc(s, func(a, b T) int { return comparePaths(key(a), key(b)) })
}

// rootOrder is ICU's root order of the printable ASCII characters and the
// whitespace ones; a letter's two cases share a primary weight. The other
// control characters are ignorable.
const rootOrder = "\t\n\v\f\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"

// primaryASCII maps an ASCII byte to its primary weight (1-based; 0 is
// ignorable).
var primaryASCII = func() (w [128]uint16) {
	for i := range len(rootOrder) {
		w[rootOrder[i]] = uint16(i + 1)
		if c := rootOrder[i]; c >= 'a' && c <= 'z' {
			w[c-'a'+'A'] = uint16(i + 1)
		}
	}
	return w
}()

// weights returns the primary and tertiary weight of r (0, 0: ignorable).
func weights(r rune) (primary rune, upper bool) {
	if r < utf8.RuneSelf {
		return rune(primaryASCII[r]), r >= 'A' && r <= 'Z'
	}
	return 0x100 + r, false
}

// comparePaths compares by primary weights (a letter's case left out),
// then, when those are equal, by case with lower case first, as a
// three-level collation does for strings without accents.
func comparePaths(a, b string) int {
	tie := 0
	for i, j := 0, 0; ; {
		var pa, pb rune
		var ua, ub bool
		for pa == 0 && i < len(a) {
			r, n := utf8.DecodeRuneInString(a[i:])
			i += n
			pa, ua = weights(r)
		}
		for pb == 0 && j < len(b) {
			r, n := utf8.DecodeRuneInString(b[j:])
			j += n
			pb, ub = weights(r)
		}
		switch {
		case pa == 0 && pb == 0:
			return tie
		case pa != pb:
			// An exhausted key (weight 0) sorts first.
			if pa < pb {
				return -1
			}
			return 1
		case tie == 0 && ua != ub:
			tie = 1
			if ub {
				tie = -1
			}
		}
	}
}
