package forge_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
)

func TestEnsurePRTwiceMakesOnePR(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	g, _ := newSource(t, s, nil)
	ctx := t.Context()
	first, err := g.EnsurePR(ctx, "wave/2024-01-01-x", "main", "Wave x", "Closes #1")
	if err != nil {
		t.Fatal(err)
	}
	second, err := g.EnsurePR(ctx, "wave/2024-01-01-x", "main", "Wave x", "Closes #1\nCloses #2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.EnsurePR(ctx, "wave/2024-01-01-x", "main", "Wave x", "Closes #1\nCloses #2"); err != nil {
		t.Fatal(err)
	}
	if first.Number != second.Number || second.Body != "Closes #1\nCloses #2" {
		t.Errorf("first %+v, second %+v: want the same PR, updated", first, second)
	}
	prs := s.PRs()
	if len(prs) != 1 || prs[0].Body != "Closes #1\nCloses #2" || prs[0].Head != "wave/2024-01-01-x" {
		t.Fatalf("server PRs = %+v, want one updated PR", prs)
	}
	if c, e := len(s.MutationsOn(forgetest.RoutePullCreate)), len(s.MutationsOn(forgetest.RoutePullEdit)); c != 1 || e != 1 {
		t.Errorf("creates = %d, edits = %d; want 1 and 1 (the unchanged third call writes nothing)", c, e)
	}
}

func TestEnsurePRAfter422ReturnsTheExistingPR(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	g, _ := newSource(t, s, nil)
	var theirs int
	// Someone opens the same PR between our list and our create.
	s.BeforeNext(forgetest.RoutePullCreate, func() { theirs = s.AddPR("wave/w", "main", "theirs", "their body") })
	pr, err := g.EnsurePR(t.Context(), "wave/w", "main", "ours", "our body")
	if err != nil {
		t.Fatal(err)
	}
	if pr.Number != theirs || pr.Title != "ours" || pr.Body != "our body" {
		t.Errorf("got %+v, want PR #%d updated to ours", pr, theirs)
	}
	if prs := s.PRs(); len(prs) != 1 {
		t.Errorf("PRs = %+v, want 1", prs)
	}
}

func TestEnsurePRUnexplained422IsAnError(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	g, _ := newSource(t, s, nil)
	s.FailNextOn(forgetest.RoutePullCreate, http.StatusUnprocessableEntity)
	_, err := g.EnsurePR(t.Context(), "wave/w", "main", "t", "b")
	if err == nil || !strings.Contains(err.Error(), "422") {
		t.Fatalf("err = %v, want the 422", err)
	}
	if n := s.Count(forgetest.RoutePullsList); n != 1 {
		t.Errorf("PR lists = %d, want 1 (after the 422)", n)
	}
}

func TestEnsurePRLostResponseMakesOnePR(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	g, _ := newSource(t, s, nil)
	s.DropResponseNext(forgetest.RoutePullCreate)
	pr, err := g.EnsurePR(t.Context(), "wave/w", "main", "t", "b")
	if err != nil {
		t.Fatal(err)
	}
	if prs := s.PRs(); len(prs) != 1 || prs[0].Number != pr.Number {
		t.Errorf("PRs = %+v, returned %+v; want exactly the one", prs, pr)
	}
}

func TestFindPR(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	g, _ := newSource(t, s, nil)
	ctx := t.Context()
	if pr, err := g.FindPR(ctx, "wave/w", "main"); err != nil || pr != nil {
		t.Fatalf("FindPR with none = %+v, %v; want nil, nil", pr, err)
	}
	old := s.AddPR("wave/w", "main", "old", "")
	s.SetPRState(old, "closed", true)
	s.AddPR("wave/w", "develop", "other base", "")
	s.AddPR("other", "main", "other head", "")
	pr, err := g.FindPR(ctx, "wave/w", "main")
	if err != nil || pr == nil || pr.Number != old || !pr.Merged || pr.State != "closed" {
		t.Fatalf("FindPR = %+v, %v; want merged #%d", pr, err, old)
	}
	open := s.AddPR("wave/w", "main", "new", "")
	if pr, _ = g.FindPR(ctx, "wave/w", "main"); pr == nil || pr.Number != open {
		t.Errorf("FindPR = %+v, want the open #%d", pr, open)
	}
}
