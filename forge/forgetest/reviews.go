package forgetest

import (
	"net/http"
	"strconv"
	"time"
)

// Routes of pull request reviews.
const (
	RoutePullReviews        = "pulls.reviews"
	RoutePullReviewComments = "pulls.review_comments"
)

// ReviewComment is an inline comment of a seeded review.
type ReviewComment struct {
	Path string
	Line int
	Body string
}

type review struct {
	id                         int64
	pr                         int
	author, assoc, state, body string
	submitted                  time.Time
	comments                   []ReviewComment
}

// AddReview stores a review of pull request pr by author (association
// "COLLABORATOR" when assoc is empty) in state (APPROVED,
// CHANGES_REQUESTED, COMMENTED, DISMISSED) and returns its id.
func (s *Server) AddReview(pr int, author, assoc, state, body string, comments ...ReviewComment) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if assoc == "" {
		assoc = "COLLABORATOR"
	}
	if author == "" {
		author = "test-user"
	}
	id := s.nextComment
	s.nextComment++
	s.reviews = append(s.reviews, &review{id: id, pr: pr, author: author, assoc: assoc, state: state, body: body,
		submitted: time.Now().UTC().Truncate(time.Second), comments: comments})
	return id
}

func (s *Server) reviewsOf(pr int) []*review {
	var out []*review
	for _, rv := range s.reviews {
		if rv.pr == pr {
			out = append(out, rv)
		}
	}
	return out
}

func (s *Server) pullReviews(w http.ResponseWriter, r *http.Request) {
	p := s.lookupPull(w, r)
	if p == nil {
		return
	}
	page := paginate(w, r, s.reviewsOf(p.number))
	out := make([]any, 0, len(page))
	for _, rv := range page {
		out = append(out, map[string]any{
			"id": rv.id, "user": map[string]any{"login": rv.author}, "body": rv.body, "state": rv.state,
			"author_association": rv.assoc, "submitted_at": rv.submitted, "commit_id": p.head,
		})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) pullReviewComments(w http.ResponseWriter, r *http.Request) {
	p := s.lookupPull(w, r)
	if p == nil {
		return
	}
	var comments []ReviewComment
	for _, rv := range s.reviewsOf(p.number) {
		if r.PathValue("id") == strconv.FormatInt(rv.id, 10) {
			comments = rv.comments
		}
	}
	page := paginate(w, r, comments)
	out := make([]any, 0, len(page))
	for _, c := range page {
		out = append(out, map[string]any{"path": c.Path, "line": c.Line, "body": c.Body})
	}
	writeJSON(w, http.StatusOK, out)
}
