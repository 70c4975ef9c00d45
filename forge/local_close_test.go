package forge

import (
	"strings"
	"testing"
)

func TestCloseInFrontMatterChangesOnlyTheStateLine(t *testing.T) {
	cases := []struct {
		name, in, want string
		changed        bool
	}{
		{"no state: one line added", "---\ntitle: A\nlabels: [x]\n---\nBody\nstate: open\n",
			"---\ntitle: A\nlabels: [x]\nstate: closed\n---\nBody\nstate: open\n", true},
		{"open rewritten", "---\ntitle: A\nstate: open   # for now\npriority: high\n---\nBody\n",
			"---\ntitle: A\nstate: closed\npriority: high\n---\nBody\n", true},
		{"already closed", "---\ntitle: A\nstate: closed\n---\nBody\n", "---\ntitle: A\nstate: closed\n---\nBody\n", false},
		{"CRLF kept", "---\r\ntitle: A\r\n---\r\nBody\r\n", "---\r\ntitle: A\r\nstate: closed\r\n---\r\nBody\r\n", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, changed, err := CloseInFrontMatter([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != c.want || changed != c.changed {
				t.Errorf("got %q (changed %v), want %q (changed %v)", out, changed, c.want, c.changed)
			}
			if f, err := parseIssueFile(out); err != nil || f.State != "closed" {
				t.Errorf("the result does not parse as closed: %v %+v", err, f)
			}
		})
	}
}

func TestCloseInFrontMatterRefusesABrokenFile(t *testing.T) {
	_, _, err := CloseInFrontMatter([]byte("---\ntitle: [unclosed\n---\n"))
	if err == nil || !strings.Contains(err.Error(), "line") {
		t.Fatalf("err = %v, want a line-numbered parse error", err)
	}
}
