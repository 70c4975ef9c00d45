package lazyregexp

import (
	"reflect"
	"regexp"
	"testing"
)

// A lazy pattern answers as the compiled one does, on first use and after.
func TestLazyPatternsAnswerAsCompiledOnes(t *testing.T) {
	const src = `^(\w+)-a(\d+)$`
	lazy, re := New(src), regexp.MustCompile(src)
	for range 2 {
		for _, s := range []string{"A1-a2", "nope", "w0-A1-a10"} {
			if lazy.MatchString(s) != re.MatchString(s) || lazy.Match([]byte(s)) != re.Match([]byte(s)) {
				t.Errorf("%q: match differs", s)
			}
			if !reflect.DeepEqual(lazy.FindStringSubmatch(s), re.FindStringSubmatch(s)) ||
				!reflect.DeepEqual(lazy.FindSubmatch([]byte(s)), re.FindSubmatch([]byte(s))) {
				t.Errorf("%q: submatches differ", s)
			}
		}
	}
	if lazy.String() != src || lazy.Regexp().String() != src {
		t.Errorf("source %q / %q, want %q", lazy.String(), lazy.Regexp().String(), src)
	}
}
