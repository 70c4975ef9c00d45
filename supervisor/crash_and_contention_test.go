package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// clone is otherClone with f's local issues: another machine working the
// same backlog.
func (f *fixture) clone(name string) *fixture {
	g := f.otherClone(name)
	entries, _ := filepath.Glob(filepath.Join(f.root, "docs", "backlog", "*.md"))
	for _, e := range entries {
		b, _ := os.ReadFile(e)
		g.write(filepath.Join("docs", "backlog", filepath.Base(e)), string(b))
	}
	return g
}

// Two supervisors started in the same second with the same slug, on two
// clones of one origin: every issue is claimed and merged by exactly one.
func TestTwoSupervisorsStartedTogetherNeverShareAnIssue(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for n := 1; n <= 4; n++ {
		f.issue(n, "Issue "+itoa(n), "Files: p"+itoa(n)+"/**")
	}
	g := f.clone("repo2")
	// One instant for both, taken from the real clock: worker deadlines
	// are reckoned from it, and a fixed date made every worker time out
	// at once once the real clock passed it.
	now := time.Now().UTC().Truncate(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	dirs := make([]string, 2)
	for i, fx := range []*fixture{f, g} {
		o := fx.options(ctx, &syncBuffer{}, 1, 2, 3, 4)
		o.Now = func() time.Time { return now }
		o.Layout = fx.layout()
		s, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Run(ctx)
			if err != nil {
				t.Errorf("supervisor %d: %v", i, err)
			}
			dirs[i] = res.Dir
		}()
	}
	wg.Wait()
	if filepath.Base(dirs[0]) == filepath.Base(dirs[1]) {
		t.Fatalf("both runs got id %s", filepath.Base(dirs[0]))
	}
	owner := map[int]int{}
	for i, d := range dirs {
		r, _, _ := runlog.Read(d)
		for n, is := range r.Issues {
			if is.State == backlog.StateMerged {
				owner[n]++
			}
		}
		for _, sk := range r.Dropped {
			if sk.Reason != backlog.ReasonClaimed {
				t.Errorf("run %d dropped #%d for %s, want only claimed", i, sk.Issue, sk.Reason)
			}
		}
	}
	for n := 1; n <= 4; n++ {
		if owner[n] != 1 {
			t.Errorf("#%d merged by %d supervisors, want exactly 1", n, owner[n])
		}
	}
}

func TestUnknownExecutorFailsBeforeAnyClaim(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "One", "Files: a/**")
	ctx := t.Context()
	o := f.options(ctx, &syncBuffer{}, 1)
	o.Executor = "nosuch"
	s, _ := New(o)
	if _, err := s.Run(ctx); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Fatalf("run with --executor nosuch: %v", err)
	}
	for _, b := range f.originBranches() {
		if strings.Contains(b, "wave") {
			t.Errorf("%s was pushed although the executor is unknown", b)
		}
	}
}

func TestBaseThatMovedWithAConflictNeedsAPerson(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "Edit the readme", "Files: README.md\n\nlocal-agent: commit=README.md delay=1s")
	ctx := t.Context()
	out := &syncBuffer{}
	s, _ := New(f.options(ctx, out, 1))
	done := make(chan Result, 1)
	go func() { res, _ := s.Run(ctx); done <- res }()
	waitFor(t, "the worker", func() bool { return strings.Contains(out.String(), "worker started") })
	f.write("README.md", "changed on main meanwhile\n")
	git(t, f.root, "commit", "-qam", "hotfix")
	git(t, f.root, "push", "-q", "origin", "main")
	res := <-done
	t.Logf("%s", out.String())
	if res.ExitCode != exitcode.NeedsHuman || !strings.Contains(out.String(), "conflicts in README.md") {
		t.Fatalf("exit %d; want 43 and the conflict said on the console", res.ExitCode)
	}
}

func TestFailingProbeEndsInAParkNotAHang(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.config = baseConfig + "  probe:\n    argv: [\"false\"]\n    timeoutSeconds: 5\n"
	f.issue(1, "Fails", "Files: a/**\n\nlocal-agent: exit=3 commit=none")
	ctx := t.Context()
	out := &syncBuffer{}
	s, _ := New(f.options(ctx, out, 1))
	s.probeWait = time.Millisecond
	res, err := s.Run(ctx)
	t.Logf("%s", out.String())
	if err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("exit %d err %v, want 43", res.ExitCode, err)
	}
	r, _, _ := runlog.Read(res.Dir)
	if is := r.Issues[1]; is.State != backlog.StateParked || !strings.Contains(is.Detail, "probe failed") {
		t.Errorf("#1 %s %q, want parked because the probe kept failing", is.State, is.Detail)
	}
	if !strings.Contains(out.String(), "exit code 3") {
		t.Errorf("the worker's own failure was never said")
	}
	// Nothing merged: the empty wave branch does not stay on origin.
	if slices.Contains(f.originBranches(), "refs/heads/"+r.Info.WaveBranch) {
		t.Errorf("empty wave branch %s left on origin", r.Info.WaveBranch)
	}
}

// `backlog stop` with no supervisor alive stops the workers itself; the
// next run records them as stopped (no salvage spent) and resumes.
func TestStopWithoutASupervisorThenResume(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "Slow", "Files: a/**\n\nlocal-agent: delay=1h")
	ctx, cancel := context.WithCancel(t.Context())
	out := &syncBuffer{}
	s, _ := New(f.options(ctx, out, 1))
	done := make(chan struct{})
	go func() { _, _ = s.Run(ctx); close(done) }()
	waitFor(t, "the worker", func() bool { return strings.Contains(out.String(), "worker started") })
	cancel() // the supervisor dies; its worker keeps running
	<-done
	dir, _ := runlog.OpenDir(f.layout().StateDir)
	if err := RequestStop(dir, false); err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(t.Context())
	defer scancel()
	if n, err := StopWorkers(sctx, dir, f.openRuns(sctx, &config.Lane{Name: f.lane, RepoRoot: f.root}), time.Second); n != 1 || err != nil {
		t.Fatalf("StopWorkers: %d %v", n, err)
	}
	f.issue(1, "Slow", "Files: a/**")
	res := f.run()
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("resume: %d %v", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(dir)
	if is := r.Issues[1]; is.State != backlog.StateMerged || is.Salvages != 0 {
		t.Errorf("#1 %s salvages %d, want merged with no salvage spent", is.State, is.Salvages)
	}
}

// A supervisor killed right after recording its bounded plan (before the
// plan's issues were each recorded) resumes with every planned issue.
func TestResumeAfterACrashRightAfterThePlan(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for n := 1; n <= 3; n++ {
		f.issue(n, "Issue "+itoa(n), "Files: p"+itoa(n)+"/**")
	}
	id := "20261201T090000Z-t-abcdef"
	dir := filepath.Join(runlog.Root(f.layout().StateDir), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	l, _, err := openRunLog(dir, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	info := backlog.RunInfo{ID: id, Lane: "main", Source: "local", WaveBranch: "wave/2026-12-01-t", Base: "main",
		Default: "main", Bounded: []int{1, 2, 3}, Width: 5, Host: "h", Pid: 1, StartedAt: time.Now()}
	plan := backlog.Plan{Width: 3, Order: []int{1, 2, 3}, Groups: []backlog.Group{{Issues: []int{1}}, {Issues: []int{2}}, {Issues: []int{3}}}}
	for _, ev := range []backlog.Event{{Kind: backlog.EvRunStarted, Run: &info}, {Kind: backlog.EvPlanned, Plan: &plan},
		{Kind: backlog.EvIssue, Issue: 1, Title: "Issue 1", Group: 1}} {
		if err := l.emit(ev); err != nil {
			t.Fatal(err)
		}
	}
	res := f.run()
	if res.err != nil || res.ExitCode != exitcode.OK || res.Tally.Merged != 3 {
		t.Fatalf("resume: exit %d tally %+v err %v; want all three planned issues merged", res.ExitCode, res.Tally, res.err)
	}
}

// A claim taken over by another run while this run works on the issue
// (its lease renewal finds a foreign claim): this run stops working on it
// and never merges it.
func TestClaimTakenOverWhileWorkingStopsTheWork(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "Contested", "Files: a/**\n\nlocal-agent: delay=1h")
	ctx := t.Context()
	out := &syncBuffer{}
	o := f.options(ctx, out, 1)
	var shift atomic.Int64
	o.Now = func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }
	s, _ := New(o)
	done := make(chan Result, 1)
	go func() { res, _ := s.Run(ctx); done <- res }()
	waitFor(t, "the worker", func() bool { return strings.Contains(out.String(), "worker started") })
	// Another machine replaces the claim (as after an expired lease).
	other := f.clone("other")
	repo, err := gitops.Open(ctx, other.root, gitops.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, ok, err := repo.ReadClaim(ctx, 1)
	if err != nil || !ok {
		t.Fatalf("read claim: %v %v", ok, err)
	}
	if won, _, err := repo.TakeOver(ctx, c.SHA, gitops.ClaimInfo{Issue: 1, RunID: "other-run", Host: "elsewhere", PID: 1, Lease: time.Now().Add(time.Hour)}); !won || err != nil {
		t.Fatalf("take over: %v %v", won, err)
	}
	shift.Store(int64(time.Hour)) // the next sweep is due to renew
	res := <-done
	t.Logf("%s", out.String())
	r, _, _ := runlog.Read(res.Dir)
	if is := r.Issues[1]; is.State != backlog.StateFailed || !strings.Contains(is.Detail, "other-run") {
		t.Fatalf("#1 %s %q, want failed: claimed elsewhere by other-run", is.State, is.Detail)
	}
	if res.Tally.Merged != 0 {
		t.Errorf("merged %d, want 0", res.Tally.Merged)
	}
	if c, _, _ := repo.ReadClaim(ctx, 1); c.RunID != "other-run" {
		t.Errorf("the other run's claim was released or replaced: %+v", c)
	}
}

// A supervisor killed between winning the claim ref and running the
// repository's claim command runs the command on resume.
func TestClaimCommandRunsAfterACrashRightAfterTheClaim(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	marker := filepath.Join(filepath.Dir(f.root), "claimed-{issue}")
	f.config = baseConfig + "  claim:\n    command: [touch, \"" + marker + "\"]\n"
	f.issue(1, "One", "Files: a/**")
	id := "20261201T090000Z-t-abc123"
	dir := filepath.Join(runlog.Root(f.layout().StateDir), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	l, _, err := openRunLog(dir, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	info := backlog.RunInfo{ID: id, Lane: "main", Source: "local", WaveBranch: "wave/2026-12-01-t", Base: "main",
		Default: "main", Bounded: []int{1}, Width: 5, Host: "h", Pid: 1, StartedAt: time.Now()}
	plan := backlog.Plan{Width: 1, Order: []int{1}, Groups: []backlog.Group{{Issues: []int{1}}}}
	for _, ev := range []backlog.Event{{Kind: backlog.EvRunStarted, Run: &info}, {Kind: backlog.EvPlanned, Plan: &plan},
		{Kind: backlog.EvIssue, Issue: 1, Title: "One", Group: 1}, {Kind: backlog.EvClaimed, Issue: 1}} {
		if err := l.emit(ev); err != nil {
			t.Fatal(err)
		}
	}
	res := f.run()
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("resume: exit %d %v", res.ExitCode, res.err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(f.root), "claimed-1")); err != nil {
		t.Errorf("the claim command did not run on resume: %v", err)
	}
}
