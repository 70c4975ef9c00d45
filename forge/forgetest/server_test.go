package forgetest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// do sends one raw request, as a client other than go-github would.
func do(t *testing.T, s *Server, method, path, token, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL+"/api/v3"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestServerSpeaksGitHub(t *testing.T) {
	s := NewServer(t, "acme", "app")
	for range 5 {
		s.AddIssue(backlog.Issue{Title: "i", Labels: []string{"bug"}})
	}
	s.AddPR("feat", "main", "pr", "")
	for _, tc := range []struct {
		name, method, path, token, body string
		status                          int
		says                            string
	}{
		{"no token", "GET", "/repos/acme/app/issues", "", "", 401, "Bad credentials"},
		{"wrong token", "GET", "/repos/acme/app/issues", "nope", "", 401, "Bad credentials"},
		{"other repo", "GET", "/repos/acme/other/issues", Token, "", 404, "Not Found"},
		{"page 2 of 3", "GET", "/repos/acme/app/issues?per_page=2&page=2", Token, "", 200, `"number"`},
		{"absent label", "DELETE", "/repos/acme/app/issues/1/labels/nope", Token, "", 404, "Label does not exist"},
		{"label with slash", "POST", "/repos/acme/app/issues/1/labels", Token, `["a/b c"]`, 200, `"a/b c"`},
		{"remove it escaped", "DELETE", "/repos/acme/app/issues/1/labels/a%2Fb%20c", Token, "", 200, "bug"},
		{"duplicate PR", "POST", "/repos/acme/app/pulls", Token, `{"title":"t","head":"acme:feat","base":"main"}`, 422, "already exists"},
		{"PR in issues", "GET", "/repos/acme/app/issues/6", Token, "", 200, `"pull_request"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(t, s, tc.method, tc.path, tc.token, tc.body)
			if resp.StatusCode != tc.status || !strings.Contains(body, tc.says) {
				t.Errorf("%s %s = %d %s, want %d containing %q", tc.method, tc.path, resp.StatusCode, body, tc.status, tc.says)
			}
		})
	}
	resp, _ := do(t, s, "GET", "/repos/acme/app/issues?per_page=2&page=2", Token, "")
	link := resp.Header.Get("Link")
	for _, rel := range []string{`page=3&per_page=2>; rel="next"`, `rel="last"`, `rel="prev"`, `rel="first"`} {
		if !strings.Contains(link, rel) {
			t.Errorf("Link %q lacks %s", link, rel)
		}
	}
	if resp.Header.Get("X-Ratelimit-Remaining") == "" || resp.Header.Get("X-Ratelimit-Reset") == "" {
		t.Errorf("no X-Ratelimit-* headers: %v", resp.Header)
	}
	if n := s.Count(RouteIssuesList); n != 5 {
		t.Errorf("issues list count = %d, want 5 (401s and 404 included)", n)
	}
	if m := s.MutationsOn(RouteLabelsAdd); len(m) != 1 || m[0].Issue != 1 || m[0].Path != "/repos/acme/app/issues/1/labels" {
		t.Errorf("label mutations = %+v", m)
	}
}

func TestServerFaults(t *testing.T) {
	s := NewServer(t, "acme", "app")
	n := s.AddIssue(backlog.Issue{Title: "i"})
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	s.RateLimitNext(true, reset)
	resp, _ := do(t, s, "GET", "/repos/acme/app", Token, "")
	if resp.StatusCode != 403 || resp.Header.Get("X-Ratelimit-Remaining") != "0" ||
		resp.Header.Get("X-Ratelimit-Reset") != itoa(int(reset.Unix())) {
		t.Errorf("primary limit: %d %v", resp.StatusCode, resp.Header)
	}
	s.SecondaryLimitNext(429, 30*time.Second)
	if resp, body := do(t, s, "GET", "/repos/acme/app", Token, ""); resp.StatusCode != 429 ||
		resp.Header.Get("Retry-After") != "30" || !strings.Contains(body, "secondary-rate-limits") {
		t.Errorf("secondary limit: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	s.FailNth(2, 500)
	if resp, _ := do(t, s, "GET", "/repos/acme/app", Token, ""); resp.StatusCode != 200 {
		t.Errorf("first after FailNth(2) = %d, want 200", resp.StatusCode)
	}
	if resp, _ := do(t, s, "GET", "/repos/acme/app", Token, ""); resp.StatusCode != 500 {
		t.Errorf("second after FailNth(2) = %d, want 500", resp.StatusCode)
	}
	s.DropResponseNext(RouteCommentCreate)
	req, _ := http.NewRequestWithContext(t.Context(), "POST", s.URL+"/api/v3/repos/acme/app/issues/1/comments", strings.NewReader(`{"body":"x"}`))
	req.Header.Set("Authorization", "Bearer "+Token)
	if resp, err := s.HTTPClient().Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("dropped response arrived: %d", resp.StatusCode)
	}
	if cs := s.Comments(n); len(cs) != 1 {
		t.Errorf("comments after a dropped response = %d, want 1 (applied)", len(cs))
	}
	var repo struct {
		DefaultBranch string `json:"default_branch"`
	}
	_, body := do(t, s, "GET", "/repos/acme/app", Token, "")
	if json.Unmarshal([]byte(body), &repo); repo.DefaultBranch != "main" {
		t.Errorf("default branch = %q", repo.DefaultBranch)
	}
}

// TestAMatchingETagIsAnswered304AndNotCounted: the fake tags every GET
// answer and answers a request carrying the same tag with 304 and no
// body, which Counted (the rate limit's count) leaves out.
func TestAMatchingETagIsAnswered304AndNotCounted(t *testing.T) {
	s := NewServer(t, "acme", "app")
	s.AddIssue(backlog.Issue{Number: 1, Title: "one"})
	get := func(etag string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/v3/repos/acme/app/issues/1", nil)
		req.Header.Set("Authorization", "Bearer "+Token)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		resp, err := s.HTTPClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	first := get("")
	tag := first.Header.Get("ETag")
	if first.StatusCode != http.StatusOK || tag == "" {
		t.Fatalf("first read: %d, ETag %q", first.StatusCode, tag)
	}
	if again := get(tag); again.StatusCode != http.StatusNotModified {
		t.Fatalf("read with its ETag: %d, want 304", again.StatusCode)
	}
	s.AddComment(1, "alice", "changes the issue's comment count")
	if changed := get(tag); changed.StatusCode != http.StatusOK || changed.Header.Get("ETag") == tag {
		t.Fatalf("read after a change: %d, ETag %q; want 200 with a new tag", changed.StatusCode, changed.Header.Get("ETag"))
	}
	reqs := s.Requests()
	if s.Total() != 3 || s.Counted() != 2 || !reqs[1].Conditional || !reqs[1].NotModified || reqs[2].NotModified {
		t.Errorf("total %d, counted %d, log %+v; want 3, 2 and the second answered 304", s.Total(), s.Counted(), reqs)
	}
}
