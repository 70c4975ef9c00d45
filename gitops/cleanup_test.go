package gitops

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Many branches are deleted at once with SafeDelete's guarantee for each:
// merged ones go (locally and on origin), the rest stay as they were.
func TestSafeDeleteAllDeletesOnlyTheMergedBranches(t *testing.T) {
	origin := newOrigin(t)
	r := newClone(t, origin)
	wave := "wave/sda"
	if _, _, err := r.EnsureWaveBranch(ctxT(t), wave, "main"); err != nil {
		t.Fatal(err)
	}
	tips := map[string]string{}
	for _, n := range []string{"1", "2", "3", "4", "5"} {
		b := wave + "-i" + n
		tips[b] = commitOn(t, r.Dir, b, "origin/"+wave, map[string]string{n + ".txt": n})
	}
	// i1, i2 on origin too; i1, i2, i3 merged; i4 not merged; i5 merged
	// but checked out in a worktree; i2's origin copy has a late commit.
	for _, b := range []string{wave + "-i1", wave + "-i2"} {
		if err := r.Push(ctxT(t), "refs/heads/"+b, b); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"1", "2", "3", "5"} {
		if _, err := r.Merge(ctxT(t), MergeRequest{Wave: wave, Worker: wave + "-i" + n, Message: "Merge #" + n}); err != nil {
			t.Fatal(err)
		}
	}
	late := commitOn(t, r.Dir, "tmp-late", tips[wave+"-i2"], map[string]string{"late.txt": "late"})
	gitT(t, r.Dir, "push", "-q", "origin", late+":refs/heads/"+wave+"-i2")
	if _, err := r.EnsureWorktree(ctxT(t), filepath.Join(t.TempDir(), "w5"), wave+"-i5", ""); err != nil {
		t.Fatal(err)
	}
	var all []string
	for b := range tips {
		all = append(all, b)
	}
	slices.Sort(all)
	got, err := r.SafeDeleteAll(ctxT(t), append(all, wave+"-i9"), wave)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{wave + "-i1": true, wave + "-i3": true}
	for _, b := range append(all, wave+"-i9") {
		if got[b] != want[b] {
			t.Fatalf("%s: deleted=%v, want %v (all: %v)", b, got[b], want[b], got)
		}
	}
	if originRef(t, origin, "refs/heads/"+wave+"-i1") != "" {
		t.Fatal("i1 still on origin")
	}
	if originRef(t, origin, "refs/heads/"+wave+"-i2") != late {
		t.Fatal("i2's late commit on origin was touched")
	}
	for b, tip := range tips {
		_, ok, _ := r.localRef(ctxT(t), "refs/heads/"+b)
		if ok == want[b] {
			t.Fatalf("%s: local present=%v, deleted=%v", b, ok, want[b])
		}
		if ok && gitT(t, r.Dir, "rev-parse", "refs/heads/"+b) != tip {
			t.Fatalf("%s moved", b)
		}
	}
	if _, err := r.SafeDeleteAll(ctxT(t), []string{wave}, wave); err == nil {
		t.Fatal("deleted the wave branch itself")
	}
}

// Many worktrees go at once; one with untracked work is kept, with its
// work, and said; one already gone is no error.
func TestRemoveWorktreesKeepsDirtyWorkAndRemovesTheRest(t *testing.T) {
	r := newClone(t, newOrigin(t))
	dir := t.TempDir()
	var paths []string
	for _, n := range []string{"1", "2", "3", "4", "5", "6"} {
		p := filepath.Join(dir, "w"+n)
		if _, err := r.EnsureWorktree(ctxT(t), p, "wave/rw-i"+n, "origin/main"); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	writeFile(t, filepath.Join(paths[2], "wip.txt"), "unsaved")
	if err := os.RemoveAll(paths[4]); err != nil {
		t.Fatal(err)
	}
	errs := r.RemoveWorktrees(ctxT(t), append(paths, filepath.Join(dir, "never")), 4)
	if len(errs) != 1 || errs[paths[2]] == nil {
		t.Fatalf("errors %v, want one for %s", errs, paths[2])
	}
	if _, err := os.Stat(filepath.Join(paths[2], "wip.txt")); err != nil {
		t.Fatal("untracked work lost")
	}
	left := worktreePaths(t, r.Dir)
	for i, p := range paths {
		if slices.Contains(left, canonical(p)) != (i == 2) {
			t.Fatalf("%s registered=%v; left %v", p, !(i == 2), left)
		}
	}
}
