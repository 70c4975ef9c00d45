package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// ghCallBudget is the most GitHub requests a clean run may spend per
// issue (worker PRs on): claim, worker PR, merge, release and close.
const ghCallBudget = 5

// TestBacklogRunStaysWithinGitHubCallBudget holds a clean five-issue run
// on the fake GitHub to ghCallBudget requests per issue (the run's own
// handful — repository, listing, login, final PR — shared among them), so a busy
// backlog does not run into the rate limit for calls that learn nothing
// new. On failure it prints every request, in order, by endpoint.
func TestBacklogRunStaysWithinGitHubCallBudget(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	// forge's clock stands still, so a loaded machine's slow dispatch
	// does not age the listing past its use: the count is the design's.
	frozen := time.Now()
	g.newSource = func() forge.Source {
		o := g.srv.Options()
		o.Logger = slog.New(slog.NewTextHandler(g.logs, nil))
		o.Now = func() time.Time { return frozen }
		src, err := forge.NewGitHub(o)
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	const issues = 5
	for n := 1; n <= issues; n++ {
		g.ghIssue(n, fmt.Sprintf("Issue %d", n), fmt.Sprintf("Files: part%d/**", n))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := g.runCtx(ctx, nil, 1, 2, 3, 4, 5)
	if res.err != nil || res.ExitCode != exitcode.OK || res.Tally.Merged != issues {
		t.Fatalf("run: exit %d, tally %+v, %v\n%s", res.ExitCode, res.Tally, res.err, res.out)
	}
	reqs := g.srv.Requests()
	if got := float64(len(reqs)) / issues; got > ghCallBudget {
		t.Errorf("%.2f GitHub calls per issue, want at most %d:\n%s", got, ghCallBudget, requestReport(reqs))
	}
}

// requestReport is the request log as counts by route and then in order.
func requestReport(reqs []forgetest.Request) string {
	counts := map[string]int{}
	var b strings.Builder
	for i, r := range reqs {
		counts[r.Route]++
		fmt.Fprintf(&b, "  %3d %-16s %s %s?%s\n", i+1, r.Route, r.Method, r.Path, r.Query)
	}
	routes := make([]string, 0, len(counts))
	for r := range counts {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	var head strings.Builder
	for _, r := range routes {
		fmt.Fprintf(&head, "%s=%d ", r, counts[r])
	}
	return head.String() + "\n" + b.String()
}
