package gitops

import (
	"sync"
	"testing"
)

func TestEnsureWaveBranch(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

func TestSafeDeleteOnlyAncestors(t *testing.T) {
	t.Parallel()
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
