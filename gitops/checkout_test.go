package gitops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeNeverMovesACheckedOutWaveBranch: a user switched to the wave
// branch to look at it and started editing. Merges go on landing on the
// remote, and the checkout is never moved under them: HEAD stays, the
// working tree matches it (nothing changed but their own edit), so the
// commit they make next holds their edit only — it reverts no merge. A
// commit of theirs on the branch does not stop the run either, and is kept
// (not pushed); merging the remote wave branch into it brings in
// everything.
func TestMergeNeverMovesACheckedOutWaveBranch(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"main worktree", "linked worktree"} {
		t.Run(where, func(t *testing.T) {
			origin, r := newWave(t)
			user := r.Dir
			if where == "main worktree" {
				gitT(t, user, "checkout", "-q", testWave)
			} else {
				user = filepath.Join(t.TempDir(), "look")
				gitT(t, r.Dir, "worktree", "add", "-q", user, testWave)
			}
			head := gitT(t, user, "rev-parse", "HEAD")
			const edit = "hello\nmy edit\n"
			writeFile(t, filepath.Join(user, "README.md"), edit)

			merge := func(name string) {
				t.Helper()
				w := worker(t, r, name, map[string]string{strings.TrimPrefix(name, "wave/t-") + ".txt": "work"})
				res, err := r.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: name})
				if err != nil {
					t.Fatalf("merge %s: %v (a checked-out wave branch must not stop the run)", name, err)
				}
				if tip := originRef(t, origin, "refs/heads/"+testWave); res.Commit != tip || mergesOf(t, origin, w) != 1 {
					t.Fatalf("merge %s: %+v, origin at %s", name, res, tip)
				}
			}
			merge("wave/t-i1")
			assertUntouched(t, user, head, "M README.md")
			if data, err := os.ReadFile(filepath.Join(user, "README.md")); err != nil || string(data) != edit {
				t.Fatalf("uncommitted edit lost: %q %v", data, err)
			}

			gitT(t, user, "commit", "-q", "-am", "my edit")
			mine := gitT(t, user, "rev-parse", "HEAD")
			if got := gitT(t, user, "show", "--format=", "--name-status", mine); got != "M\tREADME.md" {
				t.Fatalf("the user's commit changed %q, want README.md only (a stale tree reverts merges)", got)
			}
			merge("wave/t-i2")
			assertUntouched(t, user, mine, "")
			tip := originRef(t, origin, "refs/heads/"+testWave)
			if isAncestorIn(t, origin, mine, tip) {
				t.Fatal("the user's local commit was pushed")
			}

			gitT(t, user, "merge", "-q", "--no-edit", "origin/"+testWave)
			for f, want := range map[string]string{"README.md": edit, "i1.txt": "work", "i2.txt": "work"} {
				if data, err := os.ReadFile(filepath.Join(user, f)); err != nil || string(data) != want {
					t.Errorf("after merging origin's wave branch: %s = %q %v, want %q", f, data, err, want)
				}
			}
		})
	}
}

// TestLocalWaveBranchCatchesUpOnceNoLongerCheckedOut: the local wave
// branch follows the remote for those who do not have it checked out (and
// for workers told to `git merge` it), as a fast-forward only.
func TestLocalWaveBranchCatchesUpOnceNoLongerCheckedOut(t *testing.T) {
	t.Parallel()
	origin, r := newWave(t)
	look := filepath.Join(t.TempDir(), "look")
	gitT(t, r.Dir, "worktree", "add", "-q", look, testWave)
	before := gitT(t, look, "rev-parse", "HEAD")
	worker(t, r, "wave/t-i1", map[string]string{"a.txt": "a"})
	if _, err := r.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: "wave/t-i1"}); err != nil {
		t.Fatal(err)
	}
	assertUntouched(t, look, before, "")
	if err := os.RemoveAll(look); err != nil {
		t.Fatal(err)
	}
	gitT(t, r.Dir, "worktree", "prune")
	worker(t, r, "wave/t-i2", map[string]string{"b.txt": "b"})
	if _, err := r.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: "wave/t-i2"}); err != nil {
		t.Fatal(err)
	}
	if got, tip := gitT(t, r.Dir, "rev-parse", "refs/heads/"+testWave), originRef(t, origin, "refs/heads/"+testWave); got != tip {
		t.Fatalf("local wave at %s, origin at %s: want it caught up once nobody has it checked out", got, tip)
	}
}

// assertUntouched fails unless the worktree at dir is still on the wave
// branch at head with status wantStatus (a ref moved under it shows the
// merges' files as staged deletions).
func assertUntouched(t *testing.T, dir, head, wantStatus string) {
	t.Helper()
	if got := gitT(t, dir, "rev-parse", "HEAD"); got != head {
		t.Fatalf("%s: HEAD moved to %s, want %s", dir, got, head)
	}
	if got := gitT(t, dir, "symbolic-ref", "HEAD"); got != "refs/heads/"+testWave {
		t.Fatalf("%s: on %s", dir, got)
	}
	if got := gitT(t, dir, "status", "--porcelain"); got != wantStatus {
		t.Fatalf("%s: status %q, want %q (a stale working tree)", dir, got, wantStatus)
	}
}

// TestWorkerMergesTheWaveBranchFromOrigin: a worker sent back to merge the
// wave branch gets the tip the supervisor gives its clone (origin's as the
// run pushed it), not the user's local branch, which lags while they have
// it checked out and holds a commit of theirs.
func TestWorkerMergesTheWaveBranchFromOrigin(t *testing.T) {
	t.Parallel()
	origin, r := newWave(t)
	look := filepath.Join(t.TempDir(), "look")
	gitT(t, r.Dir, "worktree", "add", "-q", look, testWave)
	writeFile(t, filepath.Join(look, "notes.txt"), "mine\n")
	gitT(t, look, "add", "notes.txt")
	gitT(t, look, "commit", "-q", "-m", "my note")
	worker(t, r, "wave/t-i1", map[string]string{"a.txt": "a"})
	worker(t, r, "wave/t-i2", map[string]string{"b.txt": "b"})
	if _, err := r.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: "wave/t-i1"}); err != nil {
		t.Fatal(err)
	}
	tip := originRef(t, origin, "refs/heads/"+testWave)
	wt := filepath.Join(t.TempDir(), "w2")
	workerClone(t, r, wt, "wave/t-i2", "", map[string]string{"refs/heads/" + testWave: tip, "refs/remotes/origin/" + testWave: tip})
	if err := MergeFavouring(ctxT(t), wt, testWave, "ours", "Merge the wave branch"); err != nil {
		t.Fatal(err)
	}
	if !isAncestorIn(t, wt, tip, gitT(t, wt, "rev-parse", "HEAD")) {
		t.Error("the worker branch lacks origin's wave tip")
	}
	if exists(filepath.Join(wt, "notes.txt")) {
		t.Error("the worker merged the user's local commit from their checked-out wave branch")
	}
}
