package kube

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
)

// request is one API request as RBAC sees it.
type request struct {
	Verb, Group, Resource, Subresource string
	// NonResource is the path of a request outside the API's resources
	// (/version).
	NonResource string
}

func (r request) String() string {
	if r.NonResource != "" {
		return "get " + r.NonResource
	}
	return Permission{Verb: r.Verb, Group: r.Group, Resource: r.Resource, Subresource: r.Subresource}.String()
}

// requestOf reads an API request's verb and resource the way the API
// server's request-info does, for the paths the backend uses.
func requestOf(method string, u *url.URL) (request, error) {
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return request{Verb: strings.ToLower(method), NonResource: u.Path}, nil
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:] // a namespaced resource
	}
	if len(parts) == 0 {
		return request{}, fmt.Errorf("%s %s: no resource", method, u.Path)
	}
	r := request{Group: group, Resource: parts[0]}
	name := ""
	if len(parts) > 1 {
		name = parts[1]
	}
	if len(parts) > 2 {
		r.Subresource = parts[2]
	}
	w := u.Query().Get("watch")
	switch {
	case method == http.MethodGet && name == "" && (w == "true" || w == "1"):
		r.Verb = "watch"
	case method == http.MethodGet && name == "":
		r.Verb = "list"
	case method == http.MethodGet:
		r.Verb = "get"
	case method == http.MethodPost:
		r.Verb = "create"
	case method == http.MethodPut:
		r.Verb = "update"
	case method == http.MethodPatch:
		r.Verb = "patch"
	case method == http.MethodDelete && name == "":
		r.Verb = "deletecollection"
	case method == http.MethodDelete:
		r.Verb = "delete"
	default:
		return request{}, fmt.Errorf("%s %s: unknown method", method, u.Path)
	}
	return r, nil
}

func TestRequestOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		method, url string
		want        string
	}{
		{"GET", "/version", "get /version"},
		{"POST", "/apis/batch/v1/namespaces/ns/jobs", "create jobs.batch"},
		{"GET", "/apis/batch/v1/namespaces/ns/jobs/x", "get jobs.batch"},
		{"GET", "/apis/batch/v1/namespaces/ns/jobs?labelSelector=a", "list jobs.batch"},
		{"GET", "/apis/coordination.k8s.io/v1/namespaces/ns/leases?watch=true", "watch leases.coordination.k8s.io"},
		{"PATCH", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/x", "patch leases.coordination.k8s.io"},
		{"DELETE", "/api/v1/namespaces/ns/pods?labelSelector=a", "deletecollection pods"},
		{"DELETE", "/api/v1/namespaces/ns/secrets/x", "delete secrets"},
		{"GET", "/api/v1/namespaces/ns/pods/p/attach?tty=true", "get pods/attach"},
		{"POST", "/api/v1/namespaces/ns/pods/p/attach", "create pods/attach"},
		{"GET", "/api/v1/namespaces/ns", "get namespaces"},
		{"POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "create selfsubjectaccessreviews.authorization.k8s.io"},
	} {
		u, _ := url.Parse(c.url)
		got, err := requestOf(c.method, u)
		if err != nil || got.String() != c.want {
			t.Errorf("%s %s: %v %v, want %s", c.method, c.url, got, err, c.want)
		}
	}
}

// verbGuard passes an identity's API requests that the table allows and
// refuses the rest with a 403, as RBAC would refuse a verb the manifest
// lacks; each refusal is an error of the test that made the client.
type verbGuard struct {
	t   testing.TB
	who Identity
	rt  http.RoundTripper

	mu      sync.Mutex
	refused map[string]bool
}

// guarded is cfg whose requests pass the table of who, or fail t.
func guarded(t testing.TB, who Identity, cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	g := &verbGuard{t: t, who: who, refused: map[string]bool{}}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { g.rt = rt; return g })
	t.Cleanup(func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		for r := range g.refused {
			t.Errorf("the %s did %s, which %s (kube.Needs) does not grant it", who, r, "the permission table")
		}
	})
	return cfg
}

func (g *verbGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	r, err := requestOf(req.Method, req.URL)
	if err == nil && (r.NonResource == "/version" || Allowed(g.who, r.Verb, r.Group, r.Resource, r.Subresource)) {
		return g.rt.RoundTrip(req)
	}
	what := r.String()
	if err != nil {
		what = err.Error()
	}
	g.mu.Lock()
	g.refused[what] = true
	g.mu.Unlock()
	body := fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":%q}`,
		"verb guard: "+what+" is not in kube.Needs")
	return &http.Response{StatusCode: http.StatusForbidden, Status: "403 Forbidden", Request: req,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewBufferString(body)),
		ProtoMajor: 1, ProtoMinor: 1}, nil
}
