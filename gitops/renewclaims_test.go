package gitops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pushLog installs a pre-receive hook on the bare origin that counts the
// pushes it receives (and declines the next one while origin/decline
// exists, removing it); it returns the count's reader.
func pushLog(t *testing.T, origin string) func() int {
	t.Helper()
	hook := "#!/bin/sh\necho push >> pushes\nif [ -e decline ]; then rm -f decline; exit 1; fi\ncat >/dev/null\n"
	writeFile(t, filepath.Join(origin, "hooks", "pre-receive"), hook)
	if err := os.Chmod(filepath.Join(origin, "hooks", "pre-receive"), 0o755); err != nil {
		t.Fatal(err)
	}
	return func() int {
		b, _ := os.ReadFile(filepath.Join(origin, "pushes"))
		return strings.Count(string(b), "push")
	}
}

// claimAll claims issues 1..n for run in r and returns the won claims.
func claimAll(t *testing.T, r *Repo, run string, n int) []ClaimInfo {
	t.Helper()
	var out []ClaimInfo
	for i := 1; i <= n; i++ {
		won, c, err := r.Claim(ctxT(t), ClaimInfo{Issue: i, RunID: run, Host: "h", PID: 1, Lease: time.Now().Add(time.Hour).UTC()})
		if err != nil || !won {
			t.Fatalf("claim #%d: won=%v err=%v", i, won, err)
		}
		out = append(out, c)
	}
	return out
}

func renewReqs(held []ClaimInfo, lease time.Duration) []RenewRequest {
	var reqs []RenewRequest
	for _, c := range held {
		reqs = append(reqs, RenewRequest{Old: c.SHA, Claim: ClaimInfo{Issue: c.Issue, RunID: c.RunID, Host: c.Host, PID: c.PID,
			Lease: time.Now().Add(lease).UTC()}})
	}
	return reqs
}

func TestRenewingManyClaimsMovesThemAllInOnePush(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	r := newClone(t, origin)
	held := claimAll(t, r, "run-a", 5)
	pushes := pushLog(t, origin)
	got, err := r.RenewClaims(ctxT(t), renewReqs(held, 30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range held {
		o := got[c.Issue]
		if o.Err != nil || !o.Won || o.Holder.SHA == c.SHA || o.Holder.RunID != "run-a" {
			t.Fatalf("#%d: %+v, want won with a new commit", c.Issue, o)
		}
		if at := originRef(t, origin, claimRef(c.Issue)); at != o.Holder.SHA {
			t.Fatalf("#%d: origin at %s, renewal says %s", c.Issue, at, o.Holder.SHA)
		}
	}
	if n := pushes(); n != 1 {
		t.Fatalf("%d pushes for 5 claims, want 1", n)
	}
}

// A claim another supervisor took over meanwhile is never overwritten;
// the batch is refused whole and pushed again without it, so the other
// claims are renewed all the same.
func TestARenewalLeavesAClaimAnotherRunTookAndRenewsTheRest(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	r, other := newClone(t, origin), newClone(t, origin)
	held := claimAll(t, r, "run-a", 3)
	won, theirs, err := other.TakeOver(ctxT(t), held[1].SHA, ClaimInfo{Issue: 2, RunID: "run-b", Host: "h2", PID: 2})
	if err != nil || !won {
		t.Fatalf("take over: won=%v err=%v", won, err)
	}
	got, err := r.RenewClaims(ctxT(t), renewReqs(held, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if o := got[2]; o.Won || o.Holder.RunID != "run-b" || o.Holder.SHA != theirs.SHA {
		t.Fatalf("#2: %+v, want lost to run-b", o)
	}
	if at := originRef(t, origin, claimRef(2)); at != theirs.SHA {
		t.Fatalf("#2 on origin at %s, want run-b's %s", at, theirs.SHA)
	}
	for _, n := range []int{1, 3} {
		if o := got[n]; !o.Won || originRef(t, origin, claimRef(n)) != o.Holder.SHA {
			t.Fatalf("#%d: %+v, want renewed", n, o)
		}
	}
}

// A supervisor killed after the push but before recording it runs the
// renewal again: origin already holds it, so nothing is pushed twice.
func TestARenewalRunAgainAfterAKillIsNotPushedTwice(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	r := newClone(t, origin)
	held := claimAll(t, r, "run-a", 3)
	pushes := pushLog(t, origin)
	first, err := r.RenewClaims(ctxT(t), renewReqs(held, 30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.RenewClaims(ctxT(t), renewReqs(held, 30*24*time.Hour)) // the old commits: never recorded
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range held {
		if a, b := first[c.Issue], again[c.Issue]; !b.Won || b.Holder.SHA != a.Holder.SHA {
			t.Fatalf("#%d: again %+v, first %+v", c.Issue, b, a)
		}
	}
	if n := pushes(); n != 1 {
		t.Fatalf("%d pushes, want 1", n)
	}
}

// A renewal whose push did not go through (killed, or refused by a hook)
// pushes the commits it recorded when run again, not new ones.
func TestARenewalCutShortBeforeItsPushPushesWhatItRecorded(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	r := newClone(t, origin)
	held := claimAll(t, r, "run-a", 2)
	pushLog(t, origin)
	writeFile(t, filepath.Join(origin, "decline"), "")
	if _, err := r.RenewClaims(ctxT(t), renewReqs(held, time.Hour)); err == nil {
		t.Fatal("a declined push reported no error")
	}
	for _, c := range held {
		if at := originRef(t, origin, claimRef(c.Issue)); at != c.SHA {
			t.Fatalf("#%d moved to %s on a declined push", c.Issue, at)
		}
	}
	recorded := map[int]string{}
	for _, c := range held {
		recorded[c.Issue] = gitT(t, r.Dir, "rev-parse", renewIntentRef(c.Issue))
	}
	got, err := r.RenewClaims(ctxT(t), renewReqs(held, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range held {
		if o := got[c.Issue]; !o.Won || o.Holder.SHA != strings.TrimSpace(recorded[c.Issue]) {
			t.Fatalf("#%d: %+v, want the recorded %s", c.Issue, o, recorded[c.Issue])
		}
	}
}

func TestARenewalCreatesAGoneClaimAgainAndTakesUpItsOwnUnrecordedOne(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	r := newClone(t, origin)
	held := claimAll(t, r, "run-a", 2)
	gitT(t, origin, "update-ref", "-d", claimRef(1))
	// #2 renewed by a life of this run whose record was lost.
	lost, err := r.Renew(ctxT(t), held[1].SHA, ClaimInfo{Issue: 2, RunID: "run-a", Host: "h", PID: 9, Lease: time.Now().Add(time.Hour)})
	if err != nil || !lost.Won {
		t.Fatalf("renew #2: %+v %v", lost, err)
	}
	got, err := r.RenewClaims(ctxT(t), renewReqs(held, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if o := got[1]; !o.Won || !o.Recreated || originRef(t, origin, claimRef(1)) != o.Holder.SHA {
		t.Fatalf("#1: %+v, want created again", o)
	}
	if o := got[2]; !o.Won || o.Holder.SHA == lost.Holder.SHA || originRef(t, origin, claimRef(2)) != o.Holder.SHA {
		t.Fatalf("#2: %+v, want renewed from %s", o, lost.Holder.SHA)
	}
}

func TestARenewalFallsBackToOnePushPerClaimWhenOriginRefusesAtomicPushes(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	r := newClone(t, origin)
	held := claimAll(t, r, "run-a", 3)
	gitT(t, origin, "config", "receive.advertiseAtomic", "false")
	pushes := pushLog(t, origin)
	got, err := r.RenewClaims(ctxT(t), renewReqs(held, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range held {
		if o := got[c.Issue]; !o.Won || originRef(t, origin, claimRef(c.Issue)) != o.Holder.SHA {
			t.Fatalf("#%d: %+v, want renewed", c.Issue, o)
		}
	}
	if n := pushes(); n != 3 {
		t.Fatalf("%d pushes, want one per claim (3)", n)
	}
}

func TestARenewalReportsARefThatHoldsNoClaim(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	r := newClone(t, origin)
	held := claimAll(t, r, "run-a", 1)
	main := strings.TrimSpace(gitT(t, origin, "rev-parse", "refs/heads/main"))
	gitT(t, origin, "update-ref", claimRef(1), main)
	got, err := r.RenewClaims(ctxT(t), renewReqs(held, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if o := got[1]; o.Won || o.Err == nil {
		t.Fatalf("#1: %+v, want ErrBadClaim", o)
	}
	if at := originRef(t, origin, claimRef(1)); at != main {
		t.Fatalf("#1 overwritten: %s", at)
	}
}

// A claim taken by another supervisor between the batch's look and its
// push: origin refuses the whole atomic push, nothing of it lands, and the
// batch is looked at and pushed again without that claim.
func TestARenewalRefusedWholeForAClaimTakenMidPushIsRetriedWithoutIt(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	r := newClone(t, origin)
	held := claimAll(t, r, "run-a", 3)
	// run-b's claim of #2, made on origin; the hook moves #2 to it while
	// the first push waits for its ref updates.
	tree := strings.TrimSpace(gitT(t, origin, "mktree"))
	theirs := strings.TrimSpace(gitT(t, origin, "-c", "user.name=b", "-c", "user.email=b@b", "commit-tree", tree, "-m",
		"wave-orchestrator claim for issue #2\n\nissue: 2\nrun: run-b\nhost: h2\npid: 2\n"))
	hook := "#!/bin/sh\necho push >> pushes\ncat >/dev/null\nif [ -e steal ]; then rm -f steal; env -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES git update-ref " + claimRef(2) + " " + theirs + "; fi\n"
	writeFile(t, filepath.Join(origin, "hooks", "pre-receive"), hook)
	if err := os.Chmod(filepath.Join(origin, "hooks", "pre-receive"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(origin, "steal"), "")
	got, err := r.RenewClaims(ctxT(t), renewReqs(held, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if o := got[2]; o.Won || o.Holder.RunID != "run-b" || originRef(t, origin, claimRef(2)) != theirs {
		t.Fatalf("#2: %+v, origin at %s; want run-b's %s kept", o, originRef(t, origin, claimRef(2)), theirs)
	}
	for _, n := range []int{1, 3} {
		if o := got[n]; !o.Won || o.Holder.SHA == held[n-1].SHA || originRef(t, origin, claimRef(n)) != o.Holder.SHA {
			t.Fatalf("#%d: %+v, want renewed on the second push", n, o)
		}
	}
	b, _ := os.ReadFile(filepath.Join(origin, "pushes"))
	if n := strings.Count(string(b), "push"); n != 2 {
		t.Fatalf("%d pushes, want 2 (refused whole, then the rest)", n)
	}
}
