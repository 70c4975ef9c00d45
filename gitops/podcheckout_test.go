package gitops

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

// podClone clones origin's main over HTTP as a pod's runner does.
func podClone(t *testing.T, origin string) *Repo {
	t.Helper()
	url := gittest.ServeHTTP(t, origin, "", "")
	r, err := Clone(context.Background(), url, filepath.Join(t.TempDir(), "clone"), CloneOptions{Branch: "main", Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestAWorkerBranchPushedUnderItsLeaseReachesOriginOnceAndNeverOverwritesOthers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	origin := newOrigin(t)
	r := podClone(t, origin)
	lease, err := r.StartBranch(ctx, "wave/i1", "main")
	if err != nil || lease != "" {
		t.Fatalf("start a new branch: lease %q, %v", lease, err)
	}
	writeFile(t, filepath.Join(r.Dir, "a.txt"), "a\n")
	if err := CommitAll(ctx, r.Dir, "a"); err != nil {
		t.Fatal(err)
	}
	head, err := r.PushBranchLeased(ctx, "wave/i1", lease)
	if err != nil {
		t.Fatal(err)
	}
	if got := gitT(t, origin, "rev-parse", "refs/heads/wave/i1"); got != head {
		t.Fatalf("origin has %s, pushed %s", got, head)
	}
	// A retry after a crash (same lease, origin already there) is a no-op.
	if _, err := r.PushBranchLeased(ctx, "wave/i1", lease); err != nil {
		t.Fatalf("re-push: %v", err)
	}
	// Someone else moved the branch: a stale lease is refused.
	other := podClone(t, origin)
	if _, err := other.StartBranch(ctx, "wave/i1", "main"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(other.Dir, "b.txt"), "b\n")
	if err := CommitAll(ctx, other.Dir, "b"); err != nil {
		t.Fatal(err)
	}
	theirs, err := other.PushBranchLeased(ctx, "wave/i1", head)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(r.Dir, "c.txt"), "c\n")
	if err := CommitAll(ctx, r.Dir, "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.PushBranchLeased(ctx, "wave/i1", head); !errors.Is(err, ErrRejected) {
		t.Fatalf("push under a stale lease: %v, want ErrRejected", err)
	}
	if got := gitT(t, origin, "rev-parse", "refs/heads/wave/i1"); got != theirs {
		t.Fatalf("origin's branch was overwritten: %s, want %s", got, theirs)
	}
	// A relaunch starts from origin's copy of the branch.
	again := podClone(t, origin)
	if lease, err := again.StartBranch(ctx, "wave/i1", "main"); err != nil || lease != theirs {
		t.Fatalf("start from origin's branch: lease %q, %v", lease, err)
	}
	if _, err := os.Stat(filepath.Join(again.Dir, "b.txt")); err != nil {
		t.Fatal("the relaunched clone lacks the branch's work")
	}
}

func TestUncommittedWorkSnapshottedInOnePodIsThereUncommittedInTheNext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	origin := newOrigin(t)
	r := podClone(t, origin)
	if _, err := r.StartBranch(ctx, "wave/i2", "main"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(r.Dir, "done.txt"), "committed\n")
	if err := CommitAll(ctx, r.Dir, "done"); err != nil {
		t.Fatal(err)
	}
	committed, _ := r.RevParse(ctx, "HEAD")
	writeFile(t, filepath.Join(r.Dir, "half.txt"), "half done\n")
	writeFile(t, filepath.Join(r.Dir, "README.md"), "edited\n")
	if err := os.Remove(filepath.Join(r.Dir, "done.txt")); err != nil {
		t.Fatal(err)
	}
	const ref = "refs/wave/salvage/2/a1"
	snap, err := r.PushSnapshot(ctx, ref, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := r.PushSnapshot(ctx, ref, snap, ""); err != nil || again != snap {
		t.Fatalf("snapshot of an unchanged clone: %s, %v; want %s unchanged", again, err, snap)
	}
	if got := gitT(t, origin, "rev-parse", ref); got != snap {
		t.Fatalf("origin's %s is %s, want %s", ref, got, snap)
	}
	// The pod is gone; the next one continues from the snapshot.
	next := podClone(t, origin)
	if _, err := next.StartBranch(ctx, "wave/i2", "main"); err != nil {
		t.Fatal(err)
	}
	if _, err := next.Restore(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if head, _ := next.RevParse(ctx, "HEAD"); head != committed {
		t.Fatalf("restored HEAD %s, want the snapshot's parent %s", head, committed)
	}
	st, err := next.State(ctx, "refs/remotes/origin/main")
	if err != nil {
		t.Fatal(err)
	}
	if st.Ahead != 1 || st.Dirty != 3 {
		t.Fatalf("restored clone: %d ahead, %d dirty; want 1 ahead and 3 dirty (new, edited, deleted)\n%q", st.Ahead, st.Dirty, st.Status)
	}
	if b, _ := os.ReadFile(filepath.Join(next.Dir, "half.txt")); string(b) != "half done\n" {
		t.Fatalf("half.txt = %q", b)
	}
	if _, err := os.Stat(filepath.Join(next.Dir, "done.txt")); !os.IsNotExist(err) {
		t.Fatalf("a file deleted before the snapshot is back: %v", err)
	}
}

func TestARunsResultCommitIsTheSameOnARetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	origin := newOrigin(t)
	r := podClone(t, origin)
	files := map[string][]byte{"runner-final.json": []byte(`{"record":{}}`), "agent.log": []byte("[backlog-result] done\n")}
	at := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	const ref = "refs/wave/runs/i3-a1"
	sha, err := r.PushResult(ctx, ref, files, at, "")
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.PushResult(ctx, ref, files, at, "")
	if err != nil || again != sha {
		t.Fatalf("retry: %s, %v; want %s", again, err, sha)
	}
	if got := gittest.Run(t, origin, "show", ref+":agent.log"); got != "[backlog-result] done" {
		t.Fatalf("origin's agent.log: %q", got)
	}
}

// A pod's worker pushes its commits to its candidate ref, never to a
// branch; a relaunch continues from the candidate; a stale lease is
// refused; the supervisor brings the candidate in as the worker branch.
// A candidate that names a branch is refused.
func TestAPodPushesItsWorkToACandidateNeverABranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	origin := newOrigin(t)
	const branch = "wave/x-i1"
	cand := CandidateRef(branch)
	r := podClone(t, origin)
	lease, err := r.StartCandidate(ctx, branch, cand, "main")
	if err != nil || lease != "" {
		t.Fatalf("start: lease %q, %v", lease, err)
	}
	writeFile(t, filepath.Join(r.Dir, "a.txt"), "a\n")
	if err := CommitAll(ctx, r.Dir, "a"); err != nil {
		t.Fatal(err)
	}
	head, err := r.PushCandidate(ctx, cand, lease)
	if err != nil {
		t.Fatal(err)
	}
	if got := originRef(t, origin, cand); got != head {
		t.Fatalf("origin's candidate %q, pushed %s", got, head)
	}
	if got := originRef(t, origin, "refs/heads/"+branch); got != "" {
		t.Fatalf("the pod pushed a branch: %s", got)
	}
	if _, err := r.PushCandidate(ctx, cand, lease); err != nil {
		t.Fatalf("a retry after a crash: %v", err)
	}
	again := podClone(t, origin)
	lease2, err := again.StartCandidate(ctx, branch, cand, "main")
	if err != nil || lease2 != head || gitT(t, again.Dir, "rev-parse", "HEAD") != head {
		t.Fatalf("relaunch: lease %q, %v; want to go on from %s", lease2, err, head)
	}
	writeFile(t, filepath.Join(r.Dir, "c.txt"), "c\n")
	if err := CommitAll(ctx, r.Dir, "c"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(again.Dir, "b.txt"), "b\n")
	if err := CommitAll(ctx, again.Dir, "b"); err != nil {
		t.Fatal(err)
	}
	theirs, err := again.PushCandidate(ctx, cand, lease2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.PushCandidate(ctx, cand, head); !errors.Is(err, ErrRejected) {
		t.Fatalf("push under a stale lease: %v, want ErrRejected", err)
	}
	sup := newClone(t, origin)
	if sha, ok, err := sup.FetchCandidate(ctx, cand, branch, "refs/remotes/origin/main"); err != nil || !ok || sha != theirs {
		t.Fatalf("supervisor fetch: %s %v %v, want %s", sha, ok, err, theirs)
	}
	if _, err := r.PushCandidate(ctx, "refs/heads/main", ""); err == nil {
		t.Fatal("a candidate that is a branch was pushed")
	}
}
