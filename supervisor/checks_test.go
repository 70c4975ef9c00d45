package supervisor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// backlogKeys adds keys (indented two spaces, one per line) to the
// fixture's backlog section.
func (g *ghFixture) backlogKeys(keys string) {
	g.config = strings.Replace(g.config, "backlog:\n", "backlog:\n"+keys, 1)
}

// fastChecks looks at waiting checks every sweep or so.
func fastChecks(o *Options) { o.ChecksPoll = 50 * time.Millisecond }

// originGit runs a read-only git command in the bare origin. It is for
// the fake's ChecksBy, which runs inside a request: no t.Fatal there.
func originGit(origin string, args ...string) (string, error) {
	out, err := exec.Command("git", append([]string{"-C", origin}, args...)...).Output()
	return strings.TrimSpace(string(out)), err
}

// originHas: commit sha on origin has path.
func originHas(origin, sha, path string) bool {
	_, err := originGit(origin, "cat-file", "-e", sha+":"+path)
	return err == nil
}

// hostileSummary is a red check's summary as a hostile or careless CI
// could write it: terminal escapes, a command substitution, a fence.
const hostileSummary = "FAIL: TestParse (0.01s)\n\x1b[31mexpected 2, got 3\x1b[0m\n$(touch /tmp/wave-pwned) ```\nrm -rf /"

func TestARedCheckSendsTheIssueBackWithTheChecksSummary(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.backlogKeys("  checks: [ci]\n")
	g.ghIssue(1, "Parse dates", "Files: backlog-work/**")
	// Red until the change carries the fix file a rework round commits.
	g.srv.ChecksBy(func(sha string) []forgetest.Check {
		if originHas(g.origin, sha, "backlog-work/issue-1-fix.md") {
			return []forgetest.Check{{Name: "ci"}}
		}
		return []forgetest.Check{{Name: "ci", Conclusion: "failure", Title: "1 test failed", Summary: hostileSummary,
			URL: "https://ci.example/runs/41"}}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := g.runCtx(ctx, fastChecks, 1)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	is := r.Issues[1]
	if is.State != backlog.StateMerged || is.Reworks != 1 || is.ReworkFrom != backlog.ReworkChecks {
		t.Fatalf("#1: %s after %d rework round(s) from %q; want merged after 1 round from checks", is.State, is.Reworks, is.ReworkFrom)
	}
	p := prompt(t, res.Dir, 1, 2)
	for _, want := range []string{`check "ci"`, "concluded failure", "1 test failed", "FAIL: TestParse (0.01s)",
		"expected 2, got 3", "https://ci.example/runs/41", "$(touch /tmp/wave-pwned)"} {
		if !fencedHas(p, want) {
			t.Errorf("the rework prompt lacks %q inside its fenced feedback:\n%s", want, p)
		}
	}
	if strings.Contains(p, "\x1b") {
		t.Error("the check's terminal escapes reached the worker's prompt")
	}
	if !strings.Contains(p, "a required CI check (backlog.checks) asked for changes") {
		t.Errorf("the prompt does not say a check asked for the rework:\n%s", p)
	}
	launch, err := os.ReadFile(filepath.Join(res.Dir, "runs", "i1-a2", "launch.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(launch), "TestParse") || strings.Contains(string(launch), "wave-pwned") {
		t.Errorf("the check's text is in the worker's launch record (argv or env):\n%s", launch)
	}
	var outcomes []string
	for _, ev := range g.events(res.Dir) {
		if ev.Kind == backlog.EvChecks && ev.Issue == 1 {
			outcomes = append(outcomes, ev.Outcome)
		}
	}
	if !slices.Equal(outcomes, []string{backlog.ChecksFailed, backlog.ChecksPassed}) {
		t.Errorf("checks events of #1: %v, want [failed passed]", outcomes)
	}
	if _, err := os.Stat("/tmp/wave-pwned"); err == nil {
		t.Error("the check's summary was run")
	}
}

func TestAPendingCheckNeverHoldsTheTrain(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.backlogKeys("  checks: [ci]\n")
	gate := filepath.Join(t.TempDir(), "one-is-waiting")
	g.ghIssue(1, "First in the queue", "Files: part1/**\n\nlocal-agent: commit=part1/a.md")
	// #2's worker finishes only once #1 waits for its checks.
	g.ghIssue(2, "Second", "Files: part2/**\n\nlocal-agent: commit=part2/b.md wait="+gate)
	var pendingSeen atomic.Bool
	g.srv.ChecksBy(func(sha string) []forgetest.Check {
		if !originHas(g.origin, sha, "part1/a.md") || originHas(g.origin, sha, "part2/b.md") {
			return []forgetest.Check{{Name: "ci"}} // #2's head, or a wave tip
		}
		// #1's head: pending until #2 merged.
		log, _ := originGit(g.origin, "log", "--branches=wave/*", "--format=%s")
		if strings.Contains(log, "Merge #2:") {
			return []forgetest.Check{{Name: "ci"}}
		}
		pendingSeen.Store(true)
		_ = os.WriteFile(gate, nil, 0o644)
		return []forgetest.Check{{Name: "ci", PendingPolls: 1 << 30}}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := g.runCtx(ctx, fastChecks, 1, 2)
	if res.err != nil || res.ExitCode != exitcode.OK || res.Tally.Merged != 2 {
		t.Fatalf("run: exit %d, tally %+v, %v", res.ExitCode, res.Tally, res.err)
	}
	if !pendingSeen.Load() {
		t.Fatal("#1's checks were never pending")
	}
	var ready, merged []int
	for _, ev := range g.events(res.Dir) {
		switch ev.Kind {
		case backlog.EvReady:
			ready = append(ready, ev.Issue)
		case backlog.EvMerged:
			merged = append(merged, ev.Issue)
		}
	}
	if !slices.Equal(ready, []int{1, 2}) || !slices.Equal(merged, []int{2, 1}) {
		t.Errorf("ready %v, merged %v; want #1 ready first and #2 merged past it while #1's checks were pending", ready, merged)
	}
}

func TestAMissingCheckParksTheIssueAfterTheTimeout(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.backlogKeys("  checks: [ci, lint]\n  checksTimeoutMinutes: 5\n")
	g.ghIssue(1, "Nobody runs CI here", "Files: backlog-work/**")
	g.srv.SetChecks(forgetest.Check{Name: "lint"}) // ci never reports
	// The supervisor's clock jumps past the timeout once the gate looked.
	var jumped atomic.Bool
	now := func() time.Time {
		if jumped.Load() {
			return time.Now().Add(6 * time.Minute)
		}
		if g.srv.Count(forgetest.RouteCheckRuns) > 1 { // the first look is recorded unjumped
			jumped.Store(true)
		}
		return time.Now()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := g.runCtx(ctx, func(o *Options) { fastChecks(o); o.Now = now }, 1)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run: exit %d, %v; want %d (a person is needed)", res.ExitCode, res.err, exitcode.NeedsHuman)
	}
	r, _, _ := runlog.Read(res.Dir)
	is := r.Issues[1]
	if is.State != backlog.StateParked || is.MergeCommit != "" {
		t.Fatalf("#1: %s (merge %q), want parked and not merged", is.State, is.MergeCommit)
	}
	for _, want := range []string{"missing: ci", "5 minutes"} {
		if !strings.Contains(is.Question, want) {
			t.Errorf("the question %q does not say %q", is.Question, want)
		}
	}
	if is.Checks == nil || is.Checks.Outcome != backlog.ChecksTimedOut {
		t.Errorf("#1's checks: %+v, want timed-out", is.Checks)
	}
	if g.markers(1, "parked") != 1 {
		t.Error("the issue did not get its parked comment with the question")
	}
	if !strings.Contains(res.out, "missing: ci") {
		t.Errorf("the run's output does not name the missing check:\n%s", res.out)
	}
}

// TestWaitingOnChecksCostsNoRateLimit: a head whose check stays pending
// for many looks costs two requests the rate limit counts (the first
// look and the one that sees it pass), however long it waits; every look
// in between is a conditional request answered 304.
func TestWaitingOnChecksCostsNoRateLimit(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.backlogKeys("  checks: [ci]\n")
	g.ghIssue(1, "Slow CI", "Files: backlog-work/**")
	const polls = 8
	g.srv.SetChecks(forgetest.Check{Name: "ci", PendingPolls: polls})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := g.runCtx(ctx, fastChecks, 1)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	looks, counted := map[string]int{}, map[string]int{}
	for _, rq := range g.srv.Requests() {
		if rq.Route != forgetest.RouteCheckRuns && rq.Route != forgetest.RouteCombinedStatus {
			continue
		}
		looks[rq.Path]++
		if !rq.NotModified {
			counted[rq.Path]++
		}
	}
	// Two heads: the worker's and the final PR's. ci is a check run, so
	// commit statuses are never read.
	if len(looks) != 2 || g.srv.Count(forgetest.RouteCombinedStatus) > 0 {
		t.Fatalf("checks read on %v; want the worker's head and the final PR's, no status read:\n%s", looks, requestReport(g.srv.Requests()))
	}
	for path, n := range looks {
		if n <= polls || counted[path] > 2 {
			t.Errorf("%s: %d looks, %d counted by the rate limit; want more than %d looks, at most 2 counted:\n%s",
				path, n, counted[path], polls, requestReport(g.srv.Requests()))
		}
	}
}

// TestPlanReadsCommentsOnlyWhereThereAreSome: planning a backlog whose
// needs-input issues were labelled by people reads the comments only of
// those the listing says have any (one of them might hold the
// supervisor's own question); the listing's pages and the token's login
// are the rest.
func TestPlanReadsCommentsOnlyWhereThereAreSome(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	const issues, every = 250, 10 // 25 needs-input issues, 3 pages
	commented := 0
	for n := 1; n <= issues; n++ {
		if n%every != 0 {
			g.ghIssue(n, "Issue", "Files: part/**")
			continue
		}
		g.ghIssue(n, "Waits for a person", "Files: part/**", "needs-input")
		if n%(every*8) == 0 {
			g.srv.AddComment(n, "alice", "Which database?")
			commented++
		}
	}
	v := g.preview(t)
	if len(v.NeedsInput) != issues/every {
		t.Fatalf("plan: %d needs-input issues, want %d", len(v.NeedsInput), issues/every)
	}
	if got := g.srv.Count(forgetest.RouteCommentsList); got != commented {
		t.Errorf("%d comment reads, want %d (one per needs-input issue with comments):\n%s",
			got, commented, requestReport(g.srv.Requests()))
	}
	if got, want := g.srv.Total(), 3+1+commented; got > want {
		t.Errorf("%d requests, want at most %d (3 pages, the login, the comments)", got, want)
	}
}

// TestTheFinalPRsRedChecksAreReportedAndNeedAPerson: the final PR's
// checks are waited for after it opens; red, they are in status, the
// end block and a final-pr-checks notice, and the run exits 43.
func TestTheFinalPRsRedChecksAreReportedAndNeedAPerson(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.backlogKeys("  checks: [ci]\n")
	told := filepath.Join(t.TempDir(), "told.jsonl")
	g.config += "notify:\n  - kind: command\n    argv: [sh, -c, 'cat >> " + told + "; echo >> " + told + "']\n    events: [final-pr-checks]\n"
	g.ghIssue(1, "Fine alone", "Files: backlog-work/**")
	g.srv.ChecksBy(func(sha string) []forgetest.Check {
		if subject, _ := originGit(g.origin, "log", "-1", "--format=%s", sha); strings.HasPrefix(subject, "Merge #") {
			return []forgetest.Check{{Name: "ci", PendingPolls: 2, Conclusion: "failure", Title: "integration broke",
				URL: "https://ci.example/runs/99"}}
		}
		return []forgetest.Check{{Name: "ci"}}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := g.runCtx(ctx, fastChecks, 1)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman || res.Tally.Merged != 1 {
		t.Fatalf("run: exit %d, tally %+v, %v; want #1 merged and exit %d", res.ExitCode, res.Tally, res.err, exitcode.NeedsHuman)
	}
	v, err := Status(t.Context(), res.Dir, nil, false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if c := v.FinalPRChecks; c == nil || c.Outcome != backlog.ChecksFailed || c.URL != "https://ci.example/runs/99" {
		t.Errorf("status' final PR checks: %+v, want failed with the check's URL", c)
	}
	if !strings.Contains(res.out, "final pull request checks failed on ") || !strings.Contains(res.out, "failed: ci (failure)") {
		t.Errorf("the end block does not report the final PR's checks:\n%s", res.out)
	}
	b, _ := os.ReadFile(told)
	if strings.Count(string(b), `"event":"final-pr-checks"`) != 1 || !strings.Contains(string(b), "ci (failure)") {
		t.Errorf("final-pr-checks notices: %s, want one naming the red check", b)
	}
}

// TestAWaitForChecksKeepsItsClockAcrossARestart: the timeout runs from
// the gate's first look at a head, as recorded in the run's log, so a
// supervisor killed while it waited and started again later parks the
// issue then, without waiting the whole timeout again.
func TestAWaitForChecksKeepsItsClockAcrossARestart(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.backlogKeys("  checks: [ci]\n  checksTimeoutMinutes: 5\n")
	g.ghIssue(1, "CI never reports", "Files: backlog-work/**")
	ctx, crash := context.WithCancel(context.Background())
	defer crash()
	go func() { // kill it while it waits: once it looked twice
		for ctx.Err() == nil && g.srv.Count(forgetest.RouteCheckRuns) < 2 {
			time.Sleep(10 * time.Millisecond)
		}
		crash()
	}()
	first := g.runCtx(ctx, fastChecks, 1)
	if first.err == nil {
		t.Fatalf("run 1 ended by itself (exit %d); want it killed while waiting for checks", first.ExitCode)
	}
	later := func() time.Time { return time.Now().Add(6 * time.Minute) }
	ctx2, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := g.runCtx(ctx2, func(o *Options) { fastChecks(o); o.Now = later }, 1)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman || !res.Resumed {
		t.Fatalf("run 2: exit %d, resumed %v, %v; want the resumed run to park the issue (43)", res.ExitCode, res.Resumed, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	if is := r.Issues[1]; is.State != backlog.StateParked || is.Checks == nil || is.Checks.Outcome != backlog.ChecksTimedOut {
		t.Fatalf("#1: %s, checks %+v; want parked after its checks timed out", is.State, is.Checks)
	}
	if n := count(g.events(res.Dir), backlog.EvMergeStarted, 1); n != 1 {
		t.Errorf("%d merge_started events for #1, want 1 (the resumed run goes on with the merge it began)", n)
	}
}
