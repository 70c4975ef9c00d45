package forge

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"regexp"
)

// The local source's overlay: what the supervisor changed, kept under
// StateDir so the repository's issue files are never edited.
//
//	<n>.json               labels added/removed, closed
//	<n>.comments.md        comments, readable by a human
//	prs/<head>--<base>.md  "pull requests": front matter + the exact body

// overlay is one issue's changes.
type overlay struct {
	LabelsAdded   []string   `json:"labelsAdded,omitempty"`
	LabelsRemoved []string   `json:"labelsRemoved,omitempty"`
	Closed        bool       `json:"closed,omitempty"`
	ClosedAt      *time.Time `json:"closedAt,omitempty"`
}

// apply gives the labels and state the issue has with the overlay on top.
func (o overlay) apply(labels []string, state string) ([]string, string) {
	out := []string{}
	for _, l := range labels {
		if !hasLabel(o.LabelsRemoved, l) {
			out = appendLabel(out, l)
		}
	}
	for _, l := range o.LabelsAdded {
		out = appendLabel(out, l)
	}
	if o.Closed {
		state = "closed"
	}
	return out, state
}

// withLabel records label as added (false when the issue has it already).
func (o *overlay) withLabel(fileLabels []string, label string) bool {
	now, _ := o.apply(fileLabels, "")
	if hasLabel(now, label) {
		return false
	}
	o.LabelsRemoved = withoutLabel(o.LabelsRemoved, label)
	if !hasLabel(fileLabels, label) {
		o.LabelsAdded = appendLabel(o.LabelsAdded, label)
	}
	return true
}

// withoutLabel records label as removed (false when the issue lacks it).
func (o *overlay) withoutLabel(fileLabels []string, label string) bool {
	now, _ := o.apply(fileLabels, "")
	if !hasLabel(now, label) {
		return false
	}
	o.LabelsAdded = withoutLabel(o.LabelsAdded, label)
	if hasLabel(fileLabels, label) {
		o.LabelsRemoved = appendLabel(o.LabelsRemoved, label)
	}
	return true
}

// Comments file: a heading, then per comment a header line that carries
// the body's length in bytes, the body verbatim, and a blank line. The
// length (not a closing delimiter) ends a body, so no comment text can
// forge or break the structure.
const commentsHeading = "# Comments on issue #%d (written by wave-orchestrator)\n\n"

var commentHeader = regexp.MustCompile(`^<!-- wave-orchestrator comment id=([0-9]+) author=(\S+) created=(\S+) bytes=([0-9]+) -->$`)

func formatComments(n int, cs []backlog.Comment) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, commentsHeading, n)
	for _, c := range cs {
		fmt.Fprintf(&b, "<!-- wave-orchestrator comment id=%d author=%s created=%s bytes=%d -->\n",
			c.ID, c.Author, c.CreatedAt.UTC().Format(time.RFC3339Nano), len(c.Body))
		b.WriteString(c.Body)
		b.WriteString("\n\n")
	}
	return b.Bytes()
}

// parseComments reads a comments file; errors are *lineError.
func parseComments(data []byte) ([]backlog.Comment, error) {
	out := []backlog.Comment{}
	line := func(off int) int { return bytes.Count(data[:off], []byte("\n")) + 1 }
	off := 0
	// Skip the heading and anything else before the first comment header.
	for off < len(data) && !bytes.HasPrefix(data[off:], []byte("<!-- wave-orchestrator comment ")) {
		_, rest, ok := cutLine(data[off:])
		if !ok {
			return out, nil
		}
		off = len(data) - len(rest)
	}
	for off < len(data) {
		h, rest, _ := cutLine(data[off:])
		if len(bytes.TrimSpace(h)) == 0 {
			off = len(data) - len(rest)
			continue
		}
		m := commentHeader.FindSubmatch(bytes.TrimRight(h, "\r"))
		if m == nil {
			return nil, atLine(line(off), "expected a comment header <!-- wave-orchestrator comment id=... bytes=... -->")
		}
		id, _ := strconv.ParseInt(string(m[1]), 10, 64)
		created, err := time.Parse(time.RFC3339Nano, string(m[3]))
		if err != nil {
			return nil, atLine(line(off), "comment %d: bad created time %q", id, m[3])
		}
		size, err := strconv.Atoi(string(m[4]))
		if err != nil || size > len(rest) {
			return nil, atLine(line(off), "comment %d: its body is shorter than its header says (%s bytes)", id, m[4])
		}
		out = append(out, backlog.Comment{ID: id, Author: string(m[2]), CreatedAt: created, Body: string(rest[:size])})
		off = len(data) - len(rest) + size
	}
	return out, nil
}

// localPR is a PR file's front matter.
type localPR struct {
	Number  int       `yaml:"number"`
	Head    string    `yaml:"head"`
	Base    string    `yaml:"base"`
	Title   string    `yaml:"title"`
	State   string    `yaml:"state"`
	Created time.Time `yaml:"created"`
	Updated time.Time `yaml:"updated"`
}

func formatPR(p localPR, body string) ([]byte, error) {
	front, err := yaml.Marshal(p)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(front)
	b.WriteString("---\n")
	b.WriteString(body)
	return b.Bytes(), nil
}

func parsePR(data []byte) (localPR, string, error) {
	front, body, err := splitFrontMatter(data)
	if err != nil {
		return localPR{}, "", err
	}
	var p localPR
	if err := yaml.Unmarshal(front, &p); err != nil {
		return localPR{}, "", yamlLineError(err)
	}
	if p.Number <= 0 || p.Head == "" || p.Base == "" {
		return localPR{}, "", atLine(1, "front matter needs number, head and base")
	}
	return p, string(body), nil
}

// prFileName is "<head>--<base>.md" with every byte outside
// [A-Za-z0-9._-] replaced, so a branch name cannot leave the prs dir. Two
// pairs may sanitize alike; the file's front matter says which pair it
// holds, and the other pair is refused rather than overwriting it.
func prFileName(head, base string) string {
	return sanitizeName(head) + "--" + sanitizeName(base) + ".md"
}

func sanitizeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			b[i] = '_'
		}
	}
	out := strings.TrimLeft(string(b), ".")
	if out == "" {
		out = "_"
	}
	return out
}
