package gitops

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// worktreeState is everything a worker would notice changing.
type worktreeState struct {
	status, stage, head string
	files               map[string]string
}

func captureState(t *testing.T, dir string) worktreeState {
	t.Helper()
	s := worktreeState{
		status: gitT(t, dir, "--no-optional-locks", "status", "--porcelain=v2", "--untracked-files=all", "--ignored"),
		stage:  gitT(t, dir, "ls-files", "--stage"),
		head:   gitT(t, dir, "rev-parse", "HEAD"),
		files:  map[string]string{},
	}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s.files[p] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSnapshotLeavesWorktreeUntouched(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	wt := filepath.Join(t.TempDir(), "w")
	gitT(t, r.Dir, "worktree", "add", "-q", "-b", "wave/s-i1", wt, "origin/main")
	writeFile(t, filepath.Join(wt, ".gitignore"), "*.log\n")
	writeFile(t, filepath.Join(wt, "gone.txt"), "to delete\n")
	writeFile(t, filepath.Join(wt, "keep.txt"), "v1\n")
	gitT(t, wt, "add", "-A")
	gitT(t, wt, "commit", "-q", "-m", "base")
	writeFile(t, filepath.Join(wt, "staged.txt"), "staged\n")
	gitT(t, wt, "add", "staged.txt")
	writeFile(t, filepath.Join(wt, "keep.txt"), "v1\nunstaged edit\n")
	writeFile(t, filepath.Join(wt, "new/untracked.txt"), "untracked\n")
	writeFile(t, filepath.Join(wt, "debug.log"), "ignored\n")
	writeFile(t, filepath.Join(wt, "forced.log"), "force-added\n")
	gitT(t, wt, "add", "-f", "forced.log")
	os.Remove(filepath.Join(wt, "gone.txt"))

	before := captureState(t, wt)
	commit, err := r.Snapshot(ctxT(t), wt, "refs/wave/salvage/1/a1", "salvage #1")
	if err != nil {
		t.Fatal(err)
	}
	after := captureState(t, wt)
	if before.status != after.status || before.stage != after.stage || before.head != after.head {
		t.Fatalf("worktree changed:\nbefore %+v\nafter  %+v", before, after)
	}
	for p, data := range before.files {
		if after.files[p] != data {
			t.Fatalf("%s changed", p)
		}
	}
	if len(after.files) != len(before.files) {
		t.Fatal("files appeared or vanished")
	}
	if got := gitT(t, r.Dir, "rev-parse", "refs/wave/salvage/1/a1"); got != commit {
		t.Fatalf("ref at %s, want %s", got, commit)
	}
	if got := gitT(t, r.Dir, "rev-parse", commit+"^"); got != before.head {
		t.Fatalf("snapshot parent %s, want HEAD %s", got, before.head)
	}
	tree := strings.Fields(gitT(t, r.Dir, "ls-tree", "-r", "--name-only", commit))
	for _, want := range []string{"staged.txt", "keep.txt", "new/untracked.txt", "forced.log", ".gitignore"} {
		if !slices.Contains(tree, want) {
			t.Errorf("snapshot lacks %s: %v", want, tree)
		}
	}
	for _, not := range []string{"debug.log", "gone.txt"} {
		if slices.Contains(tree, not) {
			t.Errorf("snapshot has %s", not)
		}
	}
	if got := gitT(t, r.Dir, "show", commit+":keep.txt"); got != "v1\nunstaged edit" {
		t.Errorf("keep.txt in snapshot = %q", got)
	}
	if _, err := r.Snapshot(ctxT(t), wt, "not-a-full-ref", "x"); err == nil {
		t.Fatal("snapshot to a non refs/ name accepted")
	}
}

func TestProgressOfAWorktree(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	wt := filepath.Join(t.TempDir(), "w")
	gitT(t, r.Dir, "worktree", "add", "-q", "-b", "wave/p-i1", wt, "origin/main")
	if n, err := r.CommitsAhead(ctxT(t), wt, "origin/main"); err != nil || n != 0 {
		t.Fatalf("fresh: ahead=%d err=%v", n, err)
	}
	if n, err := r.DirtyFiles(ctxT(t), wt); err != nil || n != 0 {
		t.Fatalf("fresh: dirty=%d err=%v", n, err)
	}
	for i, f := range []string{"a.txt", "b.txt"} {
		writeFile(t, filepath.Join(wt, f), f)
		gitT(t, wt, "add", f)
		gitT(t, wt, "commit", "-q", "-m", f)
		if n, err := r.CommitsAhead(ctxT(t), wt, "origin/main"); err != nil || n != i+1 {
			t.Fatalf("ahead=%d err=%v, want %d", n, err, i+1)
		}
	}
	gitT(t, wt, "mv", "a.txt", "renamed.txt")        // a rename: one entry
	writeFile(t, filepath.Join(wt, "b.txt"), "edit") // unstaged
	writeFile(t, filepath.Join(wt, "d/u1"), "u")     // untracked, in a directory
	writeFile(t, filepath.Join(wt, "d/u2"), "u")
	if n, err := r.DirtyFiles(ctxT(t), wt); err != nil || n != 4 {
		t.Fatalf("dirty=%d err=%v, want 4", n, err)
	}
	gitT(t, wt, "commit", "-q", "-am", "rename")
	// DiffNames: what the worker changed since it left main, even after
	// main moved on (three-dot), with both sides of a rename.
	commitOn(t, r.Dir, "main", "HEAD", map[string]string{"main-only.txt": "m"})
	got, err := r.DiffNames(ctxT(t), "main", "wave/p-i1")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"b.txt", "renamed.txt"}
	if !slices.Equal(got, want) {
		t.Fatalf("DiffNames = %v, want %v (a.txt was added then renamed: never on main)", got, want)
	}
}
