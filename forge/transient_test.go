package forge_test

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
)

// TestServerErrorsPastTheRetriesAreTransient: once the client's own
// retries are spent, a 5xx is reported as transient with its cause in
// words, so the supervisor waits instead of ending the run.
func TestServerErrorsPastTheRetriesAreTransient(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	s.Fail5xx(10)
	g, _ := newSource(t, s, nil)
	_, err := g.DefaultBranch(t.Context())
	cause, ok := forge.TransientCause(err)
	if !ok || !strings.Contains(cause, forge.CauseGitHubServer) || !strings.Contains(cause, "502") {
		t.Fatalf("cause %q (transient %v) of %v, want %q with the status", cause, ok, err, forge.CauseGitHubServer)
	}
}

// TestRefusedTokenOrPermissionIsNotTransient: a 401 or a plain 403 is
// never waited out.
func TestRefusedTokenOrPermissionIsNotTransient(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound} {
		s := forgetest.NewServer(t, "acme", "app")
		s.FailNextOn(forgetest.RouteRepoGet, status)
		g, _ := newSource(t, s, nil)
		_, err := g.DefaultBranch(t.Context())
		if err == nil {
			t.Fatalf("%d: no error", status)
		}
		if cause, ok := forge.TransientCause(err); ok {
			t.Errorf("%d is transient (%q): %v", status, cause, err)
		}
	}
}

// TestUnreachableGitHubIsTransient: nothing listening at the API URL.
func TestUnreachableGitHubIsTransient(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := forgetest.NewServer(t, "acme", "app")
	g, _ := newSource(t, s, func(o *forge.GitHubOptions) { o.APIURL, o.HTTPClient = "http://"+addr+"/", &http.Client{} })
	_, err = g.DefaultBranch(t.Context())
	if cause, ok := forge.TransientCause(err); !ok || cause != forge.CauseGitHubUnreachable {
		t.Fatalf("cause %q (transient %v) of %v, want %q", cause, ok, err, forge.CauseGitHubUnreachable)
	}
}
