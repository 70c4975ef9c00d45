package executor

import (
	"errors"
	"fmt"
	"strings"
)

// SplitWords splits a command template into words the way a POSIX shell
// would for a plain command: blanks separate words, single quotes keep
// everything literally, double quotes keep everything except that a
// backslash escapes `"`, `\`, `$` and a backquote, and a backslash outside
// quotes escapes the next character. Nothing is expanded: `$`, globs,
// `;` and `|` are ordinary characters.
func SplitWords(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // a word has started (possibly empty: '')
	)
	flush := func() {
		if in {
			words = append(words, cur.String())
			cur.Reset()
			in = false
		}
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			flush()
		case c == '\'':
			in = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j == len(rs) {
				return nil, fmt.Errorf("unterminated single quote at offset %d", i)
			}
			cur.WriteString(string(rs[i+1 : j]))
			i = j
		case c == '"':
			in = true
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("\"\\$`", rs[j+1]) {
					j++
				}
				cur.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, fmt.Errorf("unterminated double quote at offset %d", i)
			}
			i = j
		case c == '\\':
			if i+1 == len(rs) {
				return nil, errors.New("trailing backslash")
			}
			in = true
			i++
			cur.WriteRune(rs[i])
		default:
			in = true
			cur.WriteRune(c)
		}
	}
	flush()
	return words, nil
}

// Placeholders a shell template may use.
var Placeholders = []string{"{prompt_file}", "{log}", "{agent}", "{wave}", "{attempt}", "{run_dir}"}

// ExpandTemplate splits template into words and then replaces placeholders
// inside each word. Substituted values are never split again nor seen by
// a shell, so a value with quotes, spaces or `$(…)` stays inside its word.
func ExpandTemplate(template string, values map[string]string) ([]string, error) {
	words, err := SplitWords(template)
	if err != nil {
		return nil, fmt.Errorf("shell.command %q: %w", template, err)
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("shell.command %q: no command", template)
	}
	pairs := make([]string, 0, 2*len(values))
	for k, v := range values {
		pairs = append(pairs, k, v)
	}
	r := strings.NewReplacer(pairs...)
	for i, w := range words {
		words[i] = r.Replace(w)
	}
	return words, nil
}
