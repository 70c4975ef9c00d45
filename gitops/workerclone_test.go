package gitops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

// A worker's clone is on its branch at the start it was given, its git
// directory its own: hooks and config it writes where git tells it its
// git directory is stay there, its objects are borrowed through the
// standard alternates file, its origin cannot be pushed to, and it has
// the wave tip it was given as its wave branch.
func TestAWorkerCloneSharesNoGitDirectoryWithTheClone(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	r := newClone(t, origin)
	start := gitT(t, r.Dir, "rev-parse", "origin/main")
	dir := filepath.Join(t.TempDir(), "w1")
	wave := "wave/x"
	if resumed := workerClone(t, r, dir, "wave/x-i1", "origin/main",
		map[string]string{"refs/heads/" + wave: start, "refs/remotes/origin/" + wave: start}); resumed {
		t.Fatal("a new branch reported resumed")
	}
	if got := gitT(t, dir, "symbolic-ref", "HEAD"); got != "refs/heads/wave/x-i1" {
		t.Fatalf("HEAD %s", got)
	}
	if got := gitT(t, dir, "rev-parse", "HEAD"); got != start {
		t.Fatalf("HEAD at %s, want the start %s", got, start)
	}
	if st := gitT(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("not clean:\n%s", st)
	}
	common := gitT(t, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if !strings.HasPrefix(common, canonical(dir)) {
		t.Fatalf("the worker's git directory is %s, outside its checkout", common)
	}
	alt, err := os.ReadFile(filepath.Join(dir, ".git", "objects", "info", "alternates"))
	if err != nil || strings.TrimSpace(string(alt)) != filepath.Join(r.common, "objects") {
		t.Fatalf("alternates %q %v, want %s", alt, err, filepath.Join(r.common, "objects"))
	}
	for _, ref := range []string{"refs/heads/" + wave, "refs/remotes/origin/" + wave} {
		if got := gitT(t, dir, "rev-parse", ref); got != start {
			t.Errorf("%s at %s, want %s", ref, got, start)
		}
	}
	// What the worker writes through git stays in its clone.
	writeFile(t, filepath.Join(common, "hooks", "pre-push"), "#!/bin/sh\nexit 0\n")
	gitT(t, dir, "config", "core.fsmonitor", "true")
	if exists(filepath.Join(r.common, "hooks", "pre-push")) {
		t.Fatal("a hook the worker wrote reached the user's clone")
	}
	if out, _ := os.ReadFile(filepath.Join(r.common, "config")); strings.Contains(string(out), "fsmonitor") {
		t.Fatal("config the worker wrote reached the user's clone")
	}
	writeFile(t, filepath.Join(dir, "work.txt"), "w\n")
	gitT(t, dir, "add", "work.txt")
	gitT(t, dir, "commit", "-q", "-m", "work")
	if err := gittest.Try(dir, "push", "-q", "origin", "HEAD:refs/heads/"+wave); err == nil {
		t.Fatal("the worker pushed through origin")
	}
	if got := gitT(t, r.Dir, "rev-parse", "--verify", "-q", "refs/heads/wave/x-i1"); got != start {
		t.Fatalf("the user's clone's copy of the branch moved to %s by itself", got)
	}
	if got := originRef(t, origin, "refs/heads/"+wave); got != "" {
		t.Fatalf("origin got %s", got)
	}
}

// A branch the clone has (an earlier run's) is checked out as it is;
// a clone found at the path is taken as it is, uncommitted work and all;
// a clone deleted is made again from the branch as last fetched.
func TestAWorkerCloneResumesItsBranchAndItsFiles(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	work := commitOn(t, r.Dir, "wave/x-i2", "HEAD", map[string]string{"work.txt": "precious"})
	dir := filepath.Join(t.TempDir(), "w2")
	if !workerClone(t, r, dir, "wave/x-i2", "origin/main", nil) {
		t.Fatal("a leftover branch not reported resumed")
	}
	if got := gitT(t, dir, "rev-parse", "HEAD"); got != work {
		t.Fatalf("at %s, want the leftover commit %s", got, work)
	}
	writeFile(t, filepath.Join(dir, "dirty.txt"), "uncommitted")
	writeFile(t, filepath.Join(dir, "more.txt"), "committed in the clone")
	gitT(t, dir, "add", "more.txt")
	gitT(t, dir, "commit", "-q", "-m", "more")
	if !workerClone(t, r, dir, "wave/x-i2", "origin/main", nil) {
		t.Fatal("reuse not reported resumed")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "dirty.txt")); err != nil || string(b) != "uncommitted" {
		t.Fatal("reuse lost an uncommitted file")
	}
	more := gitT(t, dir, "rev-parse", "HEAD")
	if _, ok, err := r.FetchFromCheckout(ctxT(t), dir, "wave/x-i2"); err != nil || !ok {
		t.Fatalf("fetch: %v %v", ok, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	workerClone(t, r, dir, "wave/x-i2", "origin/main", nil)
	if got := gitT(t, dir, "rev-parse", "HEAD"); got != more {
		t.Fatalf("made again at %s, want the fetched branch %s", got, more)
	}
}

// Something at the path that is not a worker checkout is never touched;
// a clone cut off before its checkout (only .git in it) is made again.
func TestAWorkerCloneNeverClobbersAForeignDirectory(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	foreign := filepath.Join(t.TempDir(), "foreign")
	writeFile(t, filepath.Join(foreign, "notes.txt"), "mine")
	if _, err := r.EnsureWorkerClone(ctxT(t), WorkerCheckout{Dir: foreign, Branch: "wave/x-i6", Start: "origin/main"}); err == nil {
		t.Fatal("a clone made over a foreign directory")
	}
	if data, _ := os.ReadFile(filepath.Join(foreign, "notes.txt")); string(data) != "mine" {
		t.Fatal("foreign directory touched")
	}
	half := filepath.Join(t.TempDir(), "half")
	gitT(t, r.Dir, "clone", "-q", "--shared", "--no-checkout", r.common, half)
	workerClone(t, r, half, "wave/x-i7", "origin/main", nil)
	if !exists(filepath.Join(half, "README.md")) || gitT(t, half, "symbolic-ref", "HEAD") != "refs/heads/wave/x-i7" {
		t.Fatal("the clone cut off before its checkout was not made again")
	}
}

// A worktree an older version made for a worker becomes a clone of its
// own where it is: its files, staged and unstaged work kept; the user's
// clone forgets it.
func TestAWorktreeOfAnOlderVersionBecomesACloneKeepingItsWork(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	dir := filepath.Join(t.TempDir(), "old")
	gitT(t, r.Dir, "worktree", "add", "-q", "-b", "wave/x-i3", dir, "origin/main")
	writeFile(t, filepath.Join(dir, "c.txt"), "committed\n")
	gitT(t, dir, "add", "c.txt")
	gitT(t, dir, "commit", "-q", "-m", "c")
	head := gitT(t, dir, "rev-parse", "HEAD")
	writeFile(t, filepath.Join(dir, "staged.txt"), "staged\n")
	gitT(t, dir, "add", "staged.txt")
	writeFile(t, filepath.Join(dir, "README.md"), "edited\n")
	if !workerClone(t, r, dir, "wave/x-i3", "origin/main", nil) {
		t.Fatal("not reported resumed")
	}
	if fi, err := os.Lstat(filepath.Join(dir, ".git")); err != nil || !fi.IsDir() {
		t.Fatalf("still a worktree: %v", err)
	}
	if got := gitT(t, dir, "rev-parse", "HEAD"); got != head {
		t.Fatalf("HEAD %s, want %s", got, head)
	}
	if st := gitT(t, dir, "status", "--porcelain"); !strings.Contains(st, "A  staged.txt") || !strings.Contains(st, "M README.md") ||
		strings.Count(st, "\n") != 1 {
		t.Fatalf("status after the change:\n%s", st)
	}
	if st := gitT(t, dir, "diff", "--cached", "--name-only"); st != "staged.txt" {
		t.Fatalf("staged %q, want staged.txt only", st)
	}
	if paths := worktreePaths(t, r.Dir); len(paths) != 1 {
		t.Fatalf("the clone still lists worktrees %v", paths)
	}
}

// Hostile titles become branch names git accepts and a clone can be made
// on; none reaches a shell.
func TestIssueTitlesMakeUsableBranches(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	titles := []string{"$(touch /tmp/pwned) `id`; rm -rf ~ | x", "../../../etc", "Ünïcödé ☃ 日本", strings.Repeat("ab;", 100)}
	for i, title := range titles {
		branch := "wave/2025-01-01-demo-i" + string(rune('1'+i)) + "-" + BranchSlug(title, 30)
		path := filepath.Join(t.TempDir(), BranchSlug(title, 30))
		if _, err := r.EnsureWorkerClone(ctxT(t), WorkerCheckout{Dir: path, Branch: branch, Start: "origin/main"}); err != nil {
			t.Fatalf("title %q → %s: %v", title, branch, err)
		}
	}
	if _, err := os.Stat("/tmp/pwned"); err == nil {
		t.Fatal("a title reached a shell")
	}
}

// The refs the supervisor gives a worker are written inside its clone
// only: a directory of refs the worker turned into a link leading out of
// it is not followed.
func TestWorkerRefsStayInsideTheCheckout(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	start := gitT(t, r.Dir, "rev-parse", "origin/main")
	dir := filepath.Join(t.TempDir(), "w")
	workerClone(t, r, dir, "wave/x-i4", "origin/main", nil)
	outside := t.TempDir()
	refs := filepath.Join(dir, ".git", "refs", "remotes")
	if err := os.RemoveAll(refs); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, refs); err != nil {
		t.Fatal(err)
	}
	workerClone(t, r, dir, "wave/x-i4", "origin/main", map[string]string{"refs/remotes/origin/wave/x": start, "refs/heads/wave/x": start})
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Fatalf("a ref was written outside the checkout: %v", entries)
	}
	if got := gitT(t, dir, "rev-parse", "refs/heads/wave/x"); got != start {
		t.Fatalf("the ref inside the checkout is at %q", got)
	}
}

// A worker commits as the person whose repository it works in: the
// identity the user's clone has (here its own config; a global one is
// copied the same way) is in the worker's clone, which a sandboxed
// worker reads with no global config of its own.
func TestAWorkerCommitsAsTheClonesOwnIdentity(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	r := newClone(t, origin)
	gitT(t, r.Dir, "config", "user.name", "Ada Lovelace")
	gitT(t, r.Dir, "config", "user.email", "ada@example.com")
	dir := filepath.Join(t.TempDir(), "w1")
	workerClone(t, r, dir, "wave/x-i1", "origin/main", nil)
	for k, want := range map[string]string{"user.name": "Ada Lovelace", "user.email": "ada@example.com"} {
		if got := gitT(t, dir, "config", "--local", "--get", k); got != want {
			t.Errorf("the worker's clone has %s %q, want the user's %q", k, got, want)
		}
	}
}
