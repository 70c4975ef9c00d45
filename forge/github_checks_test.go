package forge_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
)

// TestAnUnchangedReadCostsNoRateLimit: a read repeated while nothing
// changed is a conditional request GitHub answers 304 (not counted by
// its rate limit), and the caller still gets the whole answer; once
// something changed, the next read gets the new answer.
func TestAnUnchangedReadCostsNoRateLimit(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	for n := 1; n <= 150; n++ { // two pages
		s.AddIssue(backlog.Issue{Number: n, Title: "t"})
	}
	g, _ := newSource(t, s, nil)
	for round := 1; round <= 3; round++ {
		got, err := g.ListOpen(t.Context(), nil)
		if err != nil || len(got) != 150 {
			t.Fatalf("round %d: %d issues, %v", round, len(got), err)
		}
	}
	if s.Total() != 6 || s.Counted() != 2 || g.NotModified() != 4 || g.Calls() != 6 {
		t.Fatalf("3 listings of 2 pages: %d requests, %d counted, %d answered 304 as forge saw it; want 6, 2, 4",
			s.Total(), s.Counted(), g.NotModified())
	}
	s.AddIssue(backlog.Issue{Number: 151, Title: "new"})
	got, err := g.ListOpen(t.Context(), nil)
	if err != nil || len(got) != 151 {
		t.Fatalf("after a new issue: %d issues, %v; want 151", len(got), err)
	}
	if s.Counted() != 3 {
		t.Errorf("%d requests counted, want 3: only the second page changed", s.Counted())
	}
}

func TestChecksReadsCheckRunsAndStatusesByName(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	s.SetChecks(
		forgetest.Check{Name: "build"},
		forgetest.Check{Name: "test", Conclusion: "timed_out", Title: "slow", Summary: "ran out of time", URL: "https://ci/1"},
		forgetest.Check{Name: "lint", Conclusion: "neutral"},
		forgetest.Check{Name: "e2e", PendingPolls: 5},
		forgetest.Check{Name: "legacy", Status: true, Conclusion: "error", Summary: "exploded", URL: "https://old-ci/2"},
	)
	g, _ := newSource(t, s, nil)
	got, err := g.Checks(t.Context(), "abc123", []string{"build", "test"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Count(forgetest.RouteCombinedStatus) != 0 {
		t.Error("statuses were read although every wanted check is a check run")
	}
	byName := map[string]backlog.Check{}
	for _, c := range got {
		byName[c.Name] = c
	}
	want := map[string]backlog.Check{
		"build": {Name: "build", Kind: backlog.CheckRun, State: backlog.CheckSuccess, Conclusion: "success"},
		"test": {Name: "test", Kind: backlog.CheckRun, State: backlog.CheckFailure, Conclusion: "timed_out",
			Title: "slow", Summary: "ran out of time", URL: "https://ci/1"},
		"lint": {Name: "lint", Kind: backlog.CheckRun, State: backlog.CheckSuccess, Conclusion: "neutral"},
		"e2e":  {Name: "e2e", Kind: backlog.CheckRun, State: backlog.CheckPending, Conclusion: "in_progress"},
	}
	for name, w := range want {
		if byName[name] != w {
			t.Errorf("%s: %+v, want %+v", name, byName[name], w)
		}
	}
	got, err = g.Checks(t.Context(), "abc123", []string{"build", "legacy"})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(got, func(c backlog.Check) bool { return c.Name == "legacy" })
	if i < 0 || got[i] != (backlog.Check{Name: "legacy", Kind: backlog.CheckStatus, State: backlog.CheckFailure,
		Conclusion: "error", Summary: "exploded", URL: "https://old-ci/2"}) {
		t.Errorf("the commit status: %+v", got)
	}
}

func TestRequiredChecksAreTheProtectionsAndTheRulesets(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	s.SetRequiredChecks("main", "build", "test")
	s.SetRuleChecks("main", "test", "security")
	s.SetRuleChecks("wave/2026-01-01-x", "ci")
	g, _ := newSource(t, s, nil)
	for _, c := range []struct {
		branch string
		want   []string
	}{
		{"main", []string{"build", "test", "security"}},
		{"wave/2026-01-01-x", []string{"ci"}}, // not protected: its rulesets only
		{"feature", nil},
	} {
		got, err := g.RequiredChecks(t.Context(), c.branch)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.branch, got, err, c.want)
		}
	}
	s.DenyProtection()
	if got, err := g.RequiredChecks(t.Context(), "main"); err != nil || !slices.Equal(got, []string{"test", "security"}) {
		t.Errorf("main, protection unreadable: %v, %v; want the rulesets' checks", got, err)
	}
	if _, err := g.RequiredChecks(t.Context(), "feature"); !errors.Is(err, forge.ErrNoProtectionAccess) {
		t.Errorf("feature, protection unreadable and no ruleset: %v, want ErrNoProtectionAccess", err)
	}
}
