package supervisor

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// TestFinalPRThatFailedIsOpenedByTheNextRun: GitHub refuses the final PR
// (401): the run exits non-zero naming it and stays open; once GitHub
// answers again, the next `backlog run` resumes into the end and opens
// exactly one PR, exit 0.
func TestFinalPRThatFailedIsOpenedByTheNextRun(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.config = strings.Replace(g.config, "backlog:\n", "backlog:\n  workerPRs: false\n", 1)
	g.ghIssue(1, "One", "Files: a/**")
	g.srv.FailNextOn(forgetest.RoutePullCreate, http.StatusUnauthorized)
	first := g.run(1)
	if first.err == nil || first.ExitCode == exitcode.OK || !strings.Contains(first.err.Error(), "final pull request") {
		t.Fatalf("first life: exit %d, err %v; want non-zero naming the final pull request", first.ExitCode, first.err)
	}
	if prs := g.prsInto("main"); len(prs) != 0 {
		t.Fatalf("%d PRs into main after the refusal", len(prs))
	}
	if r, _, _ := runlog.Read(first.Dir); r.Finished {
		t.Fatal("the run was recorded finished without its final pull request: nothing would retry it")
	}
	second := g.run(1)
	if second.err != nil || second.ExitCode != exitcode.OK || !second.Resumed || second.Dir != first.Dir {
		t.Fatalf("second life: exit %d resumed %v dir %s (first %s), %v", second.ExitCode, second.Resumed, second.Dir, first.Dir, second.err)
	}
	finals := g.prsInto("main")
	if len(finals) != 1 || len(g.mutationsInto("main")) != 1 {
		t.Fatalf("%d PRs into main (%d creates), want exactly one", len(finals), len(g.mutationsInto("main")))
	}
	r, _, _ := runlog.Read(second.Dir)
	if !r.Finished || r.FinalPR == nil || r.FinalPR.Number != finals[0].Number {
		t.Errorf("run finished %v, final PR %+v; GitHub has #%d", r.Finished, r.FinalPR, finals[0].Number)
	}
	if runs, _ := runlog.List(g.layout().StateDir); len(runs) != 1 {
		t.Errorf("%d runs, want the one", len(runs))
	}
	if _, ok := g.originFile(r.Info.WaveBranch, filepath.ToSlash("backlog-work/issue-1.md")); !ok {
		t.Errorf("the wave branch %s lacks #1's work", r.Info.WaveBranch)
	}
	g.noDuplicateWrites(t)
}

// TestParkedIssueWorkerPRClosedWhenItsClaimIsReleased: an issue parked
// after its worker PR opened (verify failed) ends the run released; its
// PR is closed with one comment saying why, the merged issue's PR is not
// touched, and a resume of the end closes and comments nothing twice.
func TestParkedIssueWorkerPRClosedWhenItsClaimIsReleased(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.config = strings.Replace(g.config, "backlog:\n", "backlog:\n  verify: [sh, -c, \"test \\\"$WAVE_ISSUE_NUMBER\\\" != 1\"]\n", 1)
	g.ghIssue(1, "Fails verify", "Files: a/**")
	g.ghIssue(2, "Merges", "Files: b/**")
	res := g.run(1, 2)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	if r.Issues[1].State != "parked" || r.Issues[1].PR == nil || r.Issues[2].PR == nil {
		t.Fatalf("want #1 parked with a worker PR and #2 with one: %+v %+v", r.Issues[1], r.Issues[2])
	}
	state := func(n int) string {
		for _, p := range g.srv.PRs() {
			if p.Number == n {
				return p.State
			}
		}
		return "missing"
	}
	parked, merged := r.Issues[1].PR.Number, r.Issues[2].PR.Number
	if state(parked) != "closed" || state(merged) != "open" {
		t.Errorf("parked #1's PR is %s (want closed), merged #2's PR is %s (want open)", state(parked), state(merged))
	}
	if c := countMarker(g.srv.Comments(parked), "<!-- wave-orchestrator:worker-pr-closed run="); c != 1 {
		t.Errorf("%d closing comments on the parked issue's PR, want 1", c)
	}
	// The end again, as after a kill just before run_finished.
	path := filepath.Join(res.Dir, runlog.EventsFile)
	b, _ := os.ReadFile(path)
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	if err := os.WriteFile(path, []byte(strings.Join(lines[:len(lines)-1], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if again := g.run(1, 2); again.err != nil || again.ExitCode != exitcode.NeedsHuman || !again.Resumed {
		t.Fatalf("resume: exit %d resumed %v, %v", again.ExitCode, again.Resumed, again.err)
	}
	if c := countMarker(g.srv.Comments(parked), "<!-- wave-orchestrator:worker-pr-closed run="); c != 1 || state(parked) != "closed" {
		t.Errorf("after the resume: %d closing comments, PR %s", c, state(parked))
	}
	g.noDuplicateWrites(t)
}
