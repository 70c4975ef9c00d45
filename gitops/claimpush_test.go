package gitops

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitUntil polls cond until it holds or the deadline passes.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Claims asked for while a claim push runs go together in the next push,
// each under its own lease.
func TestClaimsAskedForDuringAPushGoTogetherInTheNext(t *testing.T) {
	origin := newOrigin(t)
	r := newClone(t, origin)
	// The hook holds the first push until origin/go exists.
	hook := "#!/bin/sh\necho push >> pushes\nwhile [ ! -e go ]; do sleep 0.01; done\ncat >/dev/null\n"
	writeFile(t, filepath.Join(origin, "hooks", "pre-receive"), hook)
	if err := os.Chmod(filepath.Join(origin, "hooks", "pre-receive"), 0o755); err != nil {
		t.Fatal(err)
	}
	pushes := func() int {
		b, _ := os.ReadFile(filepath.Join(origin, "pushes"))
		return strings.Count(string(b), "push")
	}
	type result struct {
		won bool
		c   ClaimInfo
		err error
	}
	results := make([]result, 7)
	var wg sync.WaitGroup
	claim := func(n int) {
		wg.Go(func() {
			won, c, err := r.Claim(ctxT(t), ClaimInfo{Issue: n, RunID: "run-a", Host: "h", PID: 1})
			results[n] = result{won, c, err}
		})
	}
	claim(1)
	waitUntil(t, "the first push at the hook", func() bool { return pushes() == 1 })
	for n := 2; n <= 6; n++ {
		claim(n)
	}
	waitUntil(t, "five claims queued", func() bool { return r.claimPushes.Waiting() == 5 })
	writeFile(t, filepath.Join(origin, "go"), "")
	wg.Wait()
	for n := 1; n <= 6; n++ {
		o := results[n]
		if o.err != nil || !o.won || originRef(t, origin, claimRef(n)) != o.c.SHA {
			t.Fatalf("#%d: %+v", n, o)
		}
	}
	if n := pushes(); n != 2 {
		t.Fatalf("%d pushes for 6 claims, want 2 (one, then the five asked for meanwhile)", n)
	}
}

// Two runs in two clones claim the same issues side by side, each run
// all of them at once: every issue is won by exactly one run, and the
// loser is told who holds it.
func TestSideBySideClaimsOfTwoRunsAreEachWonByOne(t *testing.T) {
	origin := newOrigin(t)
	repos := []*Repo{newClone(t, origin), newClone(t, origin)}
	const issues = 8
	type result struct {
		won    bool
		holder ClaimInfo
		err    error
	}
	results := make([][]result, 2)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range repos {
		results[i] = make([]result, issues+1)
		for n := 1; n <= issues; n++ {
			wg.Go(func() {
				<-start
				won, h, err := repos[i].Claim(ctxT(t), ClaimInfo{Issue: n, RunID: fmt.Sprintf("run-%d", i), Host: "h", PID: 1 + i})
				results[i][n] = result{won, h, err}
			})
		}
	}
	close(start)
	wg.Wait()
	for n := 1; n <= issues; n++ {
		a, b := results[0][n], results[1][n]
		if a.err != nil || b.err != nil {
			t.Fatalf("#%d: errors %v / %v", n, a.err, b.err)
		}
		if a.won == b.won {
			t.Fatalf("#%d: won by run-0 %v, run-1 %v; want exactly one", n, a.won, b.won)
		}
		w, l := a, b
		if b.won {
			w, l = b, a
		}
		if l.holder.SHA != w.holder.SHA || originRef(t, origin, claimRef(n)) != w.holder.SHA {
			t.Fatalf("#%d: loser told %+v, winner %+v", n, l.holder, w.holder)
		}
	}
}
