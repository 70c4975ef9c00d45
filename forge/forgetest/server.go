// Package forgetest is a fake GitHub for tests: an httptest server that
// speaks the REST endpoints forge uses (mounted at /api/v3/, as go-github
// expects with WithEnterpriseURLs) over in-memory issues, labels,
// comments, pull requests, commit checks (check runs and statuses, each
// pending for a while or missing, then passing or failing) and branch
// rules, with Link pagination, ETags answered 304 when they match (which
// the rate limit does not count), X-Ratelimit-* headers,
// a bearer token check, GitHub's 404/422 answers, fault knobs (a failed
// Nth call, primary and secondary rate limits, runs of 5xx, a write
// applied whose response is then dropped), per-route counters and an
// ordered log of the mutations it applied. Comments record their author:
// Login for those made with Token, anyone for those a test seeds.
package forgetest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
)

// Token is the only token the server accepts; Login is the user it
// authenticates (GET /user), the author of every comment made through the
// API. Comments seeded with AddComment or AddIssue are by whoever they
// name ("test-user" when none).
const (
	Token = "test-token"
	Login = "wave-bot"
)

// Routes, as Count and DropResponseNext name them.
const (
	RouteRepoGet       = "repos.get"
	RouteIssuesList    = "issues.list"
	RouteIssueGet      = "issues.get"
	RouteIssueEdit     = "issues.edit"
	RouteLabelsAdd     = "labels.add"
	RouteLabelRemove   = "labels.remove"
	RouteCommentsList  = "comments.list"
	RouteCommentCreate = "comments.create"
	RoutePullsList     = "pulls.list"
	RoutePullCreate    = "pulls.create"
	RoutePullGet       = "pulls.get"
	RoutePullEdit      = "pulls.edit"
	RouteRateLimit     = "rate_limit"
	RouteUser          = "user.get"
)

// Mutation is one change the server applied, in order.
type Mutation struct {
	Route   string
	Method  string
	Path    string
	Issue   int // issue or PR number; 0 when none
	Summary string
}

// Request is one request that reached the server (faulted ones too), in
// order: what a test counts to hold forge to a call budget.
type Request struct {
	Route, Method, Path, Query string
	// Conditional: it carried If-None-Match; NotModified: it was
	// answered 304, which GitHub's rate limit does not count.
	Conditional, NotModified bool
}

// Server is the fake GitHub. URL is its root (without /api/v3).
type Server struct {
	URL         string
	Owner, Repo string

	srv     *httptest.Server
	sleeper *Sleeper
	epoch   time.Time // seeded issues' creation times count from here

	mu            sync.Mutex
	issues        map[int]*issue // pull requests too, as GitHub does
	comments      map[int][]*comment
	pulls         map[int]*pull
	next          int
	nextComment   int64
	defaultBranch string
	counts        map[string]int
	total         int
	notModified   int // of total: answered 304 Not Modified
	mutations     []Mutation
	requests      []Request
	faults        []*fault
	hooks         []hook
	reviews       []*review
	threads       []*thread

	checks           []Check
	checksBy         func(sha string) []Check
	checkClocks      map[string]*checkClock
	required         map[string][]string // classic branch protection's required checks
	ruleChecks       map[string][]string // rulesets' required checks
	protectionDenied bool
}

type issue struct {
	number             int
	title, body, state string
	stateReason        string
	labels             []string
	created, updated   time.Time
	isPR               bool
}

type comment struct {
	id      int64
	issue   int
	body    string
	author  string
	created time.Time
}

type pull struct {
	number                     int
	head, base, title, body    string
	state                      string
	merged                     bool
	mergedAt, created, updated time.Time
}

// NewServer starts a fake GitHub holding repository owner/repo, with
// default branch "main"; it is closed when the test ends.
func NewServer(t testing.TB, owner, repo string) *Server {
	t.Helper()
	s := &Server{
		Owner: owner, Repo: repo, sleeper: &Sleeper{},
		epoch:  time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		issues: map[int]*issue{}, comments: map[int][]*comment{}, pulls: map[int]*pull{},
		next: 1, nextComment: 1000, defaultBranch: "main", counts: map[string]int{},
		checkClocks: map[string]*checkClock{}, required: map[string][]string{}, ruleChecks: map[string][]string{},
	}
	s.srv = httptest.NewServer(s.mux())
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// HTTPClient is a client for the server.
func (s *Server) HTTPClient() *http.Client { return s.srv.Client() }

// Sleeper is the Sleep that Options injects: it returns at once and
// records each wait.
func (s *Server) Sleeper() *Sleeper { return s.sleeper }

// Options returns forge.GitHubOptions for this server: its URL, Token, its
// HTTP client and the server's Sleeper. Callers may set Logger and others.
func (s *Server) Options() forge.GitHubOptions {
	return forge.GitHubOptions{
		Owner: s.Owner, Repo: s.Repo, APIURL: s.URL, Token: Token,
		HTTPClient: s.HTTPClient(), Sleep: s.sleeper.Sleep,
	}
}

// Source is a forge.GitHub for this server, built from Options.
func (s *Server) Source(t testing.TB) *forge.GitHub {
	t.Helper()
	g, err := forge.NewGitHub(s.Options())
	if err != nil {
		t.Fatalf("forgetest: NewGitHub: %v", err)
	}
	return g
}

// SetDefaultBranch changes what the repository reports as default branch.
func (s *Server) SetDefaultBranch(b string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.defaultBranch = b
}

// AddIssue stores i (number 0 → the next free one; state "" → open;
// zero CreatedAt → one minute per number after 2024-01-01), with its
// Comments, and returns its number.
func (s *Server) AddIssue(i backlog.Issue) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.number(i.Number)
	created := i.CreatedAt
	if created.IsZero() {
		created = s.epoch.Add(time.Duration(n) * time.Minute)
	}
	state := i.State
	if state == "" {
		state = "open"
	}
	s.issues[n] = &issue{number: n, title: i.Title, body: i.Body, state: state,
		labels: slices.Clone(i.Labels), created: created, updated: created}
	for _, c := range i.Comments {
		s.addComment(n, c.Author, c.Body, c.CreatedAt)
	}
	return n
}

// AddPR stores an open pull request head→base (it also appears in the
// issues list, as on GitHub) and returns its number.
func (s *Server) AddPR(head, base, title, body string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.createPR(head, base, title, body)
}

// SetPRState sets a pull request's state ("open" | "closed") and whether
// it was merged.
func (s *Server) SetPRState(n int, state string, merged bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pulls[n]; p != nil {
		p.state, p.merged = state, merged
		if merged {
			p.mergedAt = time.Now().UTC().Truncate(time.Second)
		}
		s.issues[n].state = state
	}
}

// AddComment stores a comment by author on issue n and returns its id.
func (s *Server) AddComment(n int, author, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addComment(n, author, body, time.Time{}).id
}

func (s *Server) number(want int) int {
	n := want
	if n <= 0 {
		n = s.next
	}
	s.next = max(s.next, n+1)
	return n
}

func (s *Server) addComment(n int, author, body string, at time.Time) *comment {
	if at.IsZero() {
		at = time.Now().UTC().Truncate(time.Second)
	}
	if author == "" {
		author = "test-user"
	}
	c := &comment{id: s.nextComment, issue: n, body: body, author: author, created: at}
	s.nextComment++
	s.comments[n] = append(s.comments[n], c)
	return c
}

func (s *Server) createPR(head, base, title, body string) int {
	n := s.number(0)
	now := time.Now().UTC().Truncate(time.Second)
	s.pulls[n] = &pull{number: n, head: head, base: base, title: title, body: body,
		state: "open", created: now, updated: now}
	s.issues[n] = &issue{number: n, title: title, body: body, state: "open",
		labels: []string{}, created: now, updated: now, isPR: true}
	return n
}

// Issue is a snapshot of issue n with its comments.
func (s *Server) Issue(n int) (backlog.Issue, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.issues[n]
	if it == nil {
		return backlog.Issue{}, false
	}
	return backlog.Issue{Number: n, Title: it.title, Body: it.body, Labels: slices.Clone(it.labels),
		State: it.state, CreatedAt: it.created, URL: s.htmlURL(it), Comments: s.commentsOf(n)}, true
}

// StateReason is issue n's state_reason ("" when none).
func (s *Server) StateReason(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if it := s.issues[n]; it != nil {
		return it.stateReason
	}
	return ""
}

// Comments are issue n's comments, oldest first.
func (s *Server) Comments(n int) []backlog.Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commentsOf(n)
}

func (s *Server) commentsOf(n int) []backlog.Comment {
	out := []backlog.Comment{}
	for _, c := range s.comments[n] {
		out = append(out, backlog.Comment{ID: c.id, Body: c.body, Author: c.author, CreatedAt: c.created})
	}
	return out
}

// PRs are all pull requests, by number.
func (s *Server) PRs() []forge.PR {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []forge.PR
	for _, p := range s.pulls {
		out = append(out, forge.PR{Number: p.number, URL: s.URL + "/" + s.Owner + "/" + s.Repo + "/pull/" + itoa(p.number),
			Head: p.head, Base: p.base, Title: p.title, Body: p.body, State: p.state, Merged: p.merged})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

// Mutations are the changes applied so far, in order.
func (s *Server) Mutations() []Mutation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.mutations)
}

// MutationsOn are the mutations of one route, in order.
func (s *Server) MutationsOn(route string) []Mutation {
	var out []Mutation
	for _, m := range s.Mutations() {
		if m.Route == route {
			out = append(out, m)
		}
	}
	return out
}

// Count is how many requests reached route (failed and faulted ones too).
func (s *Server) Count(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[route]
}

// Requests are the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Total is how many requests reached the server, on any route.
func (s *Server) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// Counted is how many requests GitHub's rate limit would count: Total
// less the conditional ones answered 304 Not Modified.
func (s *Server) Counted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total - s.notModified
}

// NotModified is how many requests were answered 304 Not Modified.
func (s *Server) NotModified() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notModified
}

func (s *Server) mutate(r *http.Request, route string, n int, summary string) {
	s.mutations = append(s.mutations, Mutation{Route: route, Method: r.Method,
		Path: strings.TrimPrefix(r.URL.Path, "/api/v3"), Issue: n, Summary: summary})
}
