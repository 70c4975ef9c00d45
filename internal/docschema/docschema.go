// Package docschema checks a JSON document against the field tables of a
// markdown schema document (docs/*-schema.md), so the documentation is the
// schema and a test fails when the output and the document drift apart.
//
// A schema is the set of `### Name` sections under one `## ` heading, each
// with a table whose first three columns are field, type and meaning. A
// type is `string`, `number`, `bool`, another section's name, `array of T`,
// a list of backticked string values (`a` \| `b`: an enum), and any of
// these with `\| null`.
package docschema

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Field is one documented key.
type Field struct {
	Name, Type string
	Line       int
}

// Schema maps a section name to its fields.
type Schema map[string][]Field

var (
	nameRe = regexp.MustCompile("^`([A-Za-z0-9_]+)`$")
	enumRe = regexp.MustCompile("`([^`]*)`")
)

// row returns a table row's field name and type cell ("" when the line is
// not a field row); `\|` inside a cell is part of it.
func row(line string) (name, typ string) {
	if !strings.HasPrefix(line, "|") {
		return "", ""
	}
	cells := strings.Split(strings.ReplaceAll(line, `\|`, "\x00"), "|")
	if len(cells) < 4 {
		return "", ""
	}
	m := nameRe.FindStringSubmatch(strings.TrimSpace(cells[1]))
	if m == nil {
		return "", ""
	}
	return m[1], strings.TrimSpace(strings.ReplaceAll(cells[2], "\x00", `\|`))
}

// Parse reads the sections under the `## ` heading that starts with
// heading in the markdown file path.
func Parse(path, heading string) (Schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("schema document: %w", err)
	}
	defer f.Close()
	s := Schema{}
	in, section := false, ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = strings.HasPrefix(strings.TrimPrefix(line, "## "), heading)
			section = ""
		case in && strings.HasPrefix(line, "### "):
			section = strings.Fields(strings.TrimPrefix(line, "### "))[0]
		case in && section != "":
			if name, typ := row(line); name != "" {
				s[section] = append(s[section], Field{Name: name, Type: typ, Line: n})
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("schema document %s: %w", path, err)
	}
	if len(s) == 0 {
		return nil, fmt.Errorf("schema document %s: no field tables under a heading %q", path, heading)
	}
	return s, nil
}

// Validate checks v (decoded with encoding/json into any) against section
// root: every documented key present with its type, no undocumented key.
func (s Schema) Validate(v any, root string) []string {
	var errs []string
	s.check(v, root, "$", &errs)
	return errs
}

func (s Schema) check(v any, typ, at string, errs *[]string) {
	typ = strings.TrimSpace(typ)
	alts := strings.Split(typ, `\|`)
	if len(alts) > 1 && strings.TrimSpace(alts[len(alts)-1]) == "null" {
		if v == nil {
			return
		}
		typ = strings.TrimSpace(strings.Join(alts[:len(alts)-1], `\|`))
	}
	bad := func(want string) { *errs = append(*errs, fmt.Sprintf("%s: want %s, got %T %v", at, want, v, v)) }
	if vals := enumRe.FindAllStringSubmatch(typ, -1); len(vals) > 0 && strings.HasPrefix(typ, "`") {
		var allowed []string
		for _, m := range vals {
			allowed = append(allowed, m[1])
		}
		if str, ok := v.(string); !ok || !slices.Contains(allowed, str) {
			bad("one of " + strings.Join(allowed, ", "))
		}
		return
	}
	switch {
	case typ == "string":
		if _, ok := v.(string); !ok {
			bad("string")
		}
	case typ == "number":
		if _, ok := v.(float64); !ok {
			bad("number")
		}
	case typ == "bool":
		if _, ok := v.(bool); !ok {
			bad("bool")
		}
	case strings.HasPrefix(typ, "array of "):
		arr, ok := v.([]any)
		if !ok {
			bad("array")
			return
		}
		for i, e := range arr {
			s.check(e, strings.TrimPrefix(typ, "array of "), fmt.Sprintf("%s[%d]", at, i), errs)
		}
	default:
		fields, ok := s[typ]
		if !ok {
			*errs = append(*errs, fmt.Sprintf("%s: the document has no section %q", at, typ))
			return
		}
		obj, ok := v.(map[string]any)
		if !ok {
			bad("object " + typ)
			return
		}
		known := map[string]bool{}
		for _, f := range fields {
			known[f.Name] = true
			fv, ok := obj[f.Name]
			if !ok {
				*errs = append(*errs, fmt.Sprintf("%s: missing %q (documented at line %d)", at, f.Name, f.Line))
				continue
			}
			s.check(fv, f.Type, at+"."+f.Name, errs)
		}
		var extra []string
		for k := range obj {
			if !known[k] {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		for _, k := range extra {
			*errs = append(*errs, fmt.Sprintf("%s: key %q is not documented in section %s", at, k, typ))
		}
	}
}
