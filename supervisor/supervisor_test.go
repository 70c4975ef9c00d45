package supervisor

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

func TestBoundedRunMergesEveryIssueAndOpensOneFinalPR(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "Add the parser", "Files: src/parser/**")
	f.issue(2, "Add the printer", "Files: src/printer/**")
	f.issue(3, "Write docs", "Files: docs/guide.md")
	res := f.run(1, 2, 3)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	if res.Tally.Merged != 3 || res.Tally.InFlight != 0 {
		t.Fatalf("tally %+v, want 3 merged", res.Tally)
	}
	r, _, _ := runlog.Read(res.Dir)
	wave := r.Info.WaveBranch
	for n := 1; n <= 3; n++ {
		if _, ok := f.originFile(wave, "backlog-work/issue-"+itoa(n)+".md"); !ok {
			t.Errorf("origin %s lacks the work of #%d", wave, n)
		}
	}
	body, err := os.ReadFile(filepath.Join(res.Dir, runlog.FinalPRFile))
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 3; n++ {
		if !strings.Contains(string(body), "Closes #"+itoa(n)+"\n") {
			t.Errorf("final PR body lacks Closes #%d:\n%s", n, body)
		}
	}
	// Merged worktrees and branches are removed (they are on the wave branch).
	for _, is := range r.List() {
		if _, err := os.Stat(is.Worktree); !os.IsNotExist(err) {
			t.Errorf("worktree of #%d still there: %v", is.Number, err)
		}
		if slices.Contains(f.originBranches(), "refs/heads/"+is.Branch) {
			t.Errorf("merged worker branch %s still on origin", is.Branch)
		}
	}
	// Merged issues keep their claim (the issue stays open until the final PR merges).
	for n := 1; n <= 3; n++ {
		if !slices.Contains(f.originBranches(), "refs/heads/wave-claims/"+itoa(n)) {
			t.Errorf("claim of merged #%d released; want it kept until the issue closes", n)
		}
	}
}

func TestNeedsInputGoesToTheBucketAndNoWorkFails(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "Pick a database", "Files: db/**\n\nlocal-agent: result=needs-input question=\"Postgres or SQLite?\"")
	f.issue(2, "Nothing to do", "Files: x/**\n\nlocal-agent: commit=none")
	f.issue(3, "Real work", "Files: y/**")
	res := f.run(1, 2, 3)
	if res.err != nil {
		t.Fatal(res.err)
	}
	if res.ExitCode != exitcode.NeedsHuman {
		t.Errorf("exit %d, want 43 (needs a person)", res.ExitCode)
	}
	r, _, _ := runlog.Read(res.Dir)
	if got := r.Issues[1]; got.State != backlog.StateNeedsInput || got.Question != "Postgres or SQLite?" {
		t.Errorf("#1: state %s question %q", got.State, got.Question)
	}
	if got := r.Issues[2]; got.State != backlog.StateFailed || !strings.Contains(got.Detail, "no work") {
		t.Errorf("#2: state %s detail %q, want failed (no work)", got.State, got.Detail)
	}
	if r.Issues[3].State != backlog.StateMerged {
		t.Errorf("#3: %s, want merged", r.Issues[3].State)
	}
	if !strings.Contains(res.out, "Postgres or SQLite?") {
		t.Errorf("the question is not in the run's output")
	}
	body, _ := os.ReadFile(filepath.Join(res.Dir, runlog.FinalPRFile))
	if strings.Contains(string(body), "Closes #1") || strings.Contains(string(body), "Closes #2") || !strings.Contains(string(body), "Closes #3") {
		t.Errorf("final PR must close only merged #3:\n%s", body)
	}
	// The needs-input comment was posted once, and the issue carries the label now.
	is, err := f.source().Get(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(is.Labels, "needs-input") {
		t.Errorf("#1 labels %v, want needs-input", is.Labels)
	}
	if n := countMarker(is.Comments, "wave-orchestrator:needs-input"); n != 1 {
		t.Errorf("#1 has %d needs-input comments, want 1", n)
	}
}

func TestSalvageRelaunchKeepsUncommittedWork(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(4, "Flaky network", "Files: net/**\n\nlocal-agent: dirty=net/wip.txt fail-attempts=1")
	res := f.run(4)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("exit %d, %v", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	is := r.Issues[4]
	if is.State != backlog.StateMerged || is.Salvages != 1 || is.Attempts != 2 {
		t.Fatalf("#4: state %s salvages %d attempts %d, want merged after one salvage", is.State, is.Salvages, is.Attempts)
	}
	// The salvage snapshot holds the first attempt's uncommitted file.
	tree := git(t, f.root, "ls-tree", "-r", "--name-only", is.SalvageRefs[0])
	if !strings.Contains(tree, "net/wip.txt") {
		t.Errorf("salvage ref %s lacks net/wip.txt:\n%s", is.SalvageRefs[0], tree)
	}
	// The relaunch found the file still in the worktree and committed it.
	if body, ok := f.originFile(r.Info.WaveBranch, "net/wip.txt"); !ok || !strings.Contains(body, "attempt 1") {
		t.Errorf("wave branch lacks the first attempt's uncommitted work: %q", body)
	}
	prompt, _ := os.ReadFile(filepath.Join(res.Dir, "runs", "i4-a2", "prompt.md"))
	if !strings.Contains(string(prompt), "continue") || !strings.Contains(string(prompt), is.SalvageRefs[0]) {
		t.Errorf("relaunch prompt lacks the salvage header:\n%s", prompt)
	}
}

func TestSecondFailureParksTheIssueAndTheRestGoesOn(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(5, "Always broken", "Files: a/**\n\nlocal-agent: fail-attempts=9")
	f.issue(6, "Fine", "Files: b/**")
	res := f.run(5, 6)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("exit %d, %v; want 43", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	if r.Issues[5].State != backlog.StateParked || r.Issues[5].Attempts != 2 {
		t.Errorf("#5: %s after %d attempts, want parked after 2", r.Issues[5].State, r.Issues[5].Attempts)
	}
	if r.Issues[6].State != backlog.StateMerged {
		t.Errorf("#6: %s, want merged", r.Issues[6].State)
	}
	if slices.Contains(f.originBranches(), "refs/heads/wave-claims/5") {
		t.Errorf("parked #5 kept its claim; want it released at the end")
	}
	// Its work is kept: the worktree and branch of a parked issue stay.
	if _, err := os.Stat(r.Issues[5].Worktree); err != nil {
		t.Errorf("parked #5 lost its worktree: %v", err)
	}
}

func TestConflictIsSentBackOnceThenMerged(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// Declared apart, so they run side by side, yet both write shared.txt.
	f.issue(7, "Left", "Files: left/**\n\nlocal-agent: commit=shared.txt")
	f.issue(8, "Right", "Files: right/**\n\nlocal-agent: commit=shared.txt")
	res := f.run(7, 8)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("exit %d, %v", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	conflicted := 0
	for _, n := range []int{7, 8} {
		is := r.Issues[n]
		if is.State != backlog.StateMerged {
			t.Errorf("#%d: %s, want merged", n, is.State)
		}
		conflicted += is.Conflicts
	}
	if conflicted != 1 {
		t.Errorf("%d conflicts recorded, want exactly 1 (the second merge)", conflicted)
	}
}

func TestStalledWorkerIsStoppedSalvagedThenParked(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.config = strings.Replace(baseConfig, "silenceSeconds: 30", "silenceSeconds: 2", 1)
	f.issue(9, "Hangs", "Files: h/**\n\nlocal-agent: hang")
	res := f.run(9)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("exit %d, %v; want 43", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	is := r.Issues[9]
	if is.State != backlog.StateParked || is.Salvages != 1 || !strings.Contains(is.Detail, "stalled") {
		t.Errorf("#9: %s salvages %d detail %q; want parked as stalled after one salvage", is.State, is.Salvages, is.Detail)
	}
}

func TestHostileIssueTextIsDataOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	evil := "$(touch PWNED) `touch PWNED2`; rm -rf / ../../etc \x1b[31mred " + strings.Repeat("long ", 60)
	f.issue(10, evil, "Files: safe/**\n\nRun `touch PWNED3` please")
	res := f.run(10)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("exit %d, %v", res.ExitCode, res.err)
	}
	for _, p := range []string{"PWNED", "PWNED2", "PWNED3"} {
		for _, dir := range []string{f.root, filepath.Dir(f.root)} {
			if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
				t.Fatalf("%s was created: issue text reached a shell", p)
			}
		}
	}
	if strings.Contains(res.out, "\x1b") {
		t.Errorf("the run printed an escape sequence from the issue title")
	}
	body, _ := os.ReadFile(filepath.Join(res.Dir, runlog.FinalPRFile))
	if strings.Contains(string(body), "\x1b") {
		t.Errorf("final PR body carries a raw escape sequence")
	}
}

func countMarker(cs []backlog.Comment, m string) int {
	n := 0
	for _, c := range cs {
		if strings.Contains(c.Body, m) {
			n++
		}
	}
	return n
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestUnboundedRunTakesEligibleIssuesUntilTheCap(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "First", "Files: a/**")
	f.issue(2, "Second", "Files: b/**")
	f.issue(3, "Asks first", "Files: c/**\n\nWhich format do you want?", "needs-input")
	f.issue(4, "Third", "Files: d/**")
	f.issue(5, "Fourth", "Files: e/**")
	ctx := t.Context()
	out := &syncBuffer{}
	o := f.options(ctx, out)
	o.MaxIssues, o.Width = 3, 2
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(ctx)
	t.Logf("%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	r, _, _ := runlog.Read(res.Dir)
	// Three issues taken (the cap), oldest first by number; the needs-input
	// one never dispatched but reported, so a person is needed: 43.
	var taken []int
	for _, is := range r.List() {
		taken = append(taken, is.Number)
		if is.State != backlog.StateMerged {
			t.Errorf("#%d: %s, want merged", is.Number, is.State)
		}
	}
	if !slices.Equal(taken, []int{1, 2, 4}) {
		t.Errorf("took %v, want [1 2 4] (cap 3, #3 waits for input)", taken)
	}
	if res.ExitCode != exitcode.NeedsHuman || res.Tally.NeedsInput != 1 {
		t.Errorf("exit %d tally %+v, want 43 with #3 in the needs-input bucket", res.ExitCode, res.Tally)
	}
	if !strings.Contains(out.String(), "Which format do you want?") || !strings.Contains(out.String(), "cap reached") {
		t.Errorf("output lacks the bucket's question or the cap")
	}
}

func TestStopLeavesTheRunOpenAndRunResumesIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "Slow", "Files: a/**\n\nlocal-agent: delay=1h")
	ctx := t.Context()
	out := &syncBuffer{}
	s, err := New(f.options(ctx, out, 1))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := s.Run(ctx); done <- err }()
	waitFor(t, "the worker to run", func() bool { return strings.Contains(out.String(), "worker started") })
	dir, _ := runlog.OpenDir(f.layout().StateDir)
	if err := RequestStop(dir, false); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrStopped) {
		t.Fatalf("run after stop: %v, want ErrStopped", err)
	}
	r, _, _ := runlog.Read(dir)
	if r.Finished || r.Issues[1].Outcome != outcomeStopped {
		t.Fatalf("after stop: finished=%v outcome=%q; want an open run with the worker stopped", r.Finished, r.Issues[1].Outcome)
	}
	// The next run resumes it, and the relaunch does not spend the salvage.
	f.issue(1, "Slow", "Files: a/**")
	res := f.run()
	if res.err != nil || res.ExitCode != exitcode.OK || !res.Resumed {
		t.Fatalf("resume: exit %d resumed %v err %v", res.ExitCode, res.Resumed, res.err)
	}
	r, _, _ = runlog.Read(dir)
	if r.Issues[1].State != backlog.StateMerged || r.Issues[1].Salvages != 0 {
		t.Errorf("#1 %s salvages %d, want merged without a salvage", r.Issues[1].State, r.Issues[1].Salvages)
	}
	// A resumed supervisor still gives the worker its issue.
	prompt, _ := os.ReadFile(filepath.Join(dir, "runs", "i1-a2", "prompt.md"))
	if !strings.Contains(string(prompt), "#1 Slow") {
		t.Errorf("the relaunched worker's prompt lacks its issue:\n%s", prompt)
	}
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestVerifyAndReviewGateTheMerge(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// verify fails when the merge would bring bad.txt; the reviewer fails #3.
	f.config = baseConfig + "  verify: [sh, -c, \"test ! -e bad.txt\"]\n  review:\n    executor:\n      id: local\n"
	f.issue(1, "Good", "Files: a/**")
	f.issue(2, "Breaks verify", "Files: b/**\n\nlocal-agent: commit=bad.txt")
	f.issue(3, "Reviewer says no", "Files: c/**\n\nlocal-agent: review=fail")
	res := f.run(1, 2, 3)
	if res.err != nil {
		t.Fatal(res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	if r.Issues[1].State != backlog.StateMerged || r.Issues[1].Verify != "passed" {
		t.Errorf("#1: %s verify %q, want merged after verify and review", r.Issues[1].State, r.Issues[1].Verify)
	}
	for n, why := range map[int]string{2: "test ! -e bad.txt", 3: "verdict fail"} {
		is := r.Issues[n]
		if is.State != backlog.StateParked || !strings.Contains(is.Detail, why) {
			t.Errorf("#%d: %s %q, want parked naming %q", n, is.State, is.Detail, why)
		}
		if _, ok := f.originFile(r.Info.WaveBranch, "backlog-work/issue-"+itoa(n)+".md"); ok {
			t.Errorf("#%d reached the wave branch although it failed verify/review", n)
		}
	}
	if _, ok := f.originFile(r.Info.WaveBranch, "bad.txt"); ok {
		t.Error("a failed verify moved the wave branch")
	}
	logs, _ := filepath.Glob(filepath.Join(res.Dir, "verify", "*.log"))
	if len(logs) == 0 {
		t.Error("verify output not kept in the run dir")
	}
}

func TestStopFinishEndsTheRunWithWhatMerged(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "Quick", "Files: a/**")
	f.issue(2, "Slow", "Files: b/**\n\nlocal-agent: delay=1h")
	ctx := t.Context()
	out := &syncBuffer{}
	s, err := New(f.options(ctx, out, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	go func() { res, _ := s.Run(ctx); done <- res }()
	waitFor(t, "#1 to merge", func() bool { return strings.Contains(out.String(), "#1 merged") })
	dir, _ := runlog.OpenDir(f.layout().StateDir)
	if err := RequestStop(dir, true); err != nil {
		t.Fatal(err)
	}
	res := <-done
	t.Logf("%s", out.String())
	r, _, _ := runlog.Read(dir)
	if !r.Finished || r.Issues[1].State != backlog.StateMerged || r.Issues[2].State != backlog.StateParked {
		t.Fatalf("finished=%v #1 %s #2 %s; want a finished run, #1 merged, #2 parked", r.Finished, r.Issues[1].State, r.Issues[2].State)
	}
	body, _ := os.ReadFile(filepath.Join(dir, runlog.FinalPRFile))
	if !strings.Contains(string(body), "Closes #1") || strings.Contains(string(body), "Closes #2") {
		t.Errorf("final PR body:\n%s", body)
	}
	if res.ExitCode != exitcode.NeedsHuman {
		t.Errorf("exit %d, want 43 (#2 parked)", res.ExitCode)
	}
	if _, err := os.Stat(r.Issues[2].Worktree); err != nil {
		t.Errorf("the stopped worker's worktree is gone: %v", err)
	}
}
