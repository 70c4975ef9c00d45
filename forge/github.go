package forge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-github/v84/github"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// GitHubOptions configures NewGitHub.
type GitHubOptions struct {
	Owner, Repo string
	// APIURL: "" or https://api.github.com/ → public GitHub; anything else
	// is a GitHub Enterprise (or test) server, mounted at <APIURL>/api/v3/.
	APIURL string
	// Token is the value (read by the caller from the variable named by
	// github.tokenEnv). It is sent as a bearer token and never logged.
	Token      string
	HTTPClient *http.Client // nil → a client with a 60 s timeout
	Logger     *slog.Logger // nil → slog.Default()
	// Sleep waits out rate limits and backoffs. nil → a timer that honours ctx.
	Sleep func(ctx context.Context, d time.Duration) error
	// MaxWait is the longest rate-limit wait before giving up (default 1h).
	MaxWait time.Duration
	// Now is the clock rate-limit resets are compared with (nil → time.Now).
	Now func() time.Time
	// Retries is how many times a transient failure (5xx, transport error)
	// is retried; 0 → 3, negative → none.
	Retries int
	// Login is the login the token acts as, whose comments are the only
	// ones whose markers count. "" → learned once with GET /user; a token
	// that may not read /user (a GitHub App's, the Actions GITHUB_TOKEN)
	// needs it set, e.g. "github-actions[bot]".
	Login string
}

// GitHub is the Source for a GitHub repository.
type GitHub struct {
	owner, repo string
	token       string
	c           *github.Client
	log         *slog.Logger
	sleep       func(context.Context, time.Duration) error
	now         func() time.Time
	maxWait     time.Duration
	retries     int
	calls       atomic.Int64
	notModified atomic.Int64 // of calls: answered 304, free of the rate limit
	rateWaits   atomic.Int64

	// writeMu makes writes one at a time, each with its re-check: two
	// goroutines ensuring the same comment post it once.
	writeMu sync.Mutex

	// login is who the token acts as: GitHubOptions.Login or, once
	// learned, GET /user's answer.
	loginMu sync.Mutex
	login   string

	// labels are each issue's labels as last read or written, so that
	// AddLabel of a label already there costs no request.
	labelsMu sync.Mutex
	labels   map[int][]string

	recent recentReads
}

var _ Source = (*GitHub)(nil)

// NewGitHub returns a GitHub source. It makes no request.
func NewGitHub(o GitHubOptions) (*GitHub, error) {
	if strings.TrimSpace(o.Owner) == "" || strings.TrimSpace(o.Repo) == "" {
		return nil, errors.New("github: owner and repo are required")
	}
	g := &GitHub{
		owner: o.Owner, repo: o.Repo, token: o.Token,
		log: loggerOrDefault(o.Logger), sleep: o.Sleep, now: o.Now,
		maxWait: o.MaxWait, retries: o.Retries, labels: map[int][]string{}, login: strings.TrimSpace(o.Login),
	}
	if g.sleep == nil {
		g.sleep = defaultSleep
	}
	if g.now == nil {
		g.now = time.Now
	}
	if g.maxWait <= 0 {
		g.maxWait = defaultMaxWait
	}
	switch {
	case g.retries == 0:
		g.retries = defaultRetries
	case g.retries < 0:
		g.retries = 0
	}
	hc := http.Client{Timeout: 60 * time.Second}
	if o.HTTPClient != nil {
		hc = *o.HTTPClient
	}
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	hc.Transport = newConditionalTransport(countingTransport{next: next, n: &g.calls}, &g.notModified)
	c := github.NewClient(&hc)
	c.UserAgent = "wave-orchestrator"
	if o.Token != "" {
		c = c.WithAuthToken(o.Token)
	}
	if api := strings.TrimSpace(o.APIURL); api != "" && !isPublicAPI(api) {
		var err error
		if c, err = c.WithEnterpriseURLs(api, api); err != nil {
			return nil, g.redact(fmt.Errorf("github: apiUrl %q: %w", api, err))
		}
	}
	g.c = c
	return g, nil
}

func isPublicAPI(api string) bool {
	u, err := url.Parse(api)
	return err == nil && strings.EqualFold(u.Host, "api.github.com")
}

// Kind is "github".
func (g *GitHub) Kind() string { return KindGitHub }

// Calls is the number of HTTP requests made so far.
func (g *GitHub) Calls() int64 { return g.calls.Load() }

// NotModified is how many of Calls were conditional requests GitHub
// answered 304 Not Modified: free of the rate limit.
func (g *GitHub) NotModified() int64 { return g.notModified.Load() }

// RateLimitWaits is how many times a rate limit was waited out so far.
func (g *GitHub) RateLimitWaits() int64 { return g.rateWaits.Load() }

// ListOpen returns the open issues carrying every label in labels, oldest
// first, pull requests dropped, all pages.
func (g *GitHub) ListOpen(ctx context.Context, labels []string) ([]backlog.Issue, error) {
	labels = cleanLabels(labels)
	opts := &github.IssueListByRepoOptions{
		State: "open", Labels: labels, Sort: "created", Direction: "asc",
		ListOptions: github.ListOptions{PerPage: 100},
	}
	var out []backlog.Issue
	for page := 1; ; page++ {
		var got []*github.Issue
		var resp *github.Response
		err := g.do(ctx, fmt.Sprintf("list open issues (page %d)", page), true, func(ctx context.Context) error {
			var err error
			got, resp, err = g.c.Issues.ListByRepo(ctx, g.owner, g.repo, opts)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, it := range got {
			if it.IsPullRequest() {
				continue
			}
			is := toIssue(it)
			g.remember(is.Number, is.Labels)
			g.recent.putListed(is, it.GetComments(), g.now())
			// GitHub filters already; this also covers label names with
			// commas, which its comma-separated filter cannot express.
			if hasAll(is.Labels, labels) {
				out = append(out, is)
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return out, nil
		}
		opts.ListOptions.Page = resp.NextPage
	}
}

// Get returns issue n with all its comments. A pull request's number is
// ErrNotFound: it is not a backlog issue. An issue ListOpen returned
// moments ago (listedFresh) is not fetched again, and its comments are
// read only when the listing counted some: the listing says how many
// each issue has, so a backlog of issues nobody commented on is planned
// without a read per issue.
func (g *GitHub) Get(ctx context.Context, n int) (backlog.Issue, error) {
	is, uncommented, listed := g.recent.takeListed(n, g.now())
	if !listed {
		it, err := g.getIssue(ctx, n)
		if err != nil {
			return backlog.Issue{}, err
		}
		is = toIssue(it)
		g.remember(n, is.Labels)
		uncommented = false
	}
	made := g.recent.madeOn(n)
	is.Comments = []backlog.Comment{}
	if !uncommented {
		var err error
		if is.Comments, err = g.listComments(ctx, n); err != nil {
			return backlog.Issue{}, err
		}
	}
	g.recent.putComments(n, is.Comments, made, g.now())
	return is, nil
}

func (g *GitHub) getIssue(ctx context.Context, n int) (*github.Issue, error) {
	var it *github.Issue
	err := g.do(ctx, fmt.Sprintf("get issue #%d", n), true, func(ctx context.Context) error {
		var err error
		it, _, err = g.c.Issues.Get(ctx, g.owner, g.repo, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	if it.IsPullRequest() {
		return nil, fmt.Errorf("github: #%d is a pull request, not an issue: %w", n, ErrNotFound)
	}
	return it, nil
}

func (g *GitHub) listComments(ctx context.Context, n int) ([]backlog.Comment, error) {
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	out := []backlog.Comment{}
	for page := 1; ; page++ {
		var got []*github.IssueComment
		var resp *github.Response
		err := g.do(ctx, fmt.Sprintf("list comments of issue #%d (page %d)", n, page), true, func(ctx context.Context) error {
			var err error
			got, resp, err = g.c.Issues.ListComments(ctx, g.owner, g.repo, n, opts)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, c := range got {
			out = append(out, toComment(c))
		}
		if resp == nil || resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// AddLabel adds label to issue n. When the issue's labels as last read
// or written by this Source already hold it, no request is made; adding a
// label GitHub already has is harmless anyway.
func (g *GitHub) AddLabel(ctx context.Context, n int, label string) error {
	label = strings.TrimSpace(label)
	if label == "" {
		return fmt.Errorf("github: add label to issue #%d: empty label", n)
	}
	g.writeMu.Lock()
	defer g.writeMu.Unlock()
	if known, ok := g.known(n); ok && hasLabel(known, label) {
		return nil
	}
	var got []*github.Label
	err := g.do(ctx, fmt.Sprintf("add label %q to issue #%d", label, n), true, func(ctx context.Context) error {
		var err error
		got, _, err = g.c.Issues.AddLabelsToIssue(ctx, g.owner, g.repo, n, []string{label})
		return err
	})
	if err != nil {
		return err
	}
	names := make([]string, 0, len(got))
	for _, l := range got {
		names = append(names, l.GetName())
	}
	g.remember(n, names)
	return nil
}

// RemoveLabel removes label from issue n; a label that is not there is
// not an error. It always asks GitHub: a stale belief that the label is
// gone must not leave a claim label behind.
func (g *GitHub) RemoveLabel(ctx context.Context, n int, label string) error {
	label = strings.TrimSpace(label)
	if label == "" {
		return fmt.Errorf("github: remove label from issue #%d: empty label", n)
	}
	g.writeMu.Lock()
	defer g.writeMu.Unlock()
	err := g.do(ctx, fmt.Sprintf("remove label %q from issue #%d", label, n), true, func(ctx context.Context) error {
		// go-github puts the name into the path as is.
		_, err := g.c.Issues.RemoveLabelForIssue(ctx, g.owner, g.repo, n, url.PathEscape(label))
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	g.forgetLabel(n, label)
	return nil
}

// CloseIssue closes issue n as completed; an issue already closed (for
// any reason) is left as it is.
func (g *GitHub) CloseIssue(ctx context.Context, n int) error {
	g.writeMu.Lock()
	defer g.writeMu.Unlock()
	it, err := g.getIssue(ctx, n)
	if err != nil {
		return err
	}
	if it.GetState() == "closed" {
		return nil
	}
	req := &github.IssueRequest{State: github.Ptr("closed"), StateReason: github.Ptr("completed")}
	return g.do(ctx, fmt.Sprintf("close issue #%d", n), true, func(ctx context.Context) error {
		_, _, err := g.c.Issues.Edit(ctx, g.owner, g.repo, n, req)
		return err
	})
}

// DefaultBranch is the repository's default branch.
func (g *GitHub) DefaultBranch(ctx context.Context) (string, error) {
	var r *github.Repository
	err := g.do(ctx, "get repository", true, func(ctx context.Context) error {
		var err error
		r, _, err = g.c.Repositories.Get(ctx, g.owner, g.repo)
		return err
	})
	if err != nil {
		return "", err
	}
	if r.GetDefaultBranch() == "" {
		return "", fmt.Errorf("github: repository %s/%s reports no default branch", g.owner, g.repo)
	}
	return r.GetDefaultBranch(), nil
}

func (g *GitHub) remember(n int, labels []string) {
	g.labelsMu.Lock()
	defer g.labelsMu.Unlock()
	g.labels[n] = append([]string(nil), labels...)
}

func (g *GitHub) known(n int) ([]string, bool) {
	g.labelsMu.Lock()
	defer g.labelsMu.Unlock()
	l, ok := g.labels[n]
	return l, ok
}

func (g *GitHub) forgetLabel(n int, label string) {
	g.labelsMu.Lock()
	defer g.labelsMu.Unlock()
	if l, ok := g.labels[n]; ok {
		g.labels[n] = withoutLabel(l, label)
	}
}

func toIssue(it *github.Issue) backlog.Issue {
	is := backlog.Issue{
		Number: it.GetNumber(), Title: it.GetTitle(), Body: it.GetBody(),
		State: it.GetState(), CreatedAt: it.GetCreatedAt().Time, URL: it.GetHTMLURL(),
		Labels: []string{},
	}
	for _, l := range it.Labels {
		is.Labels = append(is.Labels, l.GetName())
	}
	return is
}

func toComment(c *github.IssueComment) backlog.Comment {
	return backlog.Comment{
		ID: c.GetID(), Body: c.GetBody(), Author: c.GetUser().GetLogin(),
		CreatedAt: c.GetCreatedAt().Time,
	}
}

func cleanLabels(labels []string) []string {
	var out []string
	for _, l := range labels {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func withoutLabel(labels []string, label string) []string {
	out := make([]string, 0, len(labels))
	for _, l := range labels {
		if !strings.EqualFold(l, label) {
			out = append(out, l)
		}
	}
	return out
}
