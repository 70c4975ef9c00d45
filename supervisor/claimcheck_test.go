package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// claimRun is a supervisor run in the background on f, with a clock the
// test can move forward and workers that wait for a gate file.
type claimRun struct {
	out   *syncBuffer
	shift atomic.Int64
	gate  string
	done  chan result
}

func startClaimRun(t *testing.T, f *fixture, issues ...int) *claimRun {
	t.Helper()
	return startClaimRunAt(t, f, 0, issues...)
}

// startClaimRunAt is startClaimRun with the run's clock shift from the start.
func startClaimRunAt(t *testing.T, f *fixture, shift time.Duration, issues ...int) *claimRun {
	t.Helper()
	c := &claimRun{out: &syncBuffer{}, done: make(chan result, 1)}
	c.shift.Store(int64(shift))
	o := f.options(t.Context(), c.out, issues...)
	o.Now = func() time.Time { return time.Now().Add(time.Duration(c.shift.Load())) }
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		res, err := s.Run(t.Context())
		c.done <- result{Result: res, out: c.out.String(), err: err}
	}()
	return c
}

// later moves the run's clock past the next look at its claims.
func (c *claimRun) later() { c.shift.Add(int64(claimCheckEvery + time.Second)) }

func (c *claimRun) open(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(c.gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// claimFixture: workers wait at the gate; silence is not judged within
// the minutes the test moves the clock.
func claimFixture(t *testing.T) *fixture {
	f := newFixture(t)
	f.config = strings.Replace(baseConfig, "silenceSeconds: 30", "silenceSeconds: 3600", 1)
	return f
}

// A supervisor whose clock is two days behind still writes claims that
// other supervisors, on their own clocks, see as held: the lease on
// origin comes from the real clock, not from the run's injected one.
func TestAClaimsLeaseOnOriginIsOnTheRealClock(t *testing.T) {
	t.Parallel()
	f := claimFixture(t)
	gate := filepath.Join(t.TempDir(), "go")
	f.issue(1, "Held", "Files: a/**\n\nlocal-agent: wait="+gate)
	c := startClaimRunAt(t, f, -48*time.Hour, 1)
	c.gate = gate
	waitFor(t, "the worker", func() bool { return strings.Contains(c.out.String(), "worker started") })
	repo, err := gitops.Open(t.Context(), f.root, gitops.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cl, ok, err := repo.ReadClaim(t.Context(), 1)
	if err != nil || !ok {
		t.Fatalf("claim of #1: found %v, %v", ok, err)
	}
	if !cl.Lease.After(time.Now()) {
		t.Errorf("#1's lease on origin is %s, already past on the real clock: the run's own clock leaked into it", cl.Lease)
	}
	c.open(t)
	if res := <-c.done; res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("exit %d err %v; output:\n%s", res.ExitCode, res.err, res.out)
	}
}

// A person (or a tool) deletes the claim ref of an issue mid-run: the
// run claims it again at its next look, and again right before the
// merge; the issue merges and ends the run still claimed by this run.
func TestDeletedClaimIsCreatedAgainAndTheIssueMergesWithIt(t *testing.T) {
	t.Parallel()
	f := claimFixture(t)
	gate := filepath.Join(t.TempDir(), "go")
	f.issue(1, "Kept", "Files: a/**\n\nlocal-agent: wait="+gate)
	c := startClaimRun(t, f, 1)
	c.gate = gate
	waitFor(t, "the worker", func() bool { return strings.Contains(c.out.String(), "worker started") })
	ref := "refs/heads/wave-claims/1"
	git(t, f.origin, "update-ref", "-d", ref)
	c.later()
	waitFor(t, "the claim created again", func() bool {
		return strings.Contains(c.out.String(), "#1: claim created again") && originRefOf(t, f.origin, ref) != ""
	})
	// Deleted again just before the worker finishes: the merge looks first.
	git(t, f.origin, "update-ref", "-d", ref)
	c.open(t)
	res := <-c.done
	t.Logf("supervisor output:\n%s", res.out)
	if res.err != nil || res.ExitCode != exitcode.OK || res.Tally.Merged != 1 {
		t.Fatalf("exit %d tally %+v err %v; want #1 merged", res.ExitCode, res.Tally, res.err)
	}
	if n := strings.Count(res.out, "#1: claim created again"); n < 2 {
		t.Errorf("the claim was created again %d time(s), want at the look and before the merge", n)
	}
	before := 0 // claims recorded anew before the merge
	for _, ev := range f.events(res.Dir) {
		if ev.Kind == backlog.EvMerged && ev.Issue == 1 {
			break
		}
		if ev.Kind == backlog.EvClaimRenewed && ev.Issue == 1 {
			before++
		}
	}
	if before != 2 {
		t.Errorf("%d claims of #1 recorded before its merge, want 2 (one per deletion)", before)
	}
	repo, err := gitops.Open(t.Context(), f.root, gitops.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cl, ok, err := repo.ReadClaim(t.Context(), 1)
	if err != nil || !ok || cl.RunID != res.RunID {
		t.Fatalf("after the run #1's claim is %+v (found %v, %v), want this run's", cl, ok, err)
	}
}

// Another run's claim replaces this run's mid-run: that issue's worker is
// stopped, the issue is recorded as lost to the other holder and never
// merged; the rest of the run goes on and merges.
func TestClaimTakenByAnotherRunStopsOnlyThatIssue(t *testing.T) {
	t.Parallel()
	f := claimFixture(t)
	gate := filepath.Join(t.TempDir(), "go")
	f.issue(1, "Taken", "Files: a/**\n\nlocal-agent: wait="+gate)
	f.issue(2, "Kept", "Files: b/**\n\nlocal-agent: wait="+gate)
	c := startClaimRun(t, f, 1, 2)
	c.gate = gate
	waitFor(t, "both workers", func() bool { return strings.Count(c.out.String(), "worker started") == 2 })
	other := f.clone("other")
	repo, err := gitops.Open(t.Context(), other.root, gitops.Options{})
	if err != nil {
		t.Fatal(err)
	}
	git(t, f.origin, "update-ref", "-d", "refs/heads/wave-claims/1")
	if won, _, err := repo.Claim(t.Context(), gitops.ClaimInfo{Issue: 1, RunID: "other-run", Host: "elsewhere", PID: 1,
		Lease: time.Now().Add(time.Hour)}); !won || err != nil {
		t.Fatalf("the other run's claim: %v %v", won, err)
	}
	c.later()
	waitFor(t, "#1 given up", func() bool {
		return strings.Contains(c.out.String(), "#1: its claim on origin is held by run other-run on elsewhere now")
	})
	c.open(t)
	res := <-c.done
	t.Logf("supervisor output:\n%s", res.out)
	if res.err != nil {
		t.Fatal(res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	if is := r.Issues[1]; is.State != backlog.StateFailed || !strings.Contains(is.Detail, "other-run") {
		t.Errorf("#1 %s %q, want failed: claimed elsewhere by other-run", is.State, is.Detail)
	}
	if is := r.Issues[2]; is.State != backlog.StateMerged {
		t.Errorf("#2 %s, want merged", is.State)
	}
	if _, ok := f.originFile(r.Info.WaveBranch, "backlog-work/issue-1.md"); ok {
		t.Errorf("#1's work reached the wave branch although its claim was lost")
	}
	if cl, _, _ := repo.ReadClaim(t.Context(), 1); cl.RunID != "other-run" {
		t.Errorf("the other run's claim was released or replaced: %+v", cl)
	}
}

func originRefOf(t *testing.T, origin, ref string) string {
	t.Helper()
	return gittest.Ref(origin, ref)
}
