package gitops

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestClaimMessageRoundTrip(t *testing.T) {
	t.Parallel()
	lease := time.Date(2025, 3, 4, 5, 6, 7, 890, time.UTC)
	c := ClaimInfo{Issue: 12, RunID: "run-abc", Host: "box.local", PID: 4242, Lease: lease}
	msg, err := claimMessage(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseClaim(claimRef(12), 12, "abc123", msg)
	if err != nil {
		t.Fatal(err)
	}
	c.SHA = "abc123"
	if got != c {
		t.Fatalf("round trip: got %+v, want %+v", got, c)
	}
}

func TestClaimMessageRejectsControlCharacters(t *testing.T) {
	t.Parallel()
	for _, c := range []ClaimInfo{
		{Issue: 1, RunID: "run\nissue: 2"},
		{Issue: 1, Host: "h\x1b[31m"},
		{Issue: 0, RunID: "r"},
	} {
		if _, err := claimMessage(c); err == nil {
			t.Errorf("claimMessage(%+v) accepted", c)
		}
	}
}

func TestParseClaimGarbage(t *testing.T) {
	t.Parallel()
	ref := claimRef(7)
	for name, msg := range map[string]string{
		"empty":        "",
		"prose":        "just a commit\n\nwith words",
		"no issue":     "run: r\nhost: h\n",
		"wrong issue":  "issue: 8\n",
		"bad pid":      "issue: 7\npid: many\n",
		"bad lease":    "issue: 7\nlease: tomorrow\n",
		"bad issue no": "issue: seven\n",
	} {
		_, err := parseClaim(ref, 7, "deadbeef", msg)
		if !errors.Is(err, ErrBadClaim) || !strings.Contains(err.Error(), ref) {
			t.Errorf("%s: err = %v, want ErrBadClaim naming %s", name, err, ref)
		}
	}
}

// TestClaimRaceOneWinner: supervisors in separate clones race for the same
// issue, round after round; the remote lets exactly one create the ref and
// every loser learns who won.
func TestClaimRaceOneWinner(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	const clones, perClone, rounds = 3, 2, 6
	var repos []*Repo
	for range clones {
		repos = append(repos, newClone(t, origin))
	}
	type outcome struct {
		me     ClaimInfo
		won    bool
		holder ClaimInfo
		err    error
	}
	lease := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	for round := 1; round <= rounds; round++ {
		var wg sync.WaitGroup
		start := make(chan struct{})
		results := make([]outcome, clones*perClone)
		for i := range results {
			me := ClaimInfo{Issue: round, RunID: fmt.Sprintf("run-%d", i), Host: fmt.Sprintf("host-%d", i%clones), PID: 1000 + i, Lease: lease}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				won, holder, err := repos[i%clones].Claim(ctxT(t), me)
				results[i] = outcome{me, won, holder, err}
			}()
		}
		close(start)
		wg.Wait()
		var winners []outcome
		for _, o := range results {
			if o.err != nil {
				t.Fatalf("round %d: %s: %v", round, o.me.RunID, o.err)
			}
			if o.won {
				winners = append(winners, o)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: %d winners, want exactly 1: %+v", round, len(winners), winners)
		}
		w := winners[0]
		if got := originRef(t, origin, claimRef(round)); got != w.holder.SHA {
			t.Fatalf("round %d: origin claim at %s, winner's commit %s", round, got, w.holder.SHA)
		}
		for _, o := range results {
			if o.won {
				continue
			}
			h := o.holder
			if h.SHA != w.holder.SHA || h.RunID != w.me.RunID || h.Host != w.me.Host || h.PID != w.me.PID || !h.Lease.Equal(w.me.Lease) || h.Issue != round {
				t.Fatalf("round %d: loser %s got holder %+v, winner was %+v", round, o.me.RunID, h, w.holder)
			}
		}
	}
}

func TestClaimAgainBySameHolderIsWon(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	c := ClaimInfo{Issue: 3, RunID: "r1", Host: "h", PID: 1, Lease: time.Unix(1700000000, 0)}
	won, first, err := r.Claim(ctxT(t), c)
	if err != nil || !won {
		t.Fatalf("first claim: won=%v err=%v", won, err)
	}
	other := ClaimInfo{Issue: 3, RunID: "r2", Host: "h2", PID: 2}
	won, holder, err := r.Claim(ctxT(t), other)
	if err != nil || won || holder.RunID != "r1" || holder.SHA != first.SHA {
		t.Fatalf("second claim: won=%v holder=%+v err=%v", won, holder, err)
	}
}

func TestTakeOverUnderLease(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	a, b := newClone(t, origin), newClone(t, origin)
	_, stale, err := a.Claim(ctxT(t), ClaimInfo{Issue: 5, RunID: "dead", Host: "h", PID: 1, Lease: time.Unix(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	// b takes the stale claim over; a renewing from the same old sha loses.
	won, mine, err := b.TakeOver(ctxT(t), stale.SHA, ClaimInfo{Issue: 5, RunID: "b", Host: "hb", PID: 2})
	if err != nil || !won || mine.SHA == "" || mine.SHA == stale.SHA {
		t.Fatalf("take over: won=%v info=%+v err=%v", won, mine, err)
	}
	won, holder, err := a.TakeOver(ctxT(t), stale.SHA, ClaimInfo{Issue: 5, RunID: "dead", Host: "h", PID: 1})
	if err != nil || won || holder.RunID != "b" || holder.SHA != mine.SHA {
		t.Fatalf("late take over: won=%v holder=%+v err=%v", won, holder, err)
	}
	// b renews its own lease.
	won, renewed, err := b.TakeOver(ctxT(t), mine.SHA, ClaimInfo{Issue: 5, RunID: "b", Host: "hb", PID: 2, Lease: time.Now().Add(time.Hour)})
	if err != nil || !won {
		t.Fatalf("renew: won=%v err=%v", won, err)
	}
	if got := originRef(t, origin, claimRef(5)); got != renewed.SHA {
		t.Fatalf("origin at %s, renewed %s", got, renewed.SHA)
	}
	// Taking over a claim that no longer exists: not won, no holder.
	if err := b.Release(ctxT(t), 5, renewed.SHA); err != nil {
		t.Fatal(err)
	}
	won, holder, err = a.TakeOver(ctxT(t), renewed.SHA, ClaimInfo{Issue: 5, RunID: "a"})
	if err != nil || won || holder.SHA != "" {
		t.Fatalf("take over released claim: won=%v holder=%+v err=%v", won, holder, err)
	}
}

func TestReleaseUnderLease(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	a, b := newClone(t, origin), newClone(t, origin)
	_, first, err := a.Claim(ctxT(t), ClaimInfo{Issue: 9, RunID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	_, second, err := b.TakeOver(ctxT(t), first.SHA, ClaimInfo{Issue: 9, RunID: "b"})
	if err != nil {
		t.Fatal(err)
	}
	// a's release is stale: b's claim must survive it.
	if err := a.Release(ctxT(t), 9, first.SHA); !errors.Is(err, ErrRejected) {
		t.Fatalf("stale release: err = %v, want ErrRejected", err)
	}
	if originRef(t, origin, claimRef(9)) != second.SHA {
		t.Fatal("stale release removed someone else's claim")
	}
	if err := b.Release(ctxT(t), 9, second.SHA); err != nil {
		t.Fatal(err)
	}
	if originRef(t, origin, claimRef(9)) != "" {
		t.Fatal("claim still on origin after release")
	}
	if err := b.Release(ctxT(t), 9, second.SHA); err != nil {
		t.Fatalf("release of an absent claim: %v", err)
	}
	if _, ok, err := a.ReadClaim(ctxT(t), 9); ok || err != nil {
		t.Fatalf("read released claim: ok=%v err=%v", ok, err)
	}
}

func TestReadAndListClaims(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	a, b := newClone(t, origin), newClone(t, origin)
	for _, n := range []int{10, 2, 33} {
		if won, _, err := a.Claim(ctxT(t), ClaimInfo{Issue: n, RunID: fmt.Sprintf("r%d", n), Host: "h", PID: n}); err != nil || !won {
			t.Fatalf("claim %d: won=%v err=%v", n, won, err)
		}
	}
	got, err := b.ListClaims(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var issues []int
	for _, c := range got {
		issues = append(issues, c.Issue)
		if c.RunID != fmt.Sprintf("r%d", c.Issue) || c.PID != c.Issue || c.SHA != originRef(t, origin, claimRef(c.Issue)) {
			t.Errorf("claim %+v does not match what was claimed", c)
		}
	}
	if fmt.Sprint(issues) != "[2 10 33]" {
		t.Fatalf("issues = %v", issues)
	}
	// A released claim disappears from the list of a clone that saw it.
	if err := a.Release(ctxT(t), 10, got[1].SHA); err != nil {
		t.Fatal(err)
	}
	got, err = b.ListClaims(ctxT(t))
	if err != nil || len(got) != 2 {
		t.Fatalf("after release: %+v, %v", got, err)
	}
}

// TestGarbageClaimNamesRef: a wave-claims ref someone pushed by hand is
// reported with its name, and does not hide the valid claims.
func TestGarbageClaimNamesRef(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	a, b := newClone(t, origin), newClone(t, origin)
	if _, _, err := a.Claim(ctxT(t), ClaimInfo{Issue: 1, RunID: "ok"}); err != nil {
		t.Fatal(err)
	}
	junk := commitOn(t, a.Dir, "junk", "HEAD", map[string]string{"x": "y"})
	gitT(t, a.Dir, "push", "-q", "origin", junk+":refs/heads/wave-claims/4")
	gitT(t, a.Dir, "push", "-q", "origin", junk+":refs/heads/wave-claims/notanumber")

	_, ok, err := b.ReadClaim(ctxT(t), 4)
	if ok || !errors.Is(err, ErrBadClaim) || !strings.Contains(err.Error(), "refs/heads/wave-claims/4") {
		t.Fatalf("ReadClaim(4): ok=%v err=%v", ok, err)
	}
	list, err := b.ListClaims(ctxT(t))
	if !errors.Is(err, ErrBadClaim) || !strings.Contains(err.Error(), "wave-claims/4") || !strings.Contains(err.Error(), "wave-claims/notanumber") {
		t.Fatalf("ListClaims err = %v", err)
	}
	if len(list) != 1 || list[0].RunID != "ok" {
		t.Fatalf("ListClaims kept %+v, want the one valid claim", list)
	}
	// The issue stays unclaimable: the garbage ref is a holder, not a gap.
	won, _, err := b.Claim(ctxT(t), ClaimInfo{Issue: 4, RunID: "b"})
	if won || !errors.Is(err, ErrBadClaim) {
		t.Fatalf("claim over garbage: won=%v err=%v", won, err)
	}
}

// A claim ref deleted behind the holder's back is ours to create again on
// renewal; a claim someone else holds is never replaced by it.
func TestRenewRecreatesADeletedClaimButNeverTakesAnothers(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	a, b := newClone(t, origin), newClone(t, origin)
	ctx := ctxT(t)
	_, mine, err := a.Claim(ctx, ClaimInfo{Issue: 4, RunID: "a", Host: "ha", PID: 1})
	if err != nil {
		t.Fatal(err)
	}
	gitT(t, origin, "update-ref", "-d", claimRef(4)) // a person cleans up refs
	got, err := a.Renew(ctx, mine.SHA, ClaimInfo{Issue: 4, RunID: "a", Host: "ha", PID: 1, Lease: time.Now().Add(time.Hour)})
	if err != nil || !got.Won || !got.Recreated || got.Holder.SHA == "" {
		t.Fatalf("renew of a deleted claim = %+v, %v; want it re-created", got, err)
	}
	if at := originRef(t, origin, claimRef(4)); at != got.Holder.SHA {
		t.Fatalf("origin's claim at %q, want the re-created %s", at, got.Holder.SHA)
	}
	heads, err := a.ClaimHeads(ctx)
	if err != nil || len(heads) != 1 || heads[4] != got.Holder.SHA {
		t.Fatalf("ClaimHeads = %v, %v; want #4 at %s", heads, err, got.Holder.SHA)
	}
	// Someone else takes it (the ref deleted, then their claim won).
	gitT(t, origin, "update-ref", "-d", claimRef(4))
	if won, _, err := b.Claim(ctx, ClaimInfo{Issue: 4, RunID: "b", Host: "hb", PID: 2}); err != nil || !won {
		t.Fatalf("b's claim: %v %v", won, err)
	}
	lost, err := a.Renew(ctx, got.Holder.SHA, ClaimInfo{Issue: 4, RunID: "a", Host: "ha", PID: 1})
	if err != nil || lost.Won || lost.Recreated || lost.Holder.RunID != "b" {
		t.Fatalf("renew of a claim b holds = %+v, %v; want lost to b", lost, err)
	}
	if c, _, _ := a.ReadClaim(ctx, 4); c.RunID != "b" {
		t.Fatalf("b's claim was replaced: %+v", c)
	}
	if heads, err := a.ClaimHeads(ctx); err != nil || heads[4] == got.Holder.SHA {
		t.Fatalf("ClaimHeads = %v, %v; want #4 at b's commit", heads, err)
	}
}
