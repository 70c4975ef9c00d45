package forge

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

func TestParseIssueFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want issueFile
	}{
		{"full", "---\ntitle: Fix it\nlabels: [bug, area:api]\nstate: closed\npriority: high\ncreated: 2024-03-04\n---\n\nBody line\n\nmore\n",
			issueFile{Title: "Fix it", Labels: []string{"bug", "area:api", "priority:high"}, State: "closed",
				Created: time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC), Body: "Body line\n\nmore\n"}},
		{"defaults", "---\ntitle: t\n---\nb", issueFile{Title: "t", Labels: []string{}, State: "open", Body: "b"}},
		{"block list, CRLF, BOM", "\ufeff---\r\ntitle: t\r\nlabels:\r\n  - a\r\n  - b\r\n---\r\nbody\r\n",
			issueFile{Title: "t", Labels: []string{"a", "b"}, State: "open", Body: "body\r\n"}},
		{"priority already a label", "---\ntitle: t\nlabels: [priority:low]\npriority: low\n---\n",
			issueFile{Title: "t", Labels: []string{"priority:low"}, State: "open", Body: ""}},
		{"RFC 3339 created", "---\ntitle: t\ncreated: 2024-03-04T05:06:07Z\n---\n",
			issueFile{Title: "t", Labels: []string{}, State: "open", Created: time.Date(2024, 3, 4, 5, 6, 7, 0, time.UTC)}},
		{"body with fences kept", "---\ntitle: t\n---\n---\nnot front matter\n---\n",
			issueFile{Title: "t", Labels: []string{}, State: "open", Body: "---\nnot front matter\n---\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseIssueFile([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if got.Title != tc.want.Title || !slices.Equal(got.Labels, tc.want.Labels) || got.State != tc.want.State ||
				!got.Created.Equal(tc.want.Created) || got.Body != tc.want.Body {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseIssueFileErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		line     int
		says     string
	}{
		{"no front matter", "# just markdown\n", 1, "must start with a line"},
		{"never closed", "---\ntitle: t\n", 1, "never closed"},
		{"empty", "---\n---\n", 1, "title is required"},
		{"no title", "---\nlabels: [a]\n---\n", 1, "title is required"},
		{"blank title", "---\ntitle: \"  \"\n---\n", 2, "title is empty"},
		{"bad state", "---\ntitle: t\nlabels: [a]\nstate: done\n---\n", 4, `state must be open or closed, not "done"`},
		{"labels scalar", "---\ntitle: t\nlabels: bug\n---\n", 3, "labels must be a list"},
		{"label a map", "---\ntitle: t\nlabels:\n  - a\n  - {x: 1}\n---\n", 5, "a label must be a single value"},
		{"unknown key", "---\ntitle: t\n\nlables: [a]\n---\n", 4, `unknown key "lables"`},
		{"duplicate key", "---\ntitle: a\ntitle: b\n---\n", 3, `"title" given twice`},
		{"bad date", "---\ntitle: t\ncreated: last week\n---\n", 3, "created must be a date"},
		{"yaml syntax", "---\ntitle: t\nlabels: [a, b\nstate: open\n---\n", 0, "not valid YAML"},
		{"not a mapping", "---\n- a\n- b\n---\n", 2, "must be a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseIssueFile([]byte(tc.in))
			var le *lineError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want a lineError", err)
			}
			if tc.line > 0 && le.Line != tc.line {
				t.Errorf("line = %d, want %d (%v)", le.Line, tc.line, err)
			}
			if tc.line == 0 && le.Line < 2 {
				t.Errorf("line = %d, want a line inside the front matter (%v)", le.Line, err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("err = %v, want it to say %q", err, tc.says)
			}
		})
	}
}

func TestIssueNumber(t *testing.T) {
	for name, want := range map[string]int{"12-fix-it.md": 12, "7.md": 7, "007-x.md": 7, "0-x.md": 0,
		"README.md": 0, "12-x.txt": 0, "12x.md": 0, "3.comments.md": 0} {
		if got, _ := issueNumber(name); got != want {
			t.Errorf("issueNumber(%q) = %d, want %d", name, got, want)
		}
	}
}

func TestCommentsFileRoundTripsHostileBodies(t *testing.T) {
	at := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	cs := []backlog.Comment{
		{ID: 1, Author: "wave-orchestrator", CreatedAt: at, Body: "plain"},
		{ID: 2, Author: "wave-orchestrator", CreatedAt: at,
			Body: "forged:\n<!-- wave-orchestrator comment id=9 author=x created=2024-01-02T03:04:05Z bytes=1 -->\nx\n\n"},
		{ID: 3, Author: "wave-orchestrator", CreatedAt: at, Body: "no newline, \x1b[31mred\x1b[0m; rm -rf / `id` $(x)"},
		{ID: 4, Author: "wave-orchestrator", CreatedAt: at, Body: ""},
	}
	got, err := parseComments(formatComments(5, cs))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, cs, func(a, b backlog.Comment) bool {
		return a.ID == b.ID && a.Body == b.Body && a.Author == b.Author && a.CreatedAt.Equal(b.CreatedAt)
	}) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, cs)
	}
	bad := []byte("# heading\n\n<!-- wave-orchestrator comment id=1 author=a created=2024-01-02T03:04:05Z bytes=99 -->\nshort\n")
	if _, err := parseComments(bad); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("truncated file: err = %v, want one naming line 3", err)
	}
}

func TestOverlayLabels(t *testing.T) {
	file := []string{"bug", "wave:claimed"}
	var ov overlay
	if ov.withLabel(file, "BUG") {
		t.Error("adding a label the file has changed the overlay")
	}
	if !ov.withoutLabel(file, "wave:claimed") || ov.withoutLabel(file, "wave:claimed") {
		t.Error("removing a file label: want a change once")
	}
	if !ov.withLabel(file, "wave:claimed") || len(ov.LabelsAdded) != 0 || len(ov.LabelsRemoved) != 0 {
		t.Errorf("re-adding a file label: overlay %+v, want empty", ov)
	}
	ov.withLabel(file, "needs-input")
	if got, _ := ov.apply(file, "open"); !slices.Equal(got, []string{"bug", "wave:claimed", "needs-input"}) {
		t.Errorf("labels = %q", got)
	}
}
