package forge_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
)

// logBuffer is a slog.Logger writing text into a buffer safe for
// concurrent writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newSource(t *testing.T, s *forgetest.Server, edit func(*forge.GitHubOptions)) (*forge.GitHub, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	o := s.Options()
	o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if edit != nil {
		edit(&o)
	}
	g, err := forge.NewGitHub(o)
	if err != nil {
		t.Fatal(err)
	}
	return g, logs
}

func numbers(issues []backlog.Issue) []int {
	out := []int{}
	for _, i := range issues {
		out = append(out, i.Number)
	}
	return out
}

func TestListOpenReadsEveryPageAndDropsPullRequests(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	var want []int
	for i := range 230 {
		if i%20 == 7 {
			s.AddPR(fmt.Sprintf("feature-%d", i), "main", "a PR", "")
			continue
		}
		want = append(want, s.AddIssue(backlog.Issue{Title: fmt.Sprintf("issue %d", i)}))
	}
	s.AddIssue(backlog.Issue{Title: "closed one", State: "closed"})
	g, _ := newSource(t, s, nil)

	got, err := g.ListOpen(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(numbers(got), want) {
		t.Fatalf("ListOpen = %d issues %v..., want the %d open issues oldest first without PRs", len(got), numbers(got)[:5], len(want))
	}
	if n := s.Count(forgetest.RouteIssuesList); n != 3 {
		t.Errorf("issues list requests = %d, want 3 pages", n)
	}
}

func TestListOpenLabelsAreAnd(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	bug := s.AddIssue(backlog.Issue{Title: "bug", Labels: []string{"bug"}})
	api := s.AddIssue(backlog.Issue{Title: "api bug", Labels: []string{"bug", "area:api"}})
	ui := s.AddIssue(backlog.Issue{Title: "ui", Labels: []string{"area:ui"}})
	s.AddPR("x", "main", "PR", "")
	g, _ := newSource(t, s, nil)
	for _, tc := range []struct {
		labels []string
		want   []int
	}{
		{nil, []int{bug, api, ui}},
		{[]string{"bug"}, []int{bug, api}},
		{[]string{"bug", "area:api"}, []int{api}},
		{[]string{"BUG", " area:api "}, []int{api}},
		{[]string{"bug", "area:ui"}, []int{}},
		{[]string{"nope"}, []int{}},
	} {
		got, err := g.ListOpen(t.Context(), tc.labels)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(numbers(got), tc.want) {
			t.Errorf("ListOpen(%q) = %v, want %v", tc.labels, numbers(got), tc.want)
		}
	}
}

func TestPrimaryRateLimitWaitsUntilResetAndSaysSo(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	n := s.AddIssue(backlog.Issue{Title: "one"})
	now := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	reset := now.Add(10 * time.Minute)
	g, logs := newSource(t, s, func(o *forge.GitHubOptions) { o.Now = func() time.Time { return now } })

	s.RateLimitNext(true, reset)
	got, err := g.ListOpen(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(numbers(got), []int{n}) {
		t.Fatalf("after the wait ListOpen = %v, want [%d]", numbers(got), n)
	}
	if w := s.Sleeper().Waits(); !slices.Equal(w, []time.Duration{10*time.Minute + time.Second}) {
		t.Errorf("waits = %v, want until the reset (10m) plus a 1s margin", w)
	}
	if want := "GitHub rate limit reached; waiting until 2030-05-06T07:18:09Z"; !strings.Contains(logs.String(), want) {
		t.Errorf("log does not say %q:\n%s", want, logs)
	}
	if !strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("the wait is not logged at Warn:\n%s", logs)
	}
}

func TestPrimaryRateLimitBeyondMaxWaitFails(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	now := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	g, _ := newSource(t, s, func(o *forge.GitHubOptions) {
		o.Now = func() time.Time { return now }
		o.MaxWait = time.Hour
	})
	s.RateLimitNext(true, now.Add(2*time.Hour))
	_, err := g.ListOpen(t.Context(), nil)
	if err == nil || !strings.Contains(err.Error(), "beyond the 1h0m0s we wait") {
		t.Fatalf("err = %v, want a rate limit beyond MaxWait", err)
	}
	if w := s.Sleeper().Waits(); len(w) != 0 {
		t.Errorf("waited %v although the reset is beyond MaxWait", w)
	}
}

func TestSecondaryRateLimitWaitsRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		retryAfter time.Duration
		want       time.Duration
	}{
		{"429 with Retry-After", http.StatusTooManyRequests, 7 * time.Second, 7 * time.Second},
		{"403 with Retry-After", http.StatusForbidden, 90 * time.Second, 90 * time.Second},
		{"no Retry-After", http.StatusForbidden, 0, 60 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := forgetest.NewServer(t, "acme", "app")
			n := s.AddIssue(backlog.Issue{Title: "one"})
			g, logs := newSource(t, s, nil)
			s.SecondaryLimitNext(tc.status, tc.retryAfter)
			if err := g.AddLabel(t.Context(), n, "wave:claimed"); err != nil {
				t.Fatal(err)
			}
			if w := s.Sleeper().Waits(); !slices.Equal(w, []time.Duration{tc.want}) {
				t.Errorf("waits = %v, want [%v]", w, tc.want)
			}
			if is, _ := s.Issue(n); !slices.Equal(is.Labels, []string{"wave:claimed"}) {
				t.Errorf("labels = %q after the retry", is.Labels)
			}
			if !strings.Contains(logs.String(), "secondary rate limit") {
				t.Errorf("log does not mention the secondary limit:\n%s", logs)
			}
		})
	}
}

func TestServerErrorMidwayIsRetried(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	for i := range 250 {
		s.AddIssue(backlog.Issue{Title: fmt.Sprint(i)})
	}
	g, _ := newSource(t, s, nil)
	s.FailNth(2, http.StatusBadGateway) // the second page
	got, err := g.ListOpen(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 250 {
		t.Fatalf("got %d issues, want 250", len(got))
	}
	if n := s.Count(forgetest.RouteIssuesList); n != 4 {
		t.Errorf("list requests = %d, want 3 pages + 1 retry", n)
	}
	if w := s.Sleeper().Waits(); !slices.Equal(w, []time.Duration{time.Second}) {
		t.Errorf("backoff waits = %v, want [1s]", w)
	}
}

func TestReadsGiveUpAfterBoundedRetries(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	s.Fail5xx(10)
	g, _ := newSource(t, s, nil)
	_, err := g.DefaultBranch(t.Context())
	if err == nil || !strings.Contains(err.Error(), "502") || !strings.Contains(err.Error(), "get repository") {
		t.Fatalf("err = %v, want the 502 naming the request", err)
	}
	if w := s.Sleeper().Waits(); !slices.Equal(w, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}) {
		t.Errorf("waits = %v, want backoff 1s 2s 4s", w)
	}
	if n := s.Count(forgetest.RouteRepoGet); n != 4 {
		t.Errorf("attempts = %d, want 4", n)
	}
}

func TestLostCommentResponseDoesNotPostTwice(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(*forgetest.Server)
	}{
		{"connection dropped", func(s *forgetest.Server) { s.DropResponseNext(forgetest.RouteCommentCreate) }},
		{"502 after the write", func(s *forgetest.Server) {
			s.ApplyThenFailNext(forgetest.RouteCommentCreate, http.StatusBadGateway)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := forgetest.NewServer(t, "acme", "app")
			n := s.AddIssue(backlog.Issue{Title: "one"})
			g, _ := newSource(t, s, nil)
			marker := "<!-- wave-orchestrator:claim run=r1 -->"
			tc.fault(s)
			c, err := g.EnsureComment(t.Context(), n, marker, "Claimed by run r1.\n"+marker)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(c.Body, marker) || c.ID == 0 {
				t.Errorf("returned comment %+v, want the posted one", c)
			}
			if m := s.MutationsOn(forgetest.RouteCommentCreate); len(m) != 1 {
				t.Errorf("comment creates = %v, want exactly one", m)
			}
			if cs := s.Comments(n); len(cs) != 1 {
				t.Errorf("comments = %d, want 1", len(cs))
			}
		})
	}
}

func TestEnsureCommentFindsItsMarker(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	n := s.AddIssue(backlog.Issue{Title: "one"})
	for i := range 120 { // the marker is on the second page of comments
		s.AddComment(n, "someone", fmt.Sprintf("chatter %d", i))
	}
	marker := "<!-- wave-orchestrator:claim run=r1 -->"
	id := s.AddComment(n, "wave-bot", "claimed "+marker)
	g, _ := newSource(t, s, nil)
	c, err := g.EnsureComment(t.Context(), n, marker, "again "+marker)
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != id || c.Author != "wave-bot" {
		t.Errorf("got %+v, want the existing comment %d", c, id)
	}
	if m := s.MutationsOn(forgetest.RouteCommentCreate); len(m) != 0 {
		t.Errorf("posted %v although the marker was there", m)
	}
	if _, err := g.EnsureComment(t.Context(), n, "<!-- m -->", "no marker in it"); err == nil {
		t.Error("a body without its marker was accepted")
	}
}

func TestConcurrentEnsureCommentPostsOnce(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	n := s.AddIssue(backlog.Issue{Title: "one"})
	g, _ := newSource(t, s, nil)
	marker := "<!-- wave-orchestrator:needs-input -->"
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			if _, err := g.EnsureComment(context.Background(), n, marker, "question? "+marker); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if cs := s.Comments(n); len(cs) != 1 {
		t.Errorf("comments = %d, want 1", len(cs))
	}
}

func TestLabels(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	n := s.AddIssue(backlog.Issue{Title: "one", Labels: []string{"bug"}})
	g, _ := newSource(t, s, nil)
	ctx := t.Context()
	for range 2 {
		if err := g.AddLabel(ctx, n, "needs input/ui"); err != nil {
			t.Fatal(err)
		}
	}
	if is, _ := s.Issue(n); !slices.Equal(is.Labels, []string{"bug", "needs input/ui"}) {
		t.Errorf("labels = %q", is.Labels)
	}
	if c := s.Count(forgetest.RouteLabelsAdd); c != 1 {
		t.Errorf("add label requests = %d, want 1: the second AddLabel knows the label is there", c)
	}
	if _, err := g.Get(ctx, n); err != nil {
		t.Fatal(err)
	}
	if err := g.AddLabel(ctx, n, "bug"); err != nil || s.Count(forgetest.RouteLabelsAdd) != 1 {
		t.Errorf("adding a label Get saw: err %v, requests %d", err, s.Count(forgetest.RouteLabelsAdd))
	}
	if err := g.RemoveLabel(ctx, n, "needs input/ui"); err != nil {
		t.Fatal(err)
	}
	if err := g.RemoveLabel(ctx, n, "never-there"); err != nil {
		t.Errorf("removing an absent label: %v, want nil", err)
	}
	if is, _ := s.Issue(n); !slices.Equal(is.Labels, []string{"bug"}) {
		t.Errorf("labels = %q, want [bug]", is.Labels)
	}
	if m := s.MutationsOn(forgetest.RouteLabelRemove); len(m) != 1 {
		t.Errorf("removals applied = %v, want 1", m)
	}
	if err := g.AddLabel(ctx, n, "needs input/ui"); err != nil || s.Count(forgetest.RouteLabelsAdd) != 2 {
		t.Errorf("re-adding a removed label: err %v, requests %d, want a request", err, s.Count(forgetest.RouteLabelsAdd))
	}
}

func TestCloseIssueIsIdempotent(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	n := s.AddIssue(backlog.Issue{Title: "one"})
	g, _ := newSource(t, s, nil)
	for range 2 {
		if err := g.CloseIssue(t.Context(), n); err != nil {
			t.Fatal(err)
		}
	}
	if is, _ := s.Issue(n); is.State != "closed" || s.StateReason(n) != "completed" {
		t.Errorf("state %q reason %q, want closed completed", is.State, s.StateReason(n))
	}
	if m := s.MutationsOn(forgetest.RouteIssueEdit); len(m) != 1 {
		t.Errorf("edits = %v, want one", m)
	}
	if err := g.CloseIssue(t.Context(), 999); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("closing a missing issue: %v, want ErrNotFound", err)
	}
}

func TestGetWithCommentsAndNotFound(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	n := s.AddIssue(backlog.Issue{Title: "one", Body: "body", Labels: []string{"a"}})
	for i := range 150 {
		s.AddComment(n, "u", fmt.Sprint(i))
	}
	pr := s.AddPR("b", "main", "pr", "")
	g, _ := newSource(t, s, nil)
	is, err := g.Get(t.Context(), n)
	if err != nil {
		t.Fatal(err)
	}
	if is.Title != "one" || is.Body != "body" || len(is.Comments) != 150 || is.Comments[149].Body != "149" ||
		!strings.HasSuffix(is.URL, fmt.Sprintf("/acme/app/issues/%d", n)) {
		t.Errorf("Get = %q %q %d comments %s", is.Title, is.Body, len(is.Comments), is.URL)
	}
	for _, missing := range []int{pr, 999} {
		if _, err := g.Get(t.Context(), missing); !errors.Is(err, forge.ErrNotFound) {
			t.Errorf("Get(%d) = %v, want ErrNotFound", missing, err)
		}
	}
}

func TestDefaultBranchAndCalls(t *testing.T) {
	s := forgetest.NewServer(t, "acme", "app")
	s.SetDefaultBranch("trunk")
	n := s.AddIssue(backlog.Issue{Title: "one"})
	g, _ := newSource(t, s, nil)
	ctx := t.Context()
	if b, err := g.DefaultBranch(ctx); err != nil || b != "trunk" {
		t.Fatalf("DefaultBranch = %q, %v", b, err)
	}
	s.Fail5xx(1)
	s.RateLimitNext(false, time.Now().Add(3*time.Second))
	if _, err := g.Get(ctx, n); err != nil {
		t.Fatal(err)
	}
	if _, err := g.EnsureComment(ctx, n, "<!-- m -->", "x <!-- m -->"); err != nil {
		t.Fatal(err)
	}
	if g.Calls() != int64(s.Total()) || g.Calls() != 7 {
		t.Errorf("Calls = %d, server saw %d; want both 7 (repo, 2 faults, issue, comments, user, create: "+
			"the comments Get read are EnsureComment's look)", g.Calls(), s.Total())
	}
}

func TestTokenNeverInErrorsOrLogs(t *testing.T) {
	const token = "ghp_SuperSecretTokenValue123"
	s := forgetest.NewServer(t, "acme", "app")
	n := s.AddIssue(backlog.Issue{Title: "one"})
	cases := []struct {
		name string
		edit func(*forge.GitHubOptions)
	}{
		{"rejected token (401)", func(o *forge.GitHubOptions) { o.Token = token }},
		{"unreachable server whose URL holds the token", func(o *forge.GitHubOptions) {
			o.Token = token
			o.APIURL = "http://127.0.0.1:1/" + token + "/"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, logs := newSource(t, s, tc.edit)
			_, err := g.Get(t.Context(), n)
			if err == nil {
				t.Fatal("Get succeeded")
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("error holds the token: %v", err)
			}
			if strings.Contains(logs.String(), token) {
				t.Errorf("log holds the token:\n%s", logs)
			}
		})
	}
	g, _ := newSource(t, s, cases[0].edit)
	if _, err := g.Get(t.Context(), n); err == nil || !strings.Contains(err.Error(), "rejected the token") {
		t.Errorf("401 error = %v, want it to say the token was rejected", err)
	}
}

func TestNewGitHubNeedsOwnerAndRepo(t *testing.T) {
	if _, err := forge.NewGitHub(forge.GitHubOptions{Repo: "x"}); err == nil {
		t.Error("NewGitHub without owner succeeded")
	}
}
