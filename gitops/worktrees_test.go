package gitops

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestEnsureWaveBranch(t *testing.T) {
	origin := newOrigin(t)
	a, b := newClone(t, origin), newClone(t, origin)
	// main moves on origin after a cloned: the wave starts from the new tip.
	moved := commitOn(t, b.Dir, "main", "HEAD", map[string]string{"new.txt": "x"})
	gitT(t, b.Dir, "push", "-q", "origin", "main")

	sha, created, err := a.EnsureWaveBranch(ctxT(t), "wave/2025-01-01-demo", "main")
	if err != nil || !created || sha != moved {
		t.Fatalf("first: sha=%s created=%v err=%v; want %s created", sha, created, err, moved)
	}
	if got := originRef(t, origin, "refs/heads/wave/2025-01-01-demo"); got != moved {
		t.Fatalf("origin wave at %q, want %s", got, moved)
	}
	if got := gitT(t, a.Dir, "rev-parse", "refs/heads/wave/2025-01-01-demo"); got != moved {
		t.Fatalf("local wave at %s", got)
	}
	sha2, created, err := b.EnsureWaveBranch(ctxT(t), "wave/2025-01-01-demo", "main")
	if err != nil || created || sha2 != moved {
		t.Fatalf("second: sha=%s created=%v err=%v", sha2, created, err)
	}
	if _, _, err := a.EnsureWaveBranch(ctxT(t), "wave/bad..name", "main"); err == nil {
		t.Fatal("invalid wave name accepted")
	}
}

func TestEnsureWaveBranchRaceCreatesOnce(t *testing.T) {
	origin := newOrigin(t)
	repos := []*Repo{newClone(t, origin), newClone(t, origin), newClone(t, origin)}
	created := make([]bool, len(repos))
	errs := make([]error, len(repos))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, r := range repos {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, created[i], errs[i] = r.EnsureWaveBranch(ctxT(t), "wave/race", "main")
		}()
	}
	close(start)
	wg.Wait()
	n := 0
	for i := range repos {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if created[i] {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d callers created the wave branch, want 1", n)
	}
}

func TestEnsureWorktreeNewBranch(t *testing.T) {
	r := newClone(t, newOrigin(t))
	path := filepath.Join(t.TempDir(), "w1")
	resumed, err := r.EnsureWorktree(ctxT(t), path, "wave/x-i1", "origin/main")
	if err != nil || resumed {
		t.Fatalf("resumed=%v err=%v", resumed, err)
	}
	if got := gitT(t, path, "rev-parse", "--abbrev-ref", "HEAD"); got != "wave/x-i1" {
		t.Fatalf("worktree on %s", got)
	}
	if got := gitT(t, path, "rev-parse", "HEAD"); got != gitT(t, r.Dir, "rev-parse", "origin/main") {
		t.Fatalf("new branch not at start")
	}
}

// TestEnsureWorktreeResumesLeftoverBranch: a branch left by an earlier run
// (no worktree) is checked out as it is — never reset to start or deleted.
func TestEnsureWorktreeResumesLeftoverBranch(t *testing.T) {
	r := newClone(t, newOrigin(t))
	work := commitOn(t, r.Dir, "wave/x-i2", "HEAD", map[string]string{"work.txt": "precious"})
	path := filepath.Join(t.TempDir(), "w2")
	resumed, err := r.EnsureWorktree(ctxT(t), path, "wave/x-i2", "origin/main")
	if err != nil || !resumed {
		t.Fatalf("resumed=%v err=%v", resumed, err)
	}
	if got := gitT(t, path, "rev-parse", "HEAD"); got != work {
		t.Fatalf("branch at %s, want the leftover commit %s", got, work)
	}
	if data, err := os.ReadFile(filepath.Join(path, "work.txt")); err != nil || string(data) != "precious" {
		t.Fatalf("leftover work missing: %q %v", data, err)
	}
}

// TestEnsureWorktreePrunesDeletedDir: the worktree directory was deleted
// (rm -rf, tmp cleaner) but git still has it registered.
func TestEnsureWorktreePrunesDeletedDir(t *testing.T) {
	r := newClone(t, newOrigin(t))
	path := filepath.Join(t.TempDir(), "w3")
	if _, err := r.EnsureWorktree(ctxT(t), path, "wave/x-i3", "origin/main"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(path, "f.txt"), "committed\n")
	gitT(t, path, "add", "f.txt")
	gitT(t, path, "commit", "-q", "-m", "work")
	work := gitT(t, path, "rev-parse", "HEAD")
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	resumed, err := r.EnsureWorktree(ctxT(t), path, "wave/x-i3", "origin/main")
	if err != nil || !resumed {
		t.Fatalf("resumed=%v err=%v", resumed, err)
	}
	if got := gitT(t, path, "rev-parse", "HEAD"); got != work {
		t.Fatalf("re-added worktree at %s, want %s", got, work)
	}
}

func TestEnsureWorktreeReusesSamePath(t *testing.T) {
	r := newClone(t, newOrigin(t))
	path := filepath.Join(t.TempDir(), "w4")
	if _, err := r.EnsureWorktree(ctxT(t), path, "wave/x-i4", "origin/main"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(path, "dirty.txt"), "uncommitted")
	resumed, err := r.EnsureWorktree(ctxT(t), path, "wave/x-i4", "origin/main")
	if err != nil || !resumed {
		t.Fatalf("resumed=%v err=%v", resumed, err)
	}
	if _, err := os.Stat(filepath.Join(path, "dirty.txt")); err != nil {
		t.Fatal("reuse lost an uncommitted file")
	}
	if n := len(worktreePaths(t, r.Dir)); n != 2 {
		t.Fatalf("%d worktrees, want main + 1", n)
	}
}

func TestEnsureWorktreeRefusesToClobber(t *testing.T) {
	r := newClone(t, newOrigin(t))
	p1 := filepath.Join(t.TempDir(), "w5")
	if _, err := r.EnsureWorktree(ctxT(t), p1, "wave/x-i5", "origin/main"); err != nil {
		t.Fatal(err)
	}
	// The branch is live elsewhere.
	if _, err := r.EnsureWorktree(ctxT(t), filepath.Join(t.TempDir(), "other"), "wave/x-i5", "origin/main"); err == nil || !strings.Contains(err.Error(), "checked out") {
		t.Fatalf("second worktree of one branch: %v", err)
	}
	// The path holds something that is not a worktree.
	foreign := filepath.Join(t.TempDir(), "foreign")
	writeFile(t, filepath.Join(foreign, "notes.txt"), "mine")
	if _, err := r.EnsureWorktree(ctxT(t), foreign, "wave/x-i6", "origin/main"); err == nil {
		t.Fatal("worktree added over a foreign directory")
	}
	if data, _ := os.ReadFile(filepath.Join(foreign, "notes.txt")); string(data) != "mine" {
		t.Fatal("foreign directory touched")
	}
	// The path is a worktree on another branch.
	if _, err := r.EnsureWorktree(ctxT(t), p1, "wave/x-i7", "origin/main"); err == nil {
		t.Fatal("worktree switched branches")
	}
}

// TestIssueTitlesMakeUsableBranches: hostile titles become branch names
// git accepts and a worktree can be made on.
func TestIssueTitlesMakeUsableBranches(t *testing.T) {
	r := newClone(t, newOrigin(t))
	titles := []string{"$(touch /tmp/pwned) `id`; rm -rf ~ | x", "../../../etc", "Ünïcödé ☃ 日本", strings.Repeat("ab;", 100)}
	for i, title := range titles {
		branch := "wave/2025-01-01-demo-i" + string(rune('1'+i)) + "-" + BranchSlug(title, 30)
		path := filepath.Join(t.TempDir(), BranchSlug(title, 30))
		if _, err := r.EnsureWorktree(ctxT(t), path, branch, "origin/main"); err != nil {
			t.Fatalf("title %q → %s: %v", title, branch, err)
		}
	}
	if _, err := os.Stat("/tmp/pwned"); err == nil {
		t.Fatal("a title reached a shell")
	}
}

func TestRemoveWorktreeKeepsDirtyWork(t *testing.T) {
	r := newClone(t, newOrigin(t))
	path := filepath.Join(t.TempDir(), "w8")
	if _, err := r.EnsureWorktree(ctxT(t), path, "wave/x-i8", "origin/main"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(path, "wip.txt"), "unsaved")
	if err := r.RemoveWorktree(ctxT(t), path); err == nil {
		t.Fatal("removed a worktree with untracked work")
	}
	if _, err := os.Stat(filepath.Join(path, "wip.txt")); err != nil {
		t.Fatal("untracked work lost")
	}
	os.Remove(filepath.Join(path, "wip.txt"))
	if err := r.RemoveWorktree(ctxT(t), path); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(worktreePaths(t, r.Dir), canonical(path)) {
		t.Fatal("worktree still registered")
	}
	if err := r.RemoveWorktree(ctxT(t), path); err != nil {
		t.Fatalf("removing an absent worktree: %v", err)
	}
	// The branch itself is kept.
	gitT(t, r.Dir, "rev-parse", "--verify", "refs/heads/wave/x-i8")
}

func TestSafeDeleteOnlyAncestors(t *testing.T) {
	origin := newOrigin(t)
	r := newClone(t, origin)
	wave := "wave/sd"
	if _, _, err := r.EnsureWaveBranch(ctxT(t), wave, "main"); err != nil {
		t.Fatal(err)
	}
	merged := commitOn(t, r.Dir, "wave/sd-i1", "origin/wave/sd", map[string]string{"a.txt": "a"})
	unmerged := commitOn(t, r.Dir, "wave/sd-i2", "origin/wave/sd", map[string]string{"b.txt": "b"})
	for _, b := range []string{"wave/sd-i1", "wave/sd-i2"} {
		if err := r.Push(ctxT(t), "refs/heads/"+b, b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Merge(ctxT(t), MergeRequest{Wave: wave, Worker: "wave/sd-i1", Message: "Merge #1"}); err != nil {
		t.Fatal(err)
	}
	// Merged locally but the remote branch got one more commit: keep both.
	extra := commitOn(t, r.Dir, "tmp-extra", merged, map[string]string{"late.txt": "late"})
	gitT(t, r.Dir, "push", "-q", "origin", extra+":refs/heads/wave/sd-i1")
	if del, err := r.SafeDelete(ctxT(t), "wave/sd-i1", wave); err != nil || del {
		t.Fatalf("remote ahead: deleted=%v err=%v", del, err)
	}
	if originRef(t, origin, "refs/heads/wave/sd-i1") != extra || gitT(t, r.Dir, "rev-parse", "refs/heads/wave/sd-i1") != merged {
		t.Fatal("a branch with unmerged remote work was touched")
	}
	gitT(t, r.Dir, "push", "-q", "--force", "origin", merged+":refs/heads/wave/sd-i1")

	if del, err := r.SafeDelete(ctxT(t), "wave/sd-i2", wave); err != nil || del {
		t.Fatalf("unmerged: deleted=%v err=%v", del, err)
	}
	if originRef(t, origin, "refs/heads/wave/sd-i2") != unmerged || gitT(t, r.Dir, "rev-parse", "refs/heads/wave/sd-i2") != unmerged {
		t.Fatal("unmerged branch deleted")
	}
	if del, err := r.SafeDelete(ctxT(t), "wave/sd-i1", wave); err != nil || !del {
		t.Fatalf("merged: deleted=%v err=%v", del, err)
	}
	if originRef(t, origin, "refs/heads/wave/sd-i1") != "" {
		t.Fatal("merged branch still on origin")
	}
	if _, ok, _ := r.localRef(ctxT(t), "refs/heads/wave/sd-i1"); ok {
		t.Fatal("merged branch still local")
	}
	if _, err := r.SafeDelete(ctxT(t), wave, wave); err == nil {
		t.Fatal("deleted the wave branch itself")
	}
}

// A new worktree is checked out in full and the repository's
// post-checkout hook runs with git's own arguments, as `worktree add`
// would run it.
func TestANewWorktreeIsCheckedOutAndRunsThePostCheckoutHook(t *testing.T) {
	r := newClone(t, newOrigin(t))
	hook := filepath.Join(r.Dir, ".git", "hooks", "post-checkout")
	writeFile(t, hook, "#!/bin/sh\necho \"$1 $3\" > \"$(git rev-parse --show-toplevel)/.hooked\"\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "w1")
	if resumed, err := r.EnsureWorktree(ctxT(t), path, "wave/co-i1", "origin/main"); err != nil || resumed {
		t.Fatalf("EnsureWorktree: resumed=%v err=%v", resumed, err)
	}
	if b, err := os.ReadFile(filepath.Join(path, "README.md")); err != nil || len(b) == 0 {
		t.Fatalf("README.md not checked out: %v", err)
	}
	if st := gitT(t, path, "status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Fatalf("the new worktree is not clean:\n%s", st)
	}
	b, err := os.ReadFile(filepath.Join(path, ".hooked"))
	if err != nil || strings.TrimSpace(string(b)) != strings.Repeat("0", 40)+" 1" {
		t.Fatalf("post-checkout hook: %q %v", b, err)
	}
}

// A start killed after the worktree was registered but before its
// checkout leaves a worktree without an index; the next EnsureWorktree
// checks it out instead of handing a worker an empty tree.
func TestAWorktreeAddedButNeverCheckedOutIsCheckedOutWhenFoundAgain(t *testing.T) {
	r := newClone(t, newOrigin(t))
	path := filepath.Join(t.TempDir(), "w2")
	gitT(t, r.Dir, "worktree", "add", "-q", "--no-checkout", "--no-track", "-b", "wave/co-i2", path, "origin/main")
	if _, err := os.Stat(filepath.Join(path, "README.md")); err == nil {
		t.Fatal("setup: --no-checkout checked out")
	}
	if _, err := r.EnsureWorktree(ctxT(t), path, "wave/co-i2", "origin/main"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(path, "README.md")); err != nil {
		t.Fatalf("not checked out when found again: %v", err)
	}
	if st := gitT(t, path, "status", "--porcelain"); st != "" {
		t.Fatalf("not clean:\n%s", st)
	}
}

// core.hooksPath is where the post-checkout hook is looked for.
func TestANewWorktreeRunsThePostCheckoutHookOfCoreHooksPath(t *testing.T) {
	r := newClone(t, newOrigin(t))
	hooks := t.TempDir()
	gitT(t, r.Dir, "config", "core.hooksPath", hooks)
	writeFile(t, filepath.Join(hooks, "post-checkout"), "#!/bin/sh\ntouch \"$(git rev-parse --show-toplevel)/.hooked\"\n")
	if err := os.Chmod(filepath.Join(hooks, "post-checkout"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "w3")
	if _, err := r.EnsureWorktree(ctxT(t), path, "wave/co-i3", "origin/main"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(path, ".hooked")); err != nil {
		t.Fatalf("the hook in core.hooksPath did not run: %v", err)
	}
}
