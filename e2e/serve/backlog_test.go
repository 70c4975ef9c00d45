package serve

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// The backlog on a read-only page: the questions of a needs-input issue
// and of a parked one both wait on the page, which says how to answer
// them from a terminal; the issue table has each worker's branch and its
// output a click away; once #1 is answered and merged its row no longer
// shows the question it asked.
func TestServePageShowsTheBacklogsQuestionsBranchesAndOutput(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Asks", "Files: backlog-work/issue-1.md\n\nlocal-agent: result=needs-input question=\"Which API?\"")
	r.Issue(2, "Blocks", "Files: b/**\n\nlocal-agent: result=blocked detail=\"Keep the v1 schema or move to v2?\"")
	r.CommitIssues(t)
	bg := context.Background()
	if first := r.RunEnv(bg, "backlog", "run", "--issues", "1,2", "--no-dashboard"); first.Code != e2etest.ExitNeedsHuman {
		t.Fatalf("the first run: exit %d\n%s\n%s", first.Code, first.Stdout, first.Stderr)
	}
	url := r.ServeEnv(t, r.Env())
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, "both questions on the page", `document.querySelectorAll('#questions [data-question][data-state="pending"]').length === 2`)
	parked := pageEval[string](t, ctx, `[...document.querySelectorAll('#questions [data-question]')].map(b => b.textContent).join("\n")`)
	for _, want := range []string{"issue #2 (parked)", "Keep the v1 schema or move to v2?", "worker reported blocked", "issue #1", "Which API?", "wave-orchestrator answer issue-"} {
		if !strings.Contains(parked, want) {
			t.Errorf("the questions on the page lack %q:\n%s", want, parked)
		}
	}
	notice := pageEval[string](t, ctx, `(e => e.hidden ? "" : e.textContent)(document.getElementById("answer-off"))`)
	if !strings.Contains(notice, "wave-orchestrator answer ID TEXT") {
		t.Errorf("the read-only notice %q does not say how to answer from a terminal", notice)
	}
	if n := pageEval[int](t, ctx, `document.querySelectorAll("textarea").length`); n != 0 {
		t.Errorf("a read-only page has %d answer boxes", n)
	}

	head := pageEval[string](t, ctx, `[...document.querySelectorAll("table.issues th")].map(h => h.textContent).join(",")`)
	if head != "issue,state,title,branch,ahead,note," {
		t.Errorf("the issue table's columns: %s", head)
	}
	branch := pageEval[string](t, ctx, `document.querySelector('tr[data-issue="2"] td.branch').textContent`)
	if !strings.HasSuffix(branch, "-i2") {
		t.Errorf("#2's branch on the page: %q", branch)
	}
	if note := pageEval[string](t, ctx, `document.querySelector('tr[data-issue="2"] td.note').textContent`); note != "? Keep the v1 schema or move to v2?" {
		t.Errorf("parked #2's note: %q", note)
	}
	clickPage(t, ctx, `button[data-output="issue/2"]`)
	waitPage(t, ctx, "#2's worker output", `document.querySelector('pre[data-tail="issue/2"]').textContent.includes("[local-worker]")`)

	if res := r.RunEnv(bg, "answer", "#1", "Use the v2 API"); res.Code != 0 {
		t.Fatalf("answer #1: %d %s", res.Code, res.Stderr)
	}
	if second := r.RunEnv(bg, "backlog", "run", "--issues", "1", "--no-dashboard"); second.Code != 0 {
		t.Fatalf("the run after the answer: exit %d\n%s\n%s", second.Code, second.Stdout, second.Stderr)
	}
	waitPage(t, ctx, "#1 merged on the page", `(document.querySelector('tr[data-issue="1"]')||{dataset:{}}).dataset.state === "merged"`)
	if note := pageEval[string](t, ctx, `document.querySelector('tr[data-issue="1"] td.note').textContent`); strings.Contains(note, "Which API?") || !strings.HasPrefix(note, "merged ") {
		t.Errorf("merged #1's note: %q; want its merge, not the question it asked", note)
	}
	screenshot(t, ctx, "serve-backlog.png")
}

// A worker at work has its commits ahead of the wave branch on the page,
// as on the dashboard.
func TestServePageShowsAWorkersCommitsAhead(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	r := e2etest.NewBacklogRepo(t)
	if _, err := r.PauseAHangingRun(t); err != nil {
		t.Logf("the paused run's supervisor: %v", err)
	}
	st := r.Status(t)
	if len(st.Issues) != 1 || st.Issues[0].CommitsAhead == nil {
		t.Fatalf("backlog status of the paused run: %+v", st.Issues)
	}
	url := r.ServeEnv(t, r.Env())
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, "#1 on the page", `document.querySelector('tr[data-issue="1"]') !== null`)
	if ahead := pageEval[string](t, ctx, `document.querySelector('tr[data-issue="1"] td.ahead').textContent`); ahead != fmt.Sprint(*st.Issues[0].CommitsAhead) {
		t.Errorf("#1's commits ahead on the page: %q, want %d", ahead, *st.Issues[0].CommitsAhead)
	}
}
