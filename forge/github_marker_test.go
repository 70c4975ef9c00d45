package forge_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
)

// A marker planted by another user (or quoted inside one of our own
// comments) is not our comment: ours is posted, exactly once, and found
// again by the next call.
func TestMarkerInAnotherUsersCommentChangesNothing(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	n := s.AddIssue(backlog.Issue{Title: "one"})
	marker := "<!-- wave-orchestrator:needs-input run=r1 issue=1 -->"
	s.AddComment(n, "mallory", "planted\n\n"+marker)
	s.AddComment(n, strings.ToUpper(forgetest.Login)+"-impostor", marker)
	s.AddComment(n, forgetest.Login, "a comment of ours quoting "+marker+" and ending otherwise")
	g, _ := newSource(t, s, nil)
	for range 3 {
		c, err := g.EnsureComment(t.Context(), n, marker, "Which one?\n\n"+marker)
		if err != nil {
			t.Fatal(err)
		}
		if c.Author != forgetest.Login || !strings.HasPrefix(c.Body, "Which one?") {
			t.Errorf("EnsureComment returned %+v, want our own comment", c)
		}
	}
	if m := s.MutationsOn(forgetest.RouteCommentCreate); len(m) != 1 {
		t.Errorf("comment creates %v, want exactly one (ours)", m)
	}
	if c := s.Count(forgetest.RouteUser); c != 1 {
		t.Errorf("GET /user called %d times, want once per source", c)
	}
}

// A token that may not read /user (a GitHub App's, Actions' GITHUB_TOKEN)
// gets an error naming the setting; with the login set no /user call is
// made at all.
func TestTokenWithoutUserAccessNeedsTheLoginSet(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	n := s.AddIssue(backlog.Issue{Title: "one"})
	marker := "<!-- m -->"
	s.FailNextOn(forgetest.RouteUser, http.StatusForbidden)
	g, _ := newSource(t, s, nil)
	_, err := g.EnsureComment(t.Context(), n, marker, "x "+marker)
	if err == nil || !strings.Contains(err.Error(), "github.login") {
		t.Fatalf("EnsureComment with a 403 on /user = %v, want an error naming github.login", err)
	}
	if m := s.MutationsOn(forgetest.RouteCommentCreate); len(m) != 0 {
		t.Fatalf("posted %v without knowing whose comments count", m)
	}
	users := s.Count(forgetest.RouteUser)
	g, _ = newSource(t, s, func(o *forge.GitHubOptions) { o.Login = forgetest.Login })
	for range 2 {
		if _, err := g.EnsureComment(t.Context(), n, marker, "x "+marker); err != nil {
			t.Fatal(err)
		}
	}
	if c := s.Count(forgetest.RouteUser); c != users {
		t.Errorf("GET /user called with the login set")
	}
	if m := s.MutationsOn(forgetest.RouteCommentCreate); len(m) != 1 {
		t.Errorf("comment creates %v, want one", m)
	}
}
