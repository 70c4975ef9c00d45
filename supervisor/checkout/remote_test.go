package checkout

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return gittest.Run(t, dir, args...)
}

// remoteFixture is a supervisor's clone whose worker runs elsewhere: a
// "pod" clones origin over HTTP and pushes what its runner pushes.
type remoteFixture struct {
	t            testing.TB
	origin, root string
	git          *gitops.Repo
	co           *Remote
	url          string
}

func newRemoteFixture(t *testing.T) *remoteFixture {
	origin := gittest.OriginWithBase(t, map[string]string{"README.md": "scratch\n"})
	f := &remoteFixture{t: t, origin: origin, root: gittest.CloneOf(t, origin)}
	git(t, f.root, "push", "-q", "origin", "main:refs/heads/wave/x")
	repo, err := gitops.Open(t.Context(), f.root, gitops.Options{})
	if err != nil {
		t.Fatal(err)
	}
	url := gittest.ServeHTTP(t, f.origin, "", "")
	co := NewRemote(RemoteOptions{Git: repo, Wave: func() string { return "wave/x" }, RunID: func() string { return "r1" },
		URL: url, Say: func(string, ...any) {}})
	f.git, f.co, f.url = repo, co, url
	return f
}

// start prepares issue n's next run as the supervisor does and returns
// its payload.
func (f *remoteFixture) start(is *backlog.IssueRun) *runtime.Payload {
	f.t.Helper()
	ctx := context.Background()
	if _, err := f.co.Prepare(ctx, is, is.Branch, PodDir); err != nil {
		f.t.Fatal(err)
	}
	k := is.Attempts + 1
	p := &runtime.Payload{RunID: "i-a", Attempt: k, RunDir: filepath.Join(f.t.TempDir(), "i-a"),
		Env: map[string]string{"WAVE_WORKER_BRANCH": is.Branch}}
	if err := f.co.Payload(is, p); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// pod plays a runner with c: clone, branch, restore, one commit and one
// uncommitted file, then the pushes it makes at exit.
func (f *remoteFixture) pod(c *runtime.Checkout, commit, dirty, log string) (head, snap string) {
	f.t.Helper()
	ctx := context.Background()
	r, err := gitops.Clone(ctx, c.Origin, filepath.Join(f.t.TempDir(), "pod"), gitops.CloneOptions{Branch: c.Base, Depth: 1})
	if err != nil {
		f.t.Fatal(err)
	}
	lease, err := r.StartBranch(ctx, c.Branch, c.Base)
	if err != nil {
		f.t.Fatal(err)
	}
	if c.RestoreRef != "" {
		if _, err := r.Restore(ctx, c.RestoreRef); err != nil {
			f.t.Fatal(err)
		}
	}
	if commit != "" {
		writeTestFile(f.t, filepath.Join(r.Dir, commit), "work\n")
		if err := gitops.CommitAll(ctx, r.Dir, "work"); err != nil {
			f.t.Fatal(err)
		}
	}
	writeTestFile(f.t, filepath.Join(r.Dir, dirty), "half done\n")
	if snap, err = r.PushSnapshot(ctx, c.SnapshotRef, "", "snapshot"); err != nil {
		f.t.Fatal(err)
	}
	if head, err = r.PushBranchLeased(ctx, c.Branch, lease); err != nil {
		f.t.Fatal(err)
	}
	files := map[string][]byte{lanes.LogFile: []byte(log), runtime.FinalFile: []byte(`{"state":"completed"}`)}
	if _, err := r.PushResult(ctx, c.ResultRef, files, time.Now(), "result"); err != nil {
		f.t.Fatal(err)
	}
	return head, snap
}

func writeTestFile(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAPodsWorkReachesTheSupervisorThroughOrigin(t *testing.T) {
	f := newRemoteFixture(t)
	ctx := t.Context()
	is := &backlog.IssueRun{Number: 3, Branch: "wave/x-i3"}
	p := f.start(is)
	c := p.Checkout
	if c == nil || c.Origin != f.url || c.Base != "wave/x" || c.Branch != "wave/x-i3" || c.Dir != PodDir || p.Cwd != PodDir ||
		c.SnapshotRef != "refs/wave/salvage/3/a1" || c.ResultRef != "refs/wave/runs/r1/i3/a1" || c.RestoreRef != "" {
		t.Fatalf("checkout of a first run: %+v (cwd %s)", c, p.Cwd)
	}
	if p.RunID != "r1-i-a" {
		t.Errorf("run id %q: the backlog run's id does not lead it", p.RunID)
	}
	head, snap := f.pod(c, "src/a.txt", "src/wip.txt", "working\n[backlog-result] state=done detail=ok\n")
	// While it runs, progress is the runner's report: no git here.
	obs := runtime.Observation{Record: &runtime.Record{Git: &runtime.GitFacts{Ahead: 1, Dirty: 1}}}
	if commits, dirty, err := f.co.Progress(ctx, is, obs); err != nil || commits != 1 || dirty != 1 {
		t.Fatalf("progress %d %d %v", commits, dirty, err)
	}
	// It ended: its branch and its result come back.
	is.Attempts, is.RunDir = 1, p.RunDir
	if err := os.MkdirAll(p.RunDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := f.co.Fetch(ctx, is); err != nil {
		t.Fatal(err)
	}
	if got := git(t, f.root, "rev-parse", "refs/heads/wave/x-i3"); got != head {
		t.Fatalf("the clone's branch is %s, want the pod's %s", got, head)
	}
	if n, err := f.co.Ahead(ctx, is); err != nil || n != 1 {
		t.Fatalf("ahead %d %v", n, err)
	}
	text, _ := runtime.ReadLogTail(filepath.Join(p.RunDir, lanes.LogFile), 1<<20)
	if _, marked := backlog.ParseResult(text); !marked {
		t.Fatalf("the result marker did not reach the run dir: %q", text)
	}
	// Salvage: the snapshot the runner pushed, uncommitted file and all;
	// the relaunch restores it.
	sha, err := f.co.Snapshot(ctx, is, "refs/wave/salvage/3/a1", "salvage")
	if err != nil || sha != snap {
		t.Fatalf("snapshot %s %v, want the runner's %s", sha, err, snap)
	}
	p2 := f.start(is)
	if p2.Checkout.RestoreRef != "refs/wave/salvage/3/a1" || p2.Checkout.SnapshotRef != "refs/wave/salvage/3/a2" {
		t.Fatalf("relaunch checkout %+v", p2.Checkout)
	}
	if !gittest.HasPath(f.origin, sha, "src/wip.txt") {
		t.Fatal("the snapshot lacks the uncommitted file")
	}
	// Merged: the run's refs of the issue go from origin.
	if err := f.co.Remove(ctx, is); err != nil {
		t.Fatal(err)
	}
	if refs := git(t, f.origin, "for-each-ref", "refs/wave/"); refs != "" {
		t.Fatalf("left on origin:\n%s", refs)
	}
}

func TestAnEarlierRunsSnapshotIsNeverTakenForThisRuns(t *testing.T) {
	f := newRemoteFixture(t)
	ctx := t.Context()
	old := git(t, f.root, "rev-parse", "HEAD")
	git(t, f.root, "push", "-q", "origin", old+":refs/wave/salvage/4/a1")
	is := &backlog.IssueRun{Number: 4, Branch: "wave/x-i4"}
	f.start(is)
	if refs := git(t, f.origin, "for-each-ref", "refs/wave/salvage/4/"); refs != "" {
		t.Fatalf("an earlier run's snapshot is still on origin at the first start:\n%s", refs)
	}
	if got := git(t, f.root, "rev-parse", "refs/wave/salvage/4/a1"); got != old {
		t.Fatal("an earlier run's snapshot was not kept in the clone")
	}
	// This run's pod went before it pushed anything: the salvage is the
	// branch (none: the wave branch), and the relaunch restores nothing.
	is.Attempts = 1
	sha, err := f.co.Snapshot(ctx, is, "refs/wave/salvage/4/a1", "salvage")
	if err != nil || sha != git(t, f.root, "rev-parse", "refs/remotes/origin/wave/x") {
		t.Fatalf("snapshot of a run that pushed none: %s %v", sha, err)
	}
	if p := f.start(is); p.Checkout.RestoreRef != "" {
		t.Fatalf("the relaunch restores %s, which its run never pushed", p.Checkout.RestoreRef)
	}
	if strings.Contains(git(t, f.origin, "for-each-ref", "refs/wave/"), "salvage/4") {
		t.Fatal("a snapshot the run never pushed appeared on origin")
	}
}
