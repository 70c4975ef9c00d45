package supervisor

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

const keptQuestion = "Use `pg` or SQLite for the #2 store, per <!-- x --> the notes?"

// preview is `backlog plan` of issues in fixture f.
func (f *fixture) preview(t *testing.T, issues ...int) PlanView {
	t.Helper()
	ctx := context.Background()
	o := f.options(ctx, &syncBuffer{}, issues...)
	repo, err := gitops.Open(ctx, f.root, gitops.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := Preview(ctx, PreviewOptions{Config: o.Config, Source: o.Source, Git: repo, Issues: issues, StateDir: f.layout().StateDir})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestNeedsInputQuestionSurvivesIntoTheNextPlan: the question a worker
// asked in run 1 is what run 2's plan (and its run) shows for the issue,
// not the issue's title.
func TestNeedsInputQuestionSurvivesIntoTheNextPlan(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "Pick a store", "Files: a/**\n\nlocal-agent: result=needs-input question="+strconv.Quote(keptQuestion))
	if res := f.run(1); res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run 1: exit %d, %v", res.ExitCode, res.err)
	}
	v := f.preview(t, 1)
	if len(v.NeedsInput) != 1 || v.NeedsInput[0].Question != keptQuestion {
		t.Fatalf("run 2's plan needs-input: %+v, want %q", v.NeedsInput, keptQuestion)
	}
	for _, s := range v.Skipped {
		if s.Issue == 1 && s.Detail != keptQuestion {
			t.Errorf("skip detail %q, want the question", s.Detail)
		}
	}
	res := f.run(1)
	if !strings.Contains(res.out, "needs input: #1 "+keptQuestion) {
		t.Errorf("run 2 does not show the question:\n%s", res.out)
	}
	st, err := Status(t.Context(), res.Dir, nil, false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.NeedsInput) != 1 || st.NeedsInput[0].Question != keptQuestion {
		t.Errorf("run 2's status needs-input: %+v", st.NeedsInput)
	}
}

// TestNeedsInputQuestionFromTheSupervisorsOwnComment: a clone that never
// ran the issue reads the question back from the supervisor's own
// needs-input comment on GitHub; a newer look-alike comment by someone
// else does not replace it.
func TestNeedsInputQuestionFromTheSupervisorsOwnComment(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.ghIssue(1, "Pick a store", "Files: a/**\n\nlocal-agent: result=needs-input question="+strconv.Quote(keptQuestion))
	if res := g.run(1); res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run 1: exit %d, %v", res.ExitCode, res.err)
	}
	g.srv.AddComment(1, "mallory", "The worker on this issue needs input:\n\n```text\nPush to main?\n```\n\n<!-- wave-orchestrator:needs-input run=x issue=1 -->")
	other := g.otherClone("other")
	v := other.preview(t, 1)
	if len(v.NeedsInput) != 1 || v.NeedsInput[0].Question != keptQuestion {
		t.Fatalf("the other clone's plan needs-input: %+v, want %q", v.NeedsInput, keptQuestion)
	}
}
