package forge_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
)

// TestUnresolvedThreadsAreCurrentOnesByOthers: only a thread that is
// neither resolved nor outdated and has a comment by a collaborator other
// than the token's own login counts, with its path, line and comments.
func TestUnresolvedThreadsAreCurrentOnesByOthers(t *testing.T) {
	s := forgetest.NewServer(t, "o", "r")
	pr := s.AddPR("wave/x-i1", "wave/x", "#1: x", "")
	open := s.AddThread(pr, "a.go", 7, forgetest.ThreadComment{Author: "alice", Body: "rename this"},
		forgetest.ThreadComment{Author: forgetest.Login, Body: "will do"})
	s.ResolveThread(s.AddThread(pr, "b.go", 1, forgetest.ThreadComment{Author: "alice", Body: "resolved"}))
	s.OutdateThread(s.AddThread(pr, "c.go", 2, forgetest.ThreadComment{Author: "alice", Body: "outdated"}))
	s.AddThread(pr, "d.go", 3, forgetest.ThreadComment{Author: forgetest.Login, Body: "our own note"})
	s.AddThread(pr, "e.go", 4, forgetest.ThreadComment{Author: "mallory", Assoc: "NONE", Body: "a stranger"})
	g, _ := newSource(t, s, nil)
	got, err := g.UnresolvedThreads(t.Context(), pr)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != open || got[0].Path != "a.go" || got[0].Line != 7 {
		t.Fatalf("got %+v, want the one open thread on a.go:7", got)
	}
	if c := got[0].Comments; len(c) != 2 || c[0].Author != "alice" || c[0].Body != "rename this" || c[0].ID == 0 {
		t.Errorf("comments %+v", c)
	}
	if n := s.Count(forgetest.RouteGraphQL); n != 1 {
		t.Errorf("%d GraphQL requests, want 1", n)
	}
}

// TestUnresolvedThreadsFailuresAreClassified: a GraphQL 5xx is retried
// and, past the retries, transient; a 403 is ErrNoThreadAccess.
func TestUnresolvedThreadsFailuresAreClassified(t *testing.T) {
	s := forgetest.NewServer(t, "o", "r")
	pr := s.AddPR("wave/x-i1", "wave/x", "#1: x", "")
	s.AddThread(pr, "a.go", 7, forgetest.ThreadComment{Author: "alice", Body: "rename this"})
	g, _ := newSource(t, s, nil)
	s.FailNextOn(forgetest.RouteGraphQL, http.StatusBadGateway)
	if got, err := g.UnresolvedThreads(t.Context(), pr); err != nil || len(got) != 1 {
		t.Fatalf("after one 502: %v, %v; want it retried", got, err)
	}
	for range 10 {
		s.FailNextOn(forgetest.RouteGraphQL, http.StatusBadGateway)
	}
	_, err := g.UnresolvedThreads(t.Context(), pr)
	if _, ok := forge.TransientCause(err); !ok {
		t.Errorf("a lasting 502: %v; want a transient failure", err)
	}
	for s.Count(forgetest.RouteGraphQL) < 12 { // drain the faults left
		_, _ = g.UnresolvedThreads(t.Context(), pr)
	}
	s.FailNextOn(forgetest.RouteGraphQL, http.StatusForbidden)
	_, err = g.UnresolvedThreads(t.Context(), pr)
	if !errors.Is(err, forge.ErrNoThreadAccess) {
		t.Errorf("a 403: %v; want ErrNoThreadAccess", err)
	}
	if _, ok := forge.TransientCause(err); ok {
		t.Errorf("a 403 is transient: %v", err)
	}
}
