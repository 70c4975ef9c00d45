package forgetest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

func (s *Server) pullsList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	// Like GitHub, a head filter not in "owner:branch" form is ignored.
	head, hasHead := "", false
	if owner, branch, ok := strings.Cut(q.Get("head"), ":"); ok {
		if !strings.EqualFold(owner, s.Owner) {
			branch = "\x00no such branch"
		}
		head, hasHead = branch, true
	}
	base := q.Get("base")
	var list []*pull
	for _, p := range s.pulls {
		if (state == "all" || p.state == state) && (!hasHead || p.head == head) && (base == "" || p.base == base) {
			list = append(list, p)
		}
	}
	slices.SortFunc(list, func(a, b *pull) int { return b.number - a.number })
	page := paginate(w, r, list)
	out := make([]any, 0, len(page))
	for _, p := range page {
		out = append(out, s.pullJSON(p))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) pullCreate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Title *string `json:"title"`
		Head  *string `json:"head"`
		Base  *string `json:"base"`
		Body  *string `json:"body"`
	}
	if !decode(w, r, &req) {
		return
	}
	if req.Title == nil || req.Head == nil || req.Base == nil || *req.Head == "" || *req.Base == "" {
		validationFailed(w, "title, head and base are required")
		return
	}
	head := *req.Head
	if owner, branch, ok := strings.Cut(head, ":"); ok && strings.EqualFold(owner, s.Owner) {
		head = branch
	}
	for _, p := range s.pulls {
		if p.state == "open" && p.head == head && p.base == *req.Base {
			validationFailed(w, fmt.Sprintf("A pull request already exists for %s:%s.", s.Owner, head))
			return
		}
	}
	body := ""
	if req.Body != nil {
		body = *req.Body
	}
	n := s.createPR(head, *req.Base, *req.Title, body)
	s.mutate(r, RoutePullCreate, n, fmt.Sprintf("create PR #%d %s → %s", n, head, *req.Base))
	writeJSON(w, http.StatusCreated, s.pullJSON(s.pulls[n]))
}

func (s *Server) lookupPull(w http.ResponseWriter, r *http.Request) *pull {
	var n int
	if _, err := fmt.Sscanf(r.PathValue("n"), "%d", &n); err == nil {
		if p := s.pulls[n]; p != nil {
			return p
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
	return nil
}

func (s *Server) pullGet(w http.ResponseWriter, r *http.Request) {
	if p := s.lookupPull(w, r); p != nil {
		writeJSON(w, http.StatusOK, s.pullJSON(p))
	}
}

func (s *Server) pullEdit(w http.ResponseWriter, r *http.Request) {
	p := s.lookupPull(w, r)
	if p == nil {
		return
	}
	var req struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
		State *string `json:"state"`
		Base  *string `json:"base"`
	}
	if !decode(w, r, &req) {
		return
	}
	var changed []string
	if req.Title != nil {
		p.title = *req.Title
		changed = append(changed, "title")
	}
	if req.Body != nil {
		p.body = *req.Body
		changed = append(changed, "body")
	}
	if req.State != nil {
		p.state = *req.State
		s.issues[p.number].state = *req.State
		changed = append(changed, "state="+*req.State)
	}
	if req.Base != nil {
		p.base = *req.Base
		changed = append(changed, "base="+*req.Base)
	}
	p.updated = time.Now().UTC().Truncate(time.Second)
	s.mutate(r, RoutePullEdit, p.number, fmt.Sprintf("edit PR #%d %s", p.number, strings.Join(changed, " ")))
	writeJSON(w, http.StatusOK, s.pullJSON(p))
}

func (s *Server) pullJSON(p *pull) map[string]any {
	var mergedAt any
	if p.merged {
		mergedAt = p.mergedAt
	}
	return map[string]any{
		"number": p.number, "state": p.state, "title": p.title, "body": p.body,
		"html_url": fmt.Sprintf("%s/%s/%s/pull/%d", s.URL, s.Owner, s.Repo, p.number),
		"head":     map[string]any{"ref": p.head, "label": s.Owner + ":" + p.head},
		"base":     map[string]any{"ref": p.base, "label": s.Owner + ":" + p.base},
		"merged":   p.merged, "merged_at": mergedAt,
		"created_at": p.created, "updated_at": p.updated, "draft": false,
	}
}

func validationFailed(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
		"message": "Validation Failed",
		"errors":  []any{map[string]any{"resource": "PullRequest", "code": "custom", "message": msg}},
	})
}
