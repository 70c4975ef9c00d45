package forge_test

import (
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
)

// Each rate limit waited out is counted (the run's events carry the
// count, for the wave.github.rate_limit.waits metric); one given up on
// is not a wait.
func TestRateLimitWaitsAreCounted(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	s.AddIssue(backlog.Issue{Title: "one"})
	now := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	g, _ := newSource(t, s, func(o *forge.GitHubOptions) {
		o.Now = func() time.Time { return now }
		o.MaxWait = time.Hour
	})
	s.RateLimitNext(true, now.Add(time.Minute))
	if _, err := g.ListOpen(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	s.RateLimitNext(false, time.Now().Add(time.Second)) // Retry-After is counted from the real clock
	if _, err := g.ListOpen(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	s.RateLimitNext(true, now.Add(2*time.Hour)) // beyond MaxWait: an error, no wait
	if _, err := g.ListOpen(t.Context(), nil); err == nil {
		t.Fatal("a rate limit beyond MaxWait did not fail")
	}
	if n := g.RateLimitWaits(); n != 2 {
		t.Fatalf("RateLimitWaits() = %d, want 2 (one primary, one secondary)", n)
	}
}
