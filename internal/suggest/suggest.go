// Package suggest owns the "did you mean" of error messages: the known
// name closest to a misspelt one, by edit distance.
package suggest

import "strings"

// Closest returns the option nearest to s (case-insensitive edit
// distance), or "" when none is near enough to be a likely typo: at most
// a third of the longer word's length, and at least 2 edits allowed.
func Closest(s string, options []string) string {
	best, bestD := "", -1
	ls := strings.ToLower(strings.TrimSpace(s))
	for _, o := range options {
		d := distance(ls, strings.ToLower(o))
		if bestD < 0 || d < bestD {
			best, bestD = o, d
		}
	}
	limit := max(2, max(len(ls), len(best))/3)
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

// distance is the Levenshtein distance over runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Hint is ` (did you mean "x"?)` for the closest option, or "".
func Hint(s string, options []string) string {
	if c := Closest(s, options); c != "" {
		return ` (did you mean "` + c + `"?)`
	}
	return ""
}
