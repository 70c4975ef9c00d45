package forge_test

import (
	"sync"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
)

// stepClock is a clock a test moves by hand.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *stepClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestGetOfAnIssueListedMomentsAgoReadsOnlyItsComments(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	a := s.AddIssue(backlog.Issue{Title: "a", Body: "body a", Labels: []string{"ready"}})
	b := s.AddIssue(backlog.Issue{Title: "b"})
	s.AddComment(a, "alice", "context")
	clock := &stepClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	g, _ := newSource(t, s, func(o *forge.GitHubOptions) { o.Now = clock.now })
	ctx := t.Context()
	if _, err := g.ListOpen(ctx, nil); err != nil {
		t.Fatal(err)
	}
	is, err := g.Get(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if is.Title != "a" || is.Body != "body a" || len(is.Labels) != 1 || len(is.Comments) != 1 || is.Comments[0].Body != "context" {
		t.Errorf("Get(%d) = %+v, want the listed issue with its comment", a, is)
	}
	if n := s.Count(forgetest.RouteIssueGet); n != 0 {
		t.Errorf("issue reads = %d, want 0 right after the listing", n)
	}
	// Taken once: a second Get asks GitHub.
	if _, err := g.Get(ctx, a); err != nil {
		t.Fatal(err)
	}
	if n := s.Count(forgetest.RouteIssueGet); n != 1 {
		t.Errorf("issue reads = %d after a second Get, want 1", n)
	}
	// A listing that is no longer fresh is read again.
	clock.add(time.Minute)
	if _, err := g.Get(ctx, b); err != nil {
		t.Fatal(err)
	}
	if n := s.Count(forgetest.RouteIssueGet); n != 2 {
		t.Errorf("issue reads = %d after a Get a minute after the listing, want 2", n)
	}
}

func TestEnsureCommentRightAfterGetPostsOnceWithoutListingAgain(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	n := s.AddIssue(backlog.Issue{Title: "one"})
	g, _ := newSource(t, s, nil)
	ctx := t.Context()
	if _, err := g.Get(ctx, n); err != nil {
		t.Fatal(err)
	}
	const m = "<!-- wave-orchestrator:claim run=r issue=1 -->"
	if _, err := g.EnsureComment(ctx, n, m, "claimed\n\n"+m); err != nil {
		t.Fatal(err)
	}
	if got := s.Count(forgetest.RouteCommentsList); got != 1 {
		t.Errorf("comment lists = %d, want 1 (Get's)", got)
	}
	// The comments Get read are used once: the next ensure looks again
	// and finds its own comment.
	if _, err := g.EnsureComment(ctx, n, m, "claimed\n\n"+m); err != nil {
		t.Fatal(err)
	}
	if got := s.Count(forgetest.RouteCommentsList); got != 2 {
		t.Errorf("comment lists = %d, want 2", got)
	}
	if got := len(s.Comments(n)); got != 1 {
		t.Errorf("comments = %d, want 1", got)
	}
}

func TestEnsurePRCreatesWithoutListingFirst(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	g, _ := newSource(t, s, nil)
	if _, err := g.EnsurePR(t.Context(), "wave/w", "main", "t", "b"); err != nil {
		t.Fatal(err)
	}
	if n := s.Count(forgetest.RoutePullsList); n != 0 {
		t.Errorf("PR lists = %d, want 0", n)
	}
	// A second ensure is refused by GitHub (422), lists, and updates.
	pr, err := g.EnsurePR(t.Context(), "wave/w", "main", "t2", "b2")
	if err != nil {
		t.Fatal(err)
	}
	if prs := s.PRs(); len(prs) != 1 || prs[0].Title != "t2" || pr.Number != prs[0].Number {
		t.Errorf("PRs = %+v (ensured %+v), want one, retitled", prs, pr)
	}
}
