package forgetest

import (
	"fmt"
	"net/http"
	"regexp"
)

// RouteGraphQL is POST /api/graphql (and /graphql): only the review
// threads query forge sends is understood.
const RouteGraphQL = "graphql"

// ThreadComment is one comment of a seeded review thread ("test-user"
// when Author is empty, "COLLABORATOR" when Assoc is).
type ThreadComment struct {
	Author string
	Assoc  string
	Body   string
}

type thread struct {
	id                 string
	pr                 int
	path               string
	line               int
	resolved, outdated bool
	comments           []ThreadComment
	commentIDs         []int64
}

// AddThread stores an unresolved, current review thread on pull request
// pr at path:line and returns its node id. As on GitHub, every comment
// of it belongs to a review: each comment also adds a COMMENTED review
// by its author.
func (s *Server) AddThread(pr int, path string, line int, comments ...ThreadComment) string {
	s.mu.Lock()
	th := &thread{id: fmt.Sprintf("PRRT_%d", s.nextComment), pr: pr, path: path, line: line}
	for _, c := range comments {
		if c.Author == "" {
			c.Author = "test-user"
		}
		if c.Assoc == "" {
			c.Assoc = "COLLABORATOR"
		}
		th.comments = append(th.comments, c)
		th.commentIDs = append(th.commentIDs, s.nextComment)
		s.nextComment++
	}
	s.threads = append(s.threads, th)
	s.mu.Unlock()
	for _, c := range th.comments {
		s.AddReview(pr, c.Author, c.Assoc, "COMMENTED", "")
	}
	return th.id
}

// ResolveThread marks thread id resolved, as a person's "Resolve
// conversation" does.
func (s *Server) ResolveThread(id string) { s.setThread(id, func(t *thread) { t.resolved = true }) }

// OutdateThread marks thread id outdated: the lines it was left on
// changed since.
func (s *Server) OutdateThread(id string) { s.setThread(id, func(t *thread) { t.outdated = true }) }

func (s *Server) setThread(id string, fn func(*thread)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.threads {
		if t.id == id {
			fn(t)
		}
	}
}

// threadsQueryShape is the one query served: review threads of a pull
// request, its variables naming owner, name and number.
var threadsQueryShape = regexp.MustCompile(`repository\(owner: \$owner, name: \$name\)\s*\{\s*pullRequest\(number: \$number\)\s*\{\s*reviewThreads\(first: 100\)`)

func (s *Server) graphql(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Query     string `json:"query"`
		Variables struct {
			Owner  string `json:"owner"`
			Name   string `json:"name"`
			Number int    `json:"number"`
		} `json:"variables"`
	}
	if !decode(w, r, &req) {
		return
	}
	if !threadsQueryShape.MatchString(req.Query) {
		writeJSON(w, http.StatusOK, map[string]any{"errors": []any{map[string]any{
			"type": "UNSUPPORTED", "message": "forgetest serves only the review threads query"}}})
		return
	}
	v := req.Variables
	var pr any
	if v.Owner == s.Owner && v.Name == s.Repo && s.pulls[v.Number] != nil {
		nodes := []any{}
		for _, t := range s.threads {
			if t.pr == v.Number {
				nodes = append(nodes, threadJSON(t))
			}
		}
		pr = map[string]any{"reviewThreads": map[string]any{"nodes": nodes}}
	}
	if pr == nil {
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"repository": nil},
			"errors": []any{map[string]any{"type": "NOT_FOUND", "message": "Could not resolve to a PullRequest"}}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"repository": map[string]any{"pullRequest": pr}}})
}

func threadJSON(t *thread) map[string]any {
	comments := []any{}
	for i, c := range t.comments {
		comments = append(comments, map[string]any{"databaseId": t.commentIDs[i],
			"author": map[string]any{"login": c.Author}, "authorAssociation": c.Assoc, "body": c.Body})
	}
	return map[string]any{"id": t.id, "isResolved": t.resolved, "isOutdated": t.outdated,
		"path": t.path, "line": t.line, "comments": map[string]any{"nodes": comments}}
}
