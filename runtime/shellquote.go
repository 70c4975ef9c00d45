package runtime

import "strings"

// ShellQuote quotes s as one word for a POSIX shell: single quotes, with
// each embedded quote closed, escaped and reopened. Nothing inside is expanded.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellJoin quotes every word of argv and joins them with spaces.
func ShellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, w := range argv {
		q[i] = ShellQuote(w)
	}
	return strings.Join(q, " ")
}
