package forge

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"regexp"
)

// This file is the pure part of the local source: issue file names and
// their front matter, parsed without touching the disk.

// issueName matches "<n>-<slug>.md" (or "<n>.md").
var issueName = regexp.MustCompile(`^([0-9]+)(-[^/]*)?\.md$`)

// issueNumber is the issue number an issue file's name carries.
func issueNumber(name string) (int, bool) {
	m := issueName.FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// issueFile is what one issue file says, before the overlay.
type issueFile struct {
	Title   string
	Labels  []string
	State   string
	Created time.Time // zero: not given (the caller uses the file's mtime)
	Body    string
}

// lineError is a problem at a 1-based line of a file.
type lineError struct {
	Line int
	Err  error
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *lineError) Unwrap() error { return e.Err }

func atLine(line int, format string, args ...any) error {
	return &lineError{Line: line, Err: fmt.Errorf(format, args...)}
}

// splitFrontMatter splits "---\n<yaml>---\n<rest>" and returns the YAML,
// the rest, and the file line the YAML starts on.
func splitFrontMatter(data []byte) (front, rest []byte, err error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	first, after, ok := cutLine(data)
	if !isFence(first) {
		return nil, nil, atLine(1, `no front matter: the file must start with a line "---"`)
	}
	if !ok {
		return nil, nil, atLine(1, `front matter opened on line 1 is never closed by a line "---"`)
	}
	off := 0
	for {
		line, next, more := cutLine(after[off:])
		if isFence(line) {
			return after[:off], next, nil
		}
		if !more {
			return nil, nil, atLine(1, `front matter opened on line 1 is never closed by a line "---"`)
		}
		off = len(after) - len(next)
	}
}

// cutLine returns the first line of b (without its newline), what follows
// it, and whether there was a newline.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil, false
	}
	return b[:i], b[i+1:], true
}

func isFence(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// parseIssueFile reads an issue file: YAML front matter with title
// (required), labels (a list), state (open|closed, default open),
// priority (→ label priority:<v>) and created (a date or timestamp); the
// markdown body below it, kept verbatim but for leading blank lines.
// Unknown keys are errors, so a typo is not silently dropped. Errors are
// *lineError with the file's line number.
func parseIssueFile(data []byte) (issueFile, error) {
	front, rest, err := splitFrontMatter(data)
	if err != nil {
		return issueFile{}, err
	}
	f := issueFile{State: "open", Labels: []string{}, Body: trimLeadingBlankLines(string(rest))}
	var doc yaml.Node
	if err := yaml.Unmarshal(front, &doc); err != nil {
		return issueFile{}, yamlLineError(err)
	}
	if len(doc.Content) == 0 {
		return issueFile{}, atLine(1, "front matter is empty: title is required")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return issueFile{}, atLine(root.Line+1, "front matter must be a mapping of keys (title, labels, ...)")
	}
	seen := map[string]bool{}
	var priority string
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		line := k.Line + 1 // the YAML starts on the file's line 2
		if seen[k.Value] {
			return issueFile{}, atLine(line, "key %q given twice", k.Value)
		}
		seen[k.Value] = true
		if err := f.set(k.Value, v, line, &priority); err != nil {
			return issueFile{}, err
		}
	}
	if !seen["title"] {
		return issueFile{}, atLine(1, "title is required in the front matter")
	}
	if priority != "" {
		f.Labels = appendLabel(f.Labels, "priority:"+priority)
	}
	return f, nil
}

func (f *issueFile) set(key string, v *yaml.Node, line int, priority *string) error {
	switch key {
	case "title":
		s, err := scalar(v, line, key)
		if err != nil {
			return err
		}
		if strings.TrimSpace(s) == "" {
			return atLine(line, "title is empty")
		}
		f.Title = s
	case "labels":
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			return nil
		}
		if v.Kind != yaml.SequenceNode {
			return atLine(line, "labels must be a list, like [bug, area:api]")
		}
		for _, item := range v.Content {
			s, err := scalar(item, item.Line+1, "a label")
			if err != nil {
				return err
			}
			if s = strings.TrimSpace(s); s == "" {
				return atLine(item.Line+1, "empty label")
			}
			f.Labels = appendLabel(f.Labels, s)
		}
	case "state":
		s, err := scalar(v, line, key)
		if err != nil {
			return err
		}
		s = strings.ToLower(strings.TrimSpace(s))
		if s != "open" && s != "closed" {
			return atLine(line, "state must be open or closed, not %q", v.Value)
		}
		f.State = s
	case "priority":
		s, err := scalar(v, line, key)
		if err != nil {
			return err
		}
		*priority = strings.TrimSpace(s)
	case "created":
		s, err := scalar(v, line, key)
		if err != nil {
			return err
		}
		t, ok := parseDate(s)
		if !ok {
			return atLine(line, "created must be a date (2006-01-02) or an RFC 3339 time, not %q", s)
		}
		f.Created = t
	default:
		return atLine(line, "unknown key %q (known: title, labels, state, priority, created)", key)
	}
	return nil
}

func scalar(v *yaml.Node, line int, what string) (string, error) {
	if v.Kind != yaml.ScalarNode {
		return "", atLine(line, "%s must be a single value, not a list or mapping", what)
	}
	return v.Value, nil
}

func parseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// yamlSyntax is how yaml.v3 reports where a syntax error is.
var yamlSyntax = regexp.MustCompile(`^yaml: line ([0-9]+): (.*)$`)

func yamlLineError(err error) error {
	if m := yamlSyntax.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return atLine(n+1, "front matter is not valid YAML: %s", m[2])
	}
	return atLine(2, "front matter is not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
}

func trimLeadingBlankLines(s string) string {
	for {
		line, rest, ok := strings.Cut(s, "\n")
		if !ok || strings.TrimSpace(line) != "" {
			return s
		}
		s = rest
	}
}

func appendLabel(labels []string, l string) []string {
	if hasLabel(labels, l) {
		return labels
	}
	return append(labels, l)
}
