package supervisor

import (
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
)

func TestGitHubRunClaimsLabelsCommentsWorkerPRsAndOneFinalPR(t *testing.T) {
	g := newGHFixture(t)
	g.ghIssue(1, "Add the parser", "Files: src/parser/**")
	g.ghIssue(2, "Add the printer", "Files: src/printer/**")
	g.ghIssue(3, "Write docs", "Files: docs/guide.md")
	res := g.run(1, 2, 3)
	if res.err != nil || res.ExitCode != ExitOK {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	r, _, _ := ReadRun(res.Dir)
	wave := r.Info.WaveBranch
	ms := g.srv.Mutations()
	for n := 1; n <= 3; n++ {
		if !g.hasLabel(n, "wave:claimed") {
			t.Errorf("#%d lacks the claim label", n)
		}
		if c := g.markers(n, "claim"); c != 1 {
			t.Errorf("#%d has %d claim comments, want 1", n, c)
		}
		// The visible claim comes after the ref won, label then comment,
		// and both before the issue's worker PR.
		label := mutationIndex(ms, 0, forgetest.RouteLabelsAdd, n)
		comment := mutationIndex(ms, 0, forgetest.RouteCommentCreate, n)
		if label < 0 || comment < label {
			t.Errorf("#%d: label at %d, claim comment at %d; want the label first", n, label, comment)
		}
		is := r.Issues[n]
		var pr *int
		for _, p := range g.prsInto(wave) {
			if p.Head == is.Branch {
				if pr != nil {
					t.Errorf("#%d has two worker PRs", n)
				}
				pr = &p.Number
				if !strings.Contains(p.Title+p.Body, "#"+itoa(n)) {
					t.Errorf("worker PR %d does not reference #%d: %q / %q", p.Number, n, p.Title, p.Body)
				}
			}
		}
		if pr == nil {
			t.Errorf("#%d: no worker PR %s → %s", n, is.Branch, wave)
			continue
		}
		if is.PR == nil || is.PR.Number != *pr {
			t.Errorf("#%d: run records worker PR %+v, GitHub has #%d", n, is.PR, *pr)
		}
		create := mutationIndex(ms, 0, forgetest.RoutePullCreate, *pr)
		if create < comment {
			t.Errorf("#%d: worker PR created (%d) before the claim comment (%d)", n, create, comment)
		}
	}
	if prs := g.prsInto(wave); len(prs) != 3 {
		t.Errorf("%d PRs into the wave branch, want 3 (one per worker)", len(prs))
	}
	finals := g.prsInto("main")
	if len(finals) != 1 {
		t.Fatalf("%d PRs into main, want exactly one: %+v", len(finals), finals)
	}
	final := finals[0]
	if final.Head != wave || final.State != "open" {
		t.Errorf("final PR %s → %s (%s), want %s → main, open", final.Head, final.Base, final.State, wave)
	}
	if got := closesRefs(final.Body); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("final PR closes %v, want [1 2 3]:\n%s", got, final.Body)
	}
	for n := 1; n <= 3; n++ {
		if p := r.Issues[n].PR; p == nil || !strings.Contains(final.Body, p.URL) {
			t.Errorf("final PR body does not link #%d's worker PR %+v", n, p)
		}
	}
	// The final PR is the last PR written, after every worker PR.
	lastCreate := -1
	for i, m := range ms {
		if m.Route == forgetest.RoutePullCreate {
			lastCreate = i
		}
	}
	if lastCreate < 0 || ms[lastCreate].Issue != final.Number {
		t.Errorf("the last PR created is not the final PR: %+v", ms)
	}
	if r.FinalPR == nil || r.FinalPR.Number != final.Number {
		t.Errorf("run records final PR %+v, GitHub has #%d", r.FinalPR, final.Number)
	}
	// A clean run writes nothing else: no label removed, no issue edited,
	// no PR edited, no other comment.
	for _, route := range []string{forgetest.RouteLabelRemove, forgetest.RouteIssueEdit, forgetest.RoutePullEdit} {
		if m := g.srv.MutationsOn(route); len(m) > 0 {
			t.Errorf("unexpected %s writes: %+v", route, m)
		}
	}
	if c := len(g.srv.MutationsOn(forgetest.RouteCommentCreate)); c != 3 {
		t.Errorf("%d comments posted, want 3 (one claim comment each)", c)
	}
	g.noDuplicateWrites(t)
	t.Logf("GitHub calls: %d for 3 issues (%.1f per issue); by route: %s", g.srv.Total(), float64(g.srv.Total())/3, g.routeCounts())
}
