package gitops

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

// runnerDir is a second clone of origin, standing in for a worker pod's:
// it commits and pushes the way the runner does.
func runnerDir(t *testing.T, origin string) string {
	t.Helper()
	return gittest.CloneOf(t, origin)
}

func TestSupervisorFetchesTheBranchAPodPushed(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	sup := newClone(t, origin)
	pod := runnerDir(t, origin)
	ctx := ctxT(t)
	if _, ok, err := sup.FetchWorker(ctx, "wave/x-i3", "refs/heads/main"); err != nil || ok {
		t.Fatalf("a branch origin lacks: ok %v err %v, want absent and no error", ok, err)
	}
	first := commitOn(t, pod, "wave/x-i3", "main", map[string]string{"a.txt": "one"})
	gitT(t, pod, "push", "-q", "origin", "wave/x-i3")
	sha, ok, err := sup.FetchWorker(ctx, "wave/x-i3", "refs/heads/main")
	if err != nil || !ok || sha != first || gitT(t, sup.Dir, "rev-parse", "refs/heads/wave/x-i3") != first {
		t.Fatalf("fetch: %s %v %v, want %s in refs/heads", sha, ok, err, first)
	}
	// The runner rewrote its branch (amend, rebase) under its lease: the
	// supervisor's copy follows, it is never merged into.
	gitT(t, pod, "update-ref", "refs/heads/wave/x-i3", "main")
	second := commitOn(t, pod, "wave/x-i3", "main", map[string]string{"b.txt": "two"})
	gitT(t, pod, "push", "-q", "-f", "origin", "wave/x-i3")
	if sha, ok, err := sup.FetchWorker(ctx, "wave/x-i3", "refs/heads/main"); err != nil || !ok || sha != second {
		t.Fatalf("fetch after a rewrite: %s %v %v, want %s", sha, ok, err, second)
	}
	if _, _, err := sup.FetchWorker(ctx, "-bad", "refs/heads/main"); err == nil {
		t.Fatal("a branch name starting with '-' was fetched")
	}
}

func TestSupervisorFetchesASnapshotAndReadsTheResult(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	sup := newClone(t, origin)
	pod := runnerDir(t, origin)
	ctx := ctxT(t)
	const ref = "refs/wave/salvage/3/a1"
	if _, ok, err := sup.FetchRef(ctx, ref); err != nil || ok {
		t.Fatalf("a snapshot origin lacks: ok %v err %v", ok, err)
	}
	snap := commitOn(t, pod, "snap", "main", map[string]string{"wip.txt": "half done", "runner-final.json": `{"state":"completed"}`})
	gitT(t, pod, "push", "-q", "origin", snap+":"+ref)
	sha, ok, err := sup.FetchRef(ctx, ref)
	if err != nil || !ok || sha != snap {
		t.Fatalf("fetch %s: %s %v %v, want %s", ref, sha, ok, err, snap)
	}
	data, ok, err := sup.ReadFile(ctx, ref, "runner-final.json")
	if err != nil || !ok || string(data) != `{"state":"completed"}` {
		t.Fatalf("read: %q %v %v", data, ok, err)
	}
	if _, ok, err := sup.ReadFile(ctx, ref, "agent.log"); err != nil || ok {
		t.Fatalf("a file the tree lacks: ok %v err %v", ok, err)
	}
	if _, _, err := sup.FetchRef(ctx, "heads/main"); err == nil {
		t.Fatal("a ref outside refs/ was fetched")
	}
}

func TestARunsRefsOnOriginAreDeletedOnceAndMovedOnesKept(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	sup := newClone(t, origin)
	pod := runnerDir(t, origin)
	ctx := ctxT(t)
	a := commitOn(t, pod, "s1", "main", map[string]string{"x": "1"})
	b := commitOn(t, pod, "s2", "main", map[string]string{"x": "2"})
	for ref, sha := range map[string]string{"refs/wave/salvage/3/a1": a, "refs/wave/salvage/3/a2": b,
		"refs/wave/salvage/31/a1": a, "refs/wave/runs/r1/i3-a1": b} {
		gitT(t, pod, "push", "-q", "origin", sha+":"+ref)
	}
	refs, err := sup.RemoteRefs(ctx, "refs/wave/salvage/3/", "refs/wave/runs/r1/")
	if err != nil || len(refs) != 3 || refs["refs/wave/salvage/3/a2"] != b || refs["refs/wave/runs/r1/i3-a1"] != b {
		t.Fatalf("listed %v (%v); want issue 3's two snapshots and its result, not #31's", refs, err)
	}
	if _, _, err := sup.FetchRef(ctx, "refs/wave/salvage/3/a1"); err != nil {
		t.Fatal(err)
	}
	// The runner of a2 pushes again after the listing: its newer
	// snapshot stays.
	gitT(t, pod, "push", "-q", "-f", "origin", a+":refs/wave/salvage/3/a2")
	n, err := sup.DeleteRemoteRefs(ctx, refs)
	if err != nil || n != 2 {
		t.Fatalf("deleted %d (%v), want 2", n, err)
	}
	if originRef(t, origin, "refs/wave/salvage/3/a1") != "" || originRef(t, origin, "refs/wave/runs/r1/i3-a1") != "" {
		t.Error("a listed ref is still on origin")
	}
	if originRef(t, origin, "refs/wave/salvage/3/a2") != a || originRef(t, origin, "refs/wave/salvage/31/a1") != a {
		t.Error("a moved ref or another issue's was deleted")
	}
	if _, ok, _ := sup.localRef(ctx, "refs/wave/salvage/3/a1"); !ok {
		t.Error("the clone's copy of a deleted snapshot went too")
	}
	// Run again (a supervisor killed after the push): nothing to do.
	if n, err := sup.DeleteRemoteRefs(ctx, refs); err != nil || n != 0 {
		t.Fatalf("second delete: %d %v, want 0 and no error", n, err)
	}
	if _, err := sup.RemoteRefs(ctx, "refs/wave/*"); err == nil {
		t.Error("a pattern was taken as a prefix")
	}
	if _, err := sup.DeleteRemoteRefs(ctx, map[string]string{"refs/heads/main": a}); err == nil {
		t.Error("a branch was deleted as a ref")
	}
}

func TestRemoteURLIsWhatAPodCanReach(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	sup := newClone(t, origin)
	if url, err := sup.RemoteURL(ctxT(t)); err != nil || url != origin {
		t.Fatalf("url %q (%v), want %s", url, err, origin)
	}
	gitT(t, sup.Dir, "remote", "set-url", "origin", "../origin.git")
	if url, _ := sup.RemoteURL(ctxT(t)); url != filepath.Join(sup.Dir, "../origin.git") {
		t.Fatalf("a relative path stays relative: %q", url)
	}
	gitT(t, sup.Dir, "remote", "set-url", "origin", "git@example.com:acme/widgets.git")
	if url, _ := sup.RemoteURL(ctxT(t)); url != "git@example.com:acme/widgets.git" {
		t.Fatalf("an scp-like URL was changed: %q", url)
	}
}

// What a pod pushes is fetched with the checks a local worker's clone
// gets: a candidate, an older pod's branch or a snapshot whose tree has
// an entry no git writes (".git/hooks/post-checkout", "..", ".") is
// refused whole — nothing of it in the clone, no ref written, never an
// outage to wait out — and a candidate sharing no history with the wave
// branch is refused as an orphan.
func TestWhatAPodPushedIsCheckedAsALocalWorkersClone(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	sup := newClone(t, origin)
	pod := runnerDir(t, origin)
	ctx := ctxT(t)
	const base = "refs/remotes/origin/main"
	main := gitT(t, pod, "rev-parse", "main")
	for i, name := range []string{".git", "..", "."} {
		forged := gittest.ForgedCommit(t, pod, main, name)
		branch := fmt.Sprintf("wave/x-i%d", i+1)
		fetches := map[string]func() (string, bool, error){
			CandidateRef(branch):     func() (string, bool, error) { return sup.FetchCandidate(ctx, CandidateRef(branch), branch, base) },
			"refs/heads/" + branch:   func() (string, bool, error) { return sup.FetchWorker(ctx, branch, base) },
			"refs/wave/salvage/1/a1": func() (string, bool, error) { return sup.FetchRef(ctx, "refs/wave/salvage/1/a1") },
		}
		for ref, fetch := range fetches {
			gitT(t, pod, "push", "-q", "-f", "origin", forged+":"+ref)
			_, ok, err := fetch()
			if !errors.Is(err, ErrRefusedObject) || ok {
				t.Fatalf("%s holding %q: ok %v, %v; want ErrRefusedObject", ref, name, ok, err)
			}
			if cause, transient := TransientCause(err); transient {
				t.Errorf("%s holding %q: taken for a transient failure (%s)", ref, name, cause)
			}
			if gittest.Try(sup.Dir, "cat-file", "-e", forged) == nil {
				t.Errorf("%s holding %q: the forged commit is in the clone", ref, name)
			}
			if got := gittest.Ref(sup.Dir, "refs/heads/"+branch); got != "" {
				t.Errorf("%s holding %q: the clone's %s was written (%s)", ref, name, branch, got)
			}
		}
	}
	orphan := gittest.CommitOn(t, pod, "alone", "", map[string]string{"a.txt": "alone"})
	gitT(t, pod, "push", "-q", "origin", orphan+":"+CandidateRef("wave/x-i9"))
	if _, ok, err := sup.FetchCandidate(ctx, CandidateRef("wave/x-i9"), "wave/x-i9", base); !errors.Is(err, ErrNoCommonHistory) || ok {
		t.Fatalf("an orphan candidate: ok %v, %v; want ErrNoCommonHistory", ok, err)
	}
	// The checks cost an honest pod nothing.
	honest := commitOn(t, pod, "wave/x-i8", "main", map[string]string{"b.txt": "b"})
	gitT(t, pod, "push", "-q", "origin", honest+":"+CandidateRef("wave/x-i8"))
	if sha, ok, err := sup.FetchCandidate(ctx, CandidateRef("wave/x-i8"), "wave/x-i8", base); err != nil || !ok || sha != honest {
		t.Fatalf("an honest candidate: %s %v %v, want %s", sha, ok, err, honest)
	}
}
