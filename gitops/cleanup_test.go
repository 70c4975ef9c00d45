package gitops

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Many branches are deleted at once with SafeDelete's guarantee for each:
// merged ones go (locally and on origin), the rest stay as they were.
func TestSafeDeleteAllDeletesOnlyTheMergedBranches(t *testing.T) {
	t.Parallel()
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
	gitT(t, r.Dir, "worktree", "add", "-q", filepath.Join(t.TempDir(), "w5"), wave+"-i5")
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

// Many worker checkouts go at once; one with untracked work and one
// with a commit only it has are kept, with their work, and said; one
// already gone is no error; a worktree an older version made goes as git
// removes worktrees.
func TestRemoveCheckoutsKeepsWorkOnlyTheyHaveAndRemovesTheRest(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	dir := t.TempDir()
	var list []CheckoutRemoval
	for _, n := range []string{"1", "2", "3", "4", "5"} {
		p := filepath.Join(dir, "w"+n)
		workerClone(t, r, p, "wave/rw-i"+n, "origin/main", nil)
		list = append(list, CheckoutRemoval{Dir: p, Keep: []string{"refs/heads/wave/rw-i" + n}})
	}
	old := filepath.Join(dir, "w6")
	gitT(t, r.Dir, "worktree", "add", "-q", "-b", "wave/rw-i6", old, "origin/main")
	list = append(list, CheckoutRemoval{Dir: old}, CheckoutRemoval{Dir: filepath.Join(dir, "never")})
	writeFile(t, filepath.Join(list[2].Dir, "wip.txt"), "unsaved")
	writeFile(t, filepath.Join(list[3].Dir, "done.txt"), "committed there only")
	gitT(t, list[3].Dir, "add", "done.txt")
	gitT(t, list[3].Dir, "commit", "-q", "-m", "only in the clone")
	if err := os.RemoveAll(list[4].Dir); err != nil {
		t.Fatal(err)
	}
	errs := r.RemoveCheckouts(ctxT(t), list, 4)
	if len(errs) != 2 || !errors.Is(errs[list[2].Dir], ErrNotSafe) || !errors.Is(errs[list[3].Dir], ErrNotSafe) {
		t.Fatalf("errors %v, want work that would be lost in %s and %s", errs, list[2].Dir, list[3].Dir)
	}
	for i, c := range list {
		if exists(c.Dir) != (i == 2 || i == 3) {
			t.Errorf("%s there=%v", c.Dir, exists(c.Dir))
		}
	}
	if b, err := os.ReadFile(filepath.Join(list[2].Dir, "wip.txt")); err != nil || string(b) != "unsaved" {
		t.Fatal("untracked work lost")
	}
	if slices.Contains(worktreePaths(t, r.Dir), canonical(old)) {
		t.Fatal("the old worktree is still registered")
	}
}
