package supervisor

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
)

// TestFinalPRThatFailedIsOpenedByTheNextRun: GitHub refuses the final PR
// (401): the run exits non-zero naming it and stays open; once GitHub
// answers again, the next `backlog run` resumes into the end and opens
// exactly one PR, exit 0.
func TestFinalPRThatFailedIsOpenedByTheNextRun(t *testing.T) {
	g := newGHFixture(t)
	g.config = strings.Replace(g.config, "backlog:\n", "backlog:\n  workerPRs: false\n", 1)
	g.ghIssue(1, "One", "Files: a/**")
	g.srv.FailNextOn(forgetest.RoutePullCreate, http.StatusUnauthorized)
	first := g.run(1)
	if first.err == nil || first.ExitCode == ExitOK || !strings.Contains(first.err.Error(), "final pull request") {
		t.Fatalf("first life: exit %d, err %v; want non-zero naming the final pull request", first.ExitCode, first.err)
	}
	if prs := g.prsInto("main"); len(prs) != 0 {
		t.Fatalf("%d PRs into main after the refusal", len(prs))
	}
	if r, _, _ := ReadRun(first.Dir); r.Finished {
		t.Fatal("the run was recorded finished without its final pull request: nothing would retry it")
	}
	second := g.run(1)
	if second.err != nil || second.ExitCode != ExitOK || !second.Resumed || second.Dir != first.Dir {
		t.Fatalf("second life: exit %d resumed %v dir %s (first %s), %v", second.ExitCode, second.Resumed, second.Dir, first.Dir, second.err)
	}
	finals := g.prsInto("main")
	if len(finals) != 1 || len(g.mutationsInto("main")) != 1 {
		t.Fatalf("%d PRs into main (%d creates), want exactly one", len(finals), len(g.mutationsInto("main")))
	}
	r, _, _ := ReadRun(second.Dir)
	if !r.Finished || r.FinalPR == nil || r.FinalPR.Number != finals[0].Number {
		t.Errorf("run finished %v, final PR %+v; GitHub has #%d", r.Finished, r.FinalPR, finals[0].Number)
	}
	if runs, _ := ListRuns(g.layout().StateDir); len(runs) != 1 {
		t.Errorf("%d runs, want the one", len(runs))
	}
	if _, ok := g.originFile(r.Info.WaveBranch, filepath.ToSlash("backlog-work/issue-1.md")); !ok {
		t.Errorf("the wave branch %s lacks #1's work", r.Info.WaveBranch)
	}
	g.noDuplicateWrites(t)
}
