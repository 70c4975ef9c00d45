package main

import (
	"context"
	"strings"
	"testing"
)

// The text `backlog plan` names every issue file it could not read, with
// file:line, and a skipped issue whose file is broken points at it —
// bad YAML, no front matter and a duplicate number alike.
func TestBacklogPlanTextNamesBrokenIssueFiles(t *testing.T) {
	r := newBacklogRepo(t)
	r.issue(1, "Fine", "Files: a/**")
	r.write("docs/backlog/2-bad-yaml.md", "---\ntitle: [unclosed\n---\nbody\n")
	r.write("docs/backlog/3-no-front-matter.md", "just prose, no front matter\n")
	r.issue(4, "First four", "Files: d/**")
	r.write("docs/backlog/4-again.md", "---\ntitle: \"Second four\"\n---\nFiles: e/**\n")
	res := r.runEnv(context.Background(), "backlog", "plan", "--issues", "1,2,3")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		"docs/backlog/2-bad-yaml.md:2: front matter is not valid YAML",
		"docs/backlog/3-no-front-matter.md:1: no front matter",
		".md: issue number 4 is also used by 4-",
		"/2-bad-yaml.md could not be read (see the warning above)\n",
		"/3-no-front-matter.md could not be read (see the warning above)\n",
	} {
		if !strings.Contains(res.stdout, want) || strings.Count(res.stdout, "warning: ") != 3 {
			t.Errorf("plan lacks %q (or not three warnings):\n%s", want, res.stdout)
		}
	}
	for _, l := range strings.Split(res.stdout, "\n") {
		if strings.HasPrefix(l, "skipped: #") && strings.Contains(l, "not returned by the issue source") {
			t.Errorf("a skip hides its broken file: %s", l)
		}
	}
}
