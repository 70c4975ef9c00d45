package gitops

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

const testWave = "wave/2025-01-01-test"

// newWave is an origin with a wave branch cut from main, and a clone
// that has opened it (its local wave branch made as a run's is).
func newWave(t testing.TB) (string, *Repo) {
	t.Helper()
	origin := gittest.OriginWithWaveBranch(t, testWave, nil)
	r := newClone(t, origin)
	if _, _, err := r.EnsureWaveBranch(ctxT(t), testWave, "main"); err != nil {
		t.Fatal(err)
	}
	return origin, r
}

// worker makes a worker branch off the remote wave tip with files.
func worker(t testing.TB, r *Repo, name string, files map[string]string) string {
	t.Helper()
	return commitOn(t, r.Dir, name, "refs/remotes/origin/"+testWave, files)
}

// mergesOf counts the merge commits on origin's wave branch that bring in tip.
func mergesOf(t testing.TB, origin, tip string) int {
	t.Helper()
	out := gitT(t, origin, "rev-list", "--merges", "--parents", "refs/heads/"+testWave)
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 3 && slices.Contains(f[2:], tip) {
			n++
		}
	}
	return n
}

// assertClean fails when any worktree of the clone has changes, or when
// a scratch worktree is still registered.
func assertClean(t testing.TB, r *Repo, want int) {
	t.Helper()
	paths := worktreePaths(t, r.Dir)
	if len(paths) != want {
		t.Fatalf("worktrees %v, want %d", paths, want)
	}
	for _, p := range paths {
		if s := gitT(t, p, "status", "--porcelain"); s != "" {
			t.Fatalf("worktree %s dirty:\n%s", p, s)
		}
	}
	if entries, _ := os.ReadDir(r.scratchDir); len(entries) > 0 {
		t.Fatalf("scratch dir not empty: %v", entries)
	}
}

func TestMergeClean(t *testing.T) {
	t.Parallel()
	origin, r := newWave(t)
	before := originRef(t, origin, "refs/heads/"+testWave)
	w := worker(t, r, "wave/t-i1", map[string]string{"one.txt": "1", "dir/two.txt": "2"})
	res, err := r.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: "wave/t-i1", Message: "Merge #1: one"})
	if err != nil {
		t.Fatal(err)
	}
	after := originRef(t, origin, "refs/heads/"+testWave)
	if res.Already || len(res.Conflicts) > 0 || res.Commit != after || res.WaveBefore != before || res.WaveAfter != after {
		t.Fatalf("result %+v; origin %s → %s", res, before, after)
	}
	if parents := gitT(t, r.Dir, "rev-list", "--parents", "-n1", after); parents != after+" "+before+" "+w {
		t.Fatalf("merge parents %q, want wave then worker", parents)
	}
	if msg := gitT(t, r.Dir, "log", "-1", "--format=%B", after); msg != "Merge #1: one" {
		t.Fatalf("message %q", msg)
	}
	if !slices.Equal(res.Files, []string{"dir/two.txt", "one.txt"}) {
		t.Fatalf("files %v", res.Files)
	}
	if got := gitT(t, r.Dir, "rev-parse", "refs/heads/"+testWave); got != after {
		t.Fatalf("local wave at %s, origin at %s", got, after)
	}
	assertClean(t, r, 1)
}

func TestMergeConflictDoesNotMoveWaveRef(t *testing.T) {
	t.Parallel()
	origin, r := newWave(t)
	worker(t, r, "wave/t-i1", map[string]string{"README.md": "one\n"})
	worker(t, r, "wave/t-i2", map[string]string{"README.md": "two\n", "other.txt": "x"})
	wt := filepath.Join(t.TempDir(), "w2")
	workerClone(t, r, wt, "wave/t-i2", "x", nil)
	if _, err := r.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: "wave/t-i1"}); err != nil {
		t.Fatal(err)
	}
	waveBefore := originRef(t, origin, "refs/heads/"+testWave)
	localBefore := gitT(t, r.Dir, "rev-parse", "refs/heads/"+testWave)
	verified := false
	res, err := r.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: "wave/t-i2", Verify: func(context.Context, string, string) error {
		verified = true
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Conflicts, []string{"README.md"}) || res.Commit != "" || res.Already {
		t.Fatalf("result %+v, want a README.md conflict", res)
	}
	if verified {
		t.Fatal("verify ran on a conflicting merge")
	}
	if got := originRef(t, origin, "refs/heads/"+testWave); got != waveBefore {
		t.Fatalf("origin wave moved %s → %s", waveBefore, got)
	}
	if got := gitT(t, r.Dir, "rev-parse", "refs/heads/"+testWave); got != localBefore {
		t.Fatal("local wave moved")
	}
	assertClean(t, r, 1)
}

func TestFailedVerifyDoesNotMoveWaveRef(t *testing.T) {
	t.Parallel()
	origin, r := newWave(t)
	w := worker(t, r, "wave/t-i1", map[string]string{"feature.txt": "new"})
	waveBefore := originRef(t, origin, "refs/heads/"+testWave)
	localBefore := gitT(t, r.Dir, "rev-parse", "refs/heads/"+testWave)
	var sawDir string
	boom := errors.New("make test: 3 failures")
	_, err := r.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: "wave/t-i1", Verify: func(_ context.Context, dir, commit string) error {
		sawDir = dir
		if data, err := os.ReadFile(filepath.Join(dir, "feature.txt")); err != nil || string(data) != "new" {
			t.Errorf("verify dir lacks the worker's file: %q %v", data, err)
		}
		if got := gitT(t, dir, "rev-parse", "HEAD"); got != commit {
			t.Errorf("verify dir at %s, commit %s", got, commit)
		}
		if p := gitT(t, dir, "rev-list", "--parents", "-n1", "HEAD"); p != commit+" "+waveBefore+" "+w {
			t.Errorf("would-be merge parents %q", p)
		}
		return boom
	}})
	if !errors.Is(err, ErrVerifyFailed) || !errors.Is(err, boom) {
		t.Fatalf("err = %v, want ErrVerifyFailed wrapping the verify error", err)
	}
	if got := originRef(t, origin, "refs/heads/"+testWave); got != waveBefore {
		t.Fatal("origin wave moved after a failed verify")
	}
	if got := gitT(t, r.Dir, "rev-parse", "refs/heads/"+testWave); got != localBefore {
		t.Fatal("local wave moved after a failed verify")
	}
	if _, err := os.Stat(sawDir); !os.IsNotExist(err) {
		t.Fatalf("scratch worktree %s left behind", sawDir)
	}
	assertClean(t, r, 1)
}

// TestRejectedPushRetriesWithoutLoss: another supervisor's merge lands
// while this one verifies; the lease rejects our push, and the redo keeps
// both merges.
func TestRejectedPushRetriesWithoutLoss(t *testing.T) {
	t.Parallel()
	origin, a := newWave(t)
	b := newClone(t, origin)
	wa := worker(t, a, "wave/t-i1", map[string]string{"a.txt": "a"})
	if err := b.Fetch(ctxT(t), "+refs/heads/"+testWave+":refs/remotes/origin/"+testWave); err != nil {
		t.Fatal(err)
	}
	wb := worker(t, b, "wave/t-i2", map[string]string{"b.txt": "b"})
	verifies := 0
	res, err := a.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: "wave/t-i1", Verify: func(ctx context.Context, _, _ string) error {
		verifies++
		if verifies == 1 {
			if _, err := b.Merge(ctx, MergeRequest{Wave: testWave, Worker: "wave/t-i2"}); err != nil {
				t.Errorf("interfering merge: %v", err)
			}
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if verifies != 2 {
		t.Fatalf("verify ran %d times, want 2 (the redo verifies the new candidate)", verifies)
	}
	tip := originRef(t, origin, "refs/heads/"+testWave)
	if res.Commit != tip || !isAncestorIn(t, origin, wa, tip) || !isAncestorIn(t, origin, wb, tip) {
		t.Fatalf("origin wave %s lost a merge (result %+v)", tip, res)
	}
	if mergesOf(t, origin, wa) != 1 || mergesOf(t, origin, wb) != 1 {
		t.Fatalf("merges: a=%d b=%d, want one each", mergesOf(t, origin, wa), mergesOf(t, origin, wb))
	}
	assertClean(t, a, 1)
	assertClean(t, b, 1)
}

// TestCrashBetweenUpdateRefAndPushResumesOnce: the merge commit exists and
// the local wave branch points at it, but the push never happened.
func TestCrashBetweenUpdateRefAndPushResumesOnce(t *testing.T) {
	t.Parallel()
	crash := func(t *testing.T, r *Repo, req MergeRequest) string {
		t.Helper()
		st, err := r.mergeState(ctxT(t), req)
		if err != nil {
			t.Fatal(err)
		}
		commit, conflicts, _, err := r.prepare(ctxT(t), req, st)
		if err != nil || len(conflicts) > 0 {
			t.Fatalf("prepare: %v %v", conflicts, err)
		}
		if got := gitT(t, r.Dir, "rev-parse", pendingRef(testWave)); got != commit {
			t.Fatalf("intent ref at %s after update-ref, want %s", got, commit)
		}
		return commit
	}
	t.Run("origin unchanged: the local commit is pushed", func(t *testing.T) {
		origin, r := newWave(t)
		w := worker(t, r, "wave/t-i1", map[string]string{"a.txt": "a"})
		req := MergeRequest{Wave: testWave, Worker: "wave/t-i1", Message: "Merge #1"}
		commit := crash(t, r, req)
		verified := false
		req.Verify = func(context.Context, string, string) error { verified = true; return nil }
		res, err := r.Merge(ctxT(t), req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Commit != commit || originRef(t, origin, "refs/heads/"+testWave) != commit {
			t.Fatalf("resumed with %s, prepared %s", res.Commit, commit)
		}
		if verified {
			t.Fatal("the prepared commit was verified before update-ref; resume verified it again")
		}
		if n := mergesOf(t, origin, w); n != 1 {
			t.Fatalf("%d merges of the worker on origin", n)
		}
	})
	t.Run("origin moved: recomputed, still one merge", func(t *testing.T) {
		origin, r := newWave(t)
		b := newClone(t, origin)
		w := worker(t, r, "wave/t-i1", map[string]string{"a.txt": "a"})
		stale := crash(t, r, MergeRequest{Wave: testWave, Worker: "wave/t-i1"})
		wb := worker(t, b, "wave/t-i2", map[string]string{"b.txt": "b"})
		if _, err := b.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: "wave/t-i2"}); err != nil {
			t.Fatal(err)
		}
		res, err := r.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: "wave/t-i1"})
		if err != nil {
			t.Fatal(err)
		}
		tip := originRef(t, origin, "refs/heads/"+testWave)
		if res.Commit == stale || res.Commit != tip {
			t.Fatalf("pushed %s (stale %s, origin %s)", res.Commit, stale, tip)
		}
		if mergesOf(t, origin, w) != 1 || mergesOf(t, origin, wb) != 1 {
			t.Fatalf("merges a=%d b=%d", mergesOf(t, origin, w), mergesOf(t, origin, wb))
		}
	})
}

// TestMergeAlreadyMergedIsNoop covers the crash after the push and before
// the caller recorded it: the retry finds the merge and moves nothing.
func TestMergeAlreadyMergedIsNoop(t *testing.T) {
	t.Parallel()
	origin, r := newWave(t)
	worker(t, r, "wave/t-i1", map[string]string{"a.txt": "a"})
	req := MergeRequest{Wave: testWave, Worker: "wave/t-i1", Message: "Merge #1"}
	first, err := r.Merge(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	// A later merge on top: the retry still names the first merge commit.
	worker(t, r, "wave/t-i2", map[string]string{"b.txt": "b"})
	if _, err := r.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: "wave/t-i2"}); err != nil {
		t.Fatal(err)
	}
	tip := originRef(t, origin, "refs/heads/"+testWave)
	again, err := newClone(t, origin).Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: "refs/remotes/origin/" + testWave + "^^2"})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Already || again.Commit != first.Commit || !slices.Equal(again.Files, []string{"a.txt"}) {
		t.Fatalf("retry result %+v, first %+v", again, first)
	}
	if originRef(t, origin, "refs/heads/"+testWave) != tip {
		t.Fatal("no-op merge moved the wave branch")
	}
}

func TestWorkerWithNoCommitsIsNoop(t *testing.T) {
	t.Parallel()
	origin, r := newWave(t)
	tip := originRef(t, origin, "refs/heads/"+testWave)
	gitT(t, r.Dir, "branch", "wave/t-i1", "refs/remotes/origin/"+testWave)
	res, err := r.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: "wave/t-i1"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Already || res.Commit != "" || res.WaveBefore != tip || res.WaveAfter != tip {
		t.Fatalf("result %+v", res)
	}
	if originRef(t, origin, "refs/heads/"+testWave) != tip || gitT(t, r.Dir, "rev-parse", "refs/heads/"+testWave) != tip {
		t.Fatal("wave moved for a worker with no commits")
	}
}

func TestBaseMovedMidWave(t *testing.T) {
	t.Parallel()
	origin, r := newWave(t)
	w := worker(t, r, "wave/t-i1", map[string]string{"a.txt": "a"})
	if _, err := r.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: "wave/t-i1"}); err != nil {
		t.Fatal(err)
	}
	other := newClone(t, origin)
	mainTip := commitOn(t, other.Dir, "main", "HEAD", map[string]string{"hotfix.txt": "fix"})
	gitT(t, other.Dir, "push", "-q", "origin", "main")

	res, err := r.MergeBase(ctxT(t), testWave, "main", "", nil)
	if err != nil || res.Already {
		t.Fatalf("merge base: %+v %v", res, err)
	}
	tip := originRef(t, origin, "refs/heads/"+testWave)
	if !isAncestorIn(t, origin, mainTip, tip) || !isAncestorIn(t, origin, w, tip) {
		t.Fatal("wave lacks the new base or the worker")
	}
	if !slices.Equal(res.Files, []string{"hotfix.txt"}) {
		t.Fatalf("files %v", res.Files)
	}
	res, err = r.MergeBase(ctxT(t), testWave, "main", "", nil)
	if err != nil || !res.Already || originRef(t, origin, "refs/heads/"+testWave) != tip {
		t.Fatalf("second merge base: %+v %v", res, err)
	}
	if mergesOf(t, origin, mainTip) != 1 {
		t.Fatal("base merged more than once")
	}
}

// TestMergeKeepsACommitOnTheLocalWaveBranch: a commit someone made on
// the local wave branch (never pushed) is neither overwritten nor a reason
// to stop the run: the merge lands on the remote, the local branch stays.
func TestMergeKeepsACommitOnTheLocalWaveBranch(t *testing.T) {
	t.Parallel()
	origin, r := newWave(t)
	mine := commitOn(t, r.Dir, testWave, "", map[string]string{"local.txt": "x"})
	w := worker(t, r, "wave/t-i1", map[string]string{"a.txt": "a"})
	res, err := r.Merge(ctxT(t), MergeRequest{Wave: testWave, Worker: "wave/t-i1"})
	if err != nil {
		t.Fatal(err)
	}
	tip := originRef(t, origin, "refs/heads/"+testWave)
	if res.Commit != tip || mergesOf(t, origin, w) != 1 {
		t.Fatalf("result %+v, origin at %s: want the worker merged once", res, tip)
	}
	if isAncestorIn(t, origin, mine, tip) {
		t.Fatal("the local commit was pushed with the merge")
	}
	if got := gitT(t, r.Dir, "rev-parse", "refs/heads/"+testWave); got != mine {
		t.Fatalf("local wave at %s, want the local commit %s kept", got, mine)
	}
}
