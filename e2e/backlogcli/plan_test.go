package backlogcli

import (
	"context"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// The text `backlog plan` names every issue file it could not read, with
// file:line, and a skipped issue whose file is broken points at it —
// bad YAML, no front matter and a duplicate number alike.
func TestBacklogPlanTextNamesBrokenIssueFiles(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Fine", "Files: a/**")
	r.Write("docs/backlog/2-bad-yaml.md", "---\ntitle: [unclosed\n---\nbody\n")
	r.Write("docs/backlog/3-no-front-matter.md", "just prose, no front matter\n")
	r.Issue(4, "First four", "Files: d/**")
	r.Write("docs/backlog/4-again.md", "---\ntitle: \"Second four\"\n---\nFiles: e/**\n")
	res := r.RunEnv(context.Background(), "backlog", "plan", "--issues", "1,2,3")
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, want := range []string{
		"docs/backlog/2-bad-yaml.md:2: front matter is not valid YAML",
		"docs/backlog/3-no-front-matter.md:1: no front matter",
		".md: issue number 4 is also used by 4-",
		"/2-bad-yaml.md could not be read (see the warning above)\n",
		"/3-no-front-matter.md could not be read (see the warning above)\n",
	} {
		if !strings.Contains(res.Stdout, want) || strings.Count(res.Stdout, "warning: ") != 3 {
			t.Errorf("plan lacks %q (or not three warnings):\n%s", want, res.Stdout)
		}
	}
	for _, l := range strings.Split(res.Stdout, "\n") {
		if strings.HasPrefix(l, "skipped: #") && strings.Contains(l, "not returned by the issue source") {
			t.Errorf("a skip hides its broken file: %s", l)
		}
	}
}
