package backlog

import (
	"fmt"
	"strings"
	"unicode"
)

// ParseFields reads space-separated key=value words (values quoted as in
// the result marker); a bare word is a key with an empty value.
func ParseFields(s string) (map[string]string, error) {
	out := map[string]string{}
	rest := s
	for {
		rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		if rest == "" {
			return out, nil
		}
		end := strings.IndexFunc(rest, func(r rune) bool { return r == '=' || unicode.IsSpace(r) })
		if end < 0 {
			out[rest] = ""
			return out, nil
		}
		key := rest[:end]
		if key == "" {
			return nil, fmt.Errorf("a word starts with '='")
		}
		if rest[end] != '=' {
			out[key], rest = "", rest[end:]
			continue
		}
		v, r, ok := nextValue(rest[end+1:])
		if !ok {
			return nil, fmt.Errorf("%s: unterminated or malformed quoted value", key)
		}
		out[key], rest = v, r
	}
}
