package gitops

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tipOf is origin's wave tip.
func tipOf(t *testing.T, origin string) string {
	t.Helper()
	return originRef(t, origin, "refs/heads/"+testWave)
}

// TestCandidatesStackedOnEachOtherLandAsTheExactCommitsVerified: the
// second candidate is prepared on the first one's would-be merge, before
// either landed; each lands as the very commit it was prepared (and so
// verified) as, and the wave branch passes through both.
func TestCandidatesStackedOnEachOtherLandAsTheExactCommitsVerified(t *testing.T) {
	t.Parallel()
	origin, r := newWave(t)
	tip := tipOf(t, origin)
	worker(t, r, "wave/t-i1", map[string]string{"one.txt": "1"})
	worker(t, r, "wave/t-i2", map[string]string{"two.txt": "2"})
	c1, err := r.PrepareMerge(ctxT(t), testWave, tip, "wave/t-i1", "Merge #1")
	if err != nil || c1.Commit == "" || c1.Base != tip {
		t.Fatalf("prepare #1: %+v %v", c1, err)
	}
	c2, err := r.PrepareMerge(ctxT(t), testWave, c1.Commit, "wave/t-i2", "Merge #2")
	if err != nil || c2.Commit == "" || c2.Base != c1.Commit {
		t.Fatalf("prepare #2 on #1: %+v %v", c2, err)
	}
	// What verify of #2 sees: both changes.
	var seen []string
	err = r.VerifyAt(ctxT(t), c2.Commit, func(_ context.Context, dir, commit string) error {
		for _, f := range []string{"one.txt", "two.txt"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				seen = append(seen, f)
			}
		}
		return nil
	})
	if err != nil || len(seen) != 2 {
		t.Fatalf("verify of #2 saw %v (%v), want both changes", seen, err)
	}
	for _, c := range []struct {
		worker string
		want   string
	}{{"wave/t-i1", c1.Commit}, {"wave/t-i2", c2.Commit}} {
		res, err := r.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: c.worker, Prepared: c.want, Expect: tipOf(t, origin)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Commit != c.want || tipOf(t, origin) != c.want {
			t.Fatalf("%s landed as %s (origin %s), prepared and verified as %s", c.worker, res.Commit, tipOf(t, origin), c.want)
		}
	}
	assertClean(t, r, 1)
}

// TestAPreparedMergeWhoseBaseNeverLandedIsRefused: the second candidate,
// prepared on top of the first, may not land while the first has not:
// what was verified included the first.
func TestAPreparedMergeWhoseBaseNeverLandedIsRefused(t *testing.T) {
	t.Parallel()
	origin, r := newWave(t)
	tip := tipOf(t, origin)
	worker(t, r, "wave/t-i1", map[string]string{"one.txt": "1"})
	worker(t, r, "wave/t-i2", map[string]string{"two.txt": "2"})
	c1, err := r.PrepareMerge(ctxT(t), testWave, tip, "wave/t-i1", "Merge #1")
	if err != nil {
		t.Fatal(err)
	}
	c2, err := r.PrepareMerge(ctxT(t), testWave, c1.Commit, "wave/t-i2", "Merge #2")
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: "wave/t-i2", Prepared: c2.Commit, Expect: tip})
	if !errors.Is(err, ErrStalePrepared) {
		t.Fatalf("err = %v, want ErrStalePrepared", err)
	}
	if tipOf(t, origin) != tip {
		t.Fatalf("origin moved to %s on a refused merge", tipOf(t, origin))
	}
}

// TestPrepareSaysWhenTheWorkerConflictsWithTheCandidateAhead and moves
// no ref.
func TestPrepareSaysWhenTheWorkerConflictsWithTheCandidateAhead(t *testing.T) {
	t.Parallel()
	origin, r := newWave(t)
	tip := tipOf(t, origin)
	worker(t, r, "wave/t-i1", map[string]string{"shared.txt": "one"})
	worker(t, r, "wave/t-i2", map[string]string{"shared.txt": "two"})
	c1, err := r.PrepareMerge(ctxT(t), testWave, tip, "wave/t-i1", "Merge #1")
	if err != nil {
		t.Fatal(err)
	}
	c2, err := r.PrepareMerge(ctxT(t), testWave, c1.Commit, "wave/t-i2", "Merge #2")
	if err != nil || c2.Commit != "" || len(c2.Conflicts) != 1 || c2.Conflicts[0] != "shared.txt" {
		t.Fatalf("prepare #2 on #1: %+v %v, want a conflict in shared.txt", c2, err)
	}
	// Without #1 it merges cleanly.
	if c, err := r.PrepareMerge(ctxT(t), testWave, tip, "wave/t-i2", "Merge #2"); err != nil || c.Commit == "" {
		t.Fatalf("prepare #2 on the tip: %+v %v", c, err)
	}
	if tipOf(t, origin) != tip {
		t.Fatal("a prepare moved origin")
	}
}

// TestPrepareTakesUpTheVerifiedMergeAKilledSupervisorLeftUnpushed: the
// intent ref holds the merge verified and recorded just before a kill;
// preparing the same (base, worker) again returns it, verified, and it
// lands once.
func TestPrepareTakesUpTheVerifiedMergeAKilledSupervisorLeftUnpushed(t *testing.T) {
	t.Parallel()
	origin, r := newWave(t)
	tip := tipOf(t, origin)
	w := worker(t, r, "wave/t-i1", map[string]string{"one.txt": "1"})
	req := MergeRequest{Wave: testWave, Worker: "wave/t-i1", Message: "Merge #1"}
	st, err := r.mergeState(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	left, _, _, err := r.prepare(ctxT(t), req, st) // verified, recorded, not pushed
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.PrepareMerge(ctxT(t), testWave, tip, "wave/t-i1", "Merge #1")
	if err != nil || c.Commit != left || !c.Verified {
		t.Fatalf("prepare after the kill: %+v %v, want the recorded %s, verified", c, err, left)
	}
	if _, err := r.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: "wave/t-i1", Prepared: c.Commit, Expect: tip}); err != nil {
		t.Fatal(err)
	}
	if tipOf(t, origin) != left || mergesOf(t, origin, w) != 1 {
		t.Fatalf("origin %s, merges of the worker %d; want %s once", tipOf(t, origin), mergesOf(t, origin, w), left)
	}
	// Landed: preparing it again finds it in.
	if c, err := r.PrepareMerge(ctxT(t), testWave, left, "wave/t-i1", "Merge #1"); err != nil || !c.Already {
		t.Fatalf("prepare once landed: %+v %v, want Already", c, err)
	}
}

// A commit holding a file the file system cannot take (a name over 255
// bytes, in a directory: git checkout says "unable to create file" and
// exits 0) is never verified: a verify there would pass a tree without
// the file that the merge then lands.
func TestAVerifyNeverRunsOnACheckoutMissingAFileOfTheCommit(t *testing.T) {
	t.Parallel()
	_, r := newWave(t)
	tip := gitT(t, r.Dir, "rev-parse", "refs/remotes/origin/"+testWave)
	mktree := func(listing string) string {
		cmd := exec.Command("git", "-C", r.Dir, "mktree")
		cmd.Stdin = strings.NewReader(listing)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("mktree: %v", err)
		}
		return strings.TrimSpace(string(out))
	}
	blob := strings.TrimSpace(gitT(t, r.Dir, "hash-object", "-w", filepath.Join(r.Dir, "README.md")))
	sub := mktree("100644 blob " + blob + "\t" + strings.Repeat("x", 300) + "\n100644 blob " + blob + "\tok.txt\n")
	top := mktree(gitT(t, r.Dir, "ls-tree", tip) + "\n040000 tree " + sub + "\tlong\n")
	commit := strings.TrimSpace(gitT(t, r.Dir, "-c", "user.name=w", "-c", "user.email=w@example.com", "commit-tree", top, "-p", tip, "-m", "a name too long"))
	ran := false
	err := r.VerifyAt(ctxT(t), commit, func(context.Context, string, string) error { ran = true; return nil })
	if ran || err == nil || !strings.Contains(err.Error(), "could not be written") {
		t.Fatalf("verify ran: %v, error %v; want no verify and the checkout refused as incomplete", ran, err)
	}
	if errors.Is(err, ErrVerifyFailed) {
		t.Errorf("%v reads as a failed verify: the worker would be sent back for a verdict no verify gave", err)
	}
}
