package supervisor

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
)

// TestTwoSupervisorsRaceForTheSameIssues runs two supervisors on two
// clones of one origin (two machines, as far as claims go) against one
// GitHub, both told to run the same issues at the same moment, round
// after round: each issue is claimed, worked and merged by exactly one
// of them, and the other leaves it with the reason "claimed".
func TestTwoSupervisorsRaceForTheSameIssues(t *testing.T) {
	t.Parallel()
	// A few rounds by default; WAVE_RACE_ROUNDS=24 for a soak.
	rounds := 4
	if v, err := strconv.Atoi(os.Getenv("WAVE_RACE_ROUNDS")); err == nil && v > 0 {
		rounds = v
	} else if testing.Short() {
		rounds = 2
	}
	g := newGHFixture(t)
	a, b := g.fixture, g.otherClone("other")
	atClaim, atPlan := 0, 0
	for round := range rounds {
		issues := []int{3*round + 1, 3*round + 2, 3*round + 3}
		for _, n := range issues {
			g.ghIssue(n, fmt.Sprintf("Round %d issue %d", round, n), fmt.Sprintf("Files: r%d/i%d/**", round, n))
		}
		slug := func(o *Options) { o.Slug = fmt.Sprintf("r%d", round) }
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		var wg sync.WaitGroup
		results := make([]result, 2)
		start := make(chan struct{})
		for i, f := range []*fixture{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i] = f.runCtx(ctx, slug, issues...)
			}()
		}
		close(start)
		wg.Wait()
		cancel()
		runs := make([]*backlog.Run, 2)
		for i, res := range results {
			if res.err != nil {
				t.Fatalf("round %d: supervisor %d: %v\n%s", round, i, res.err, res.out)
			}
			runs[i], _, _ = runlog.Read(res.Dir)
		}
		if runs[0].Info.ID == runs[1].Info.ID {
			t.Errorf("round %d: both supervisors have run id %s", round, runs[0].Info.ID)
		}
		for _, n := range issues {
			winners, losers := 0, 0
			for _, r := range runs {
				if is := r.Issues[n]; is != nil {
					winners++
					if is.State != backlog.StateMerged {
						t.Errorf("round %d: #%d is %s in run %s, want merged", round, n, is.State, r.Info.ID)
					}
				} else if how := lostClaim(r, n); how != "" {
					losers++
					if how == "claim" {
						atClaim++
					} else {
						atPlan++
					}
				}
			}
			if winners != 1 || losers != 1 {
				t.Errorf("round %d: #%d taken by %d supervisors and left as claimed by %d; want 1 and 1\nA:\n%s\nB:\n%s",
					round, n, winners, losers, results[0].out, results[1].out)
			}
			if c := g.markers(n, "claim"); c != 1 {
				t.Errorf("round %d: #%d has %d claim comments, want 1", round, n, c)
			}
		}
		if t.Failed() {
			return
		}
	}
	g.noDuplicateWrites(t)
	t.Logf("%d rounds: the loser lost %d issues at the claim ref and saw %d already claimed when planning", rounds, atClaim, atPlan)
}

// lostClaim says where run r left issue n because another run holds it:
// "claim" (its compare-and-swap lost), "plan" (already claimed when it
// planned) or "" (it did not).
func lostClaim(r *backlog.Run, n int) string {
	for _, d := range r.Dropped {
		if d.Issue == n && d.Reason == backlog.ReasonClaimed {
			return "claim"
		}
	}
	if r.LastPlan != nil {
		for _, s := range r.LastPlan.Skipped {
			if s.Issue == n && s.Reason == backlog.ReasonClaimed {
				return "plan"
			}
		}
	}
	return ""
}
