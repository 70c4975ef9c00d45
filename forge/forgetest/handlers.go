package forgetest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"
)

const repoPath = "/api/v3/repos/{owner}/{repo}"

func (s *Server) mux() *http.ServeMux {
	m := http.NewServeMux()
	routes := []struct {
		pattern, route string
		h              func(http.ResponseWriter, *http.Request)
	}{
		{"GET " + repoPath, RouteRepoGet, s.repoGet},
		{"GET " + repoPath + "/issues", RouteIssuesList, s.issuesList},
		{"GET " + repoPath + "/issues/{n}", RouteIssueGet, s.issueGet},
		{"PATCH " + repoPath + "/issues/{n}", RouteIssueEdit, s.issueEdit},
		{"POST " + repoPath + "/issues/{n}/labels", RouteLabelsAdd, s.labelsAdd},
		{"DELETE " + repoPath + "/issues/{n}/labels/{name}", RouteLabelRemove, s.labelRemove},
		{"GET " + repoPath + "/issues/{n}/comments", RouteCommentsList, s.commentsList},
		{"POST " + repoPath + "/issues/{n}/comments", RouteCommentCreate, s.commentCreate},
		{"GET " + repoPath + "/pulls", RoutePullsList, s.pullsList},
		{"POST " + repoPath + "/pulls", RoutePullCreate, s.pullCreate},
		{"GET " + repoPath + "/pulls/{n}", RoutePullGet, s.pullGet},
		{"PATCH " + repoPath + "/pulls/{n}", RoutePullEdit, s.pullEdit},
		{"GET " + repoPath + "/pulls/{n}/reviews", RoutePullReviews, s.pullReviews},
		{"GET " + repoPath + "/pulls/{n}/reviews/{id}/comments", RoutePullReviewComments, s.pullReviewComments},
		{"GET " + repoPath + "/commits/{ref}/check-runs", RouteCheckRuns, s.checkRuns},
		{"GET " + repoPath + "/commits/{ref}/status", RouteCombinedStatus, s.combinedStatus},
		{"GET " + repoPath + "/branches/{branch}/protection/required_status_checks", RouteRequiredChecks, s.requiredChecks},
		{"GET " + repoPath + "/rules/branches/{branch...}", RouteBranchRules, s.branchRules},
		{"GET /api/v3/rate_limit", RouteRateLimit, s.rateLimit},
		{"GET /api/v3/user", RouteUser, s.user},
		{"POST /api/graphql", RouteGraphQL, s.graphql},
		{"POST /graphql", RouteGraphQL, s.graphql},
	}
	for _, r := range routes {
		m.HandleFunc(r.pattern, s.serve(r.route, r.h))
	}
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
	})
	return m
}

// serve counts the request, applies any fault, checks the token and the
// repository, and runs h under the server's lock.
func (s *Server) serve(route string, h func(http.ResponseWriter, *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.total++
		s.counts[route]++
		seq := len(s.requests)
		s.requests = append(s.requests, Request{Route: route, Method: r.Method,
			Path: strings.TrimPrefix(r.URL.Path, "/api/v3"), Query: r.URL.RawQuery,
			Conditional: r.Header.Get("If-None-Match") != ""})
		f := s.takeFault(s.total, route)
		hook := s.takeHook(route)
		s.mu.Unlock()
		if hook != nil {
			hook()
		}
		if f != nil && f.kind != faultDrop && f.kind != faultApplyFail {
			s.writeFault(w, f)
			return
		}
		auth := r.Header.Get("Authorization")
		if auth != "Bearer "+Token && auth != "token "+Token {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials"})
			return
		}
		if o := r.PathValue("owner"); o != "" && (!strings.EqualFold(o, s.Owner) || !strings.EqualFold(r.PathValue("repo"), s.Repo)) {
			writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
			return
		}
		rec := httptest.NewRecorder()
		s.mu.Lock()
		h(rec, r)
		s.mu.Unlock()
		switch {
		case f != nil && f.kind == faultDrop:
			dropConnection(w)
		case f != nil && f.kind == faultApplyFail:
			s.writeFault(w, &fault{kind: faultStatus, status: f.status})
		default:
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			code := rec.Code
			if r.Method == http.MethodGet && code == http.StatusOK {
				// An answer's ETag is its body's hash: the same answer,
				// the same tag, and a request that already has it gets a
				// 304 that, as on GitHub, the rate limit does not count.
				etag := etagOf(rec.Body.Bytes())
				w.Header().Set("ETag", etag)
				if matchesETag(r.Header.Get("If-None-Match"), etag) {
					code = http.StatusNotModified
					s.mu.Lock()
					s.notModified++
					s.requests[seq].NotModified = true
					s.mu.Unlock()
				}
			}
			s.rateHeaders(w)
			w.WriteHeader(code)
			if code != http.StatusNotModified {
				w.Write(rec.Body.Bytes())
			}
		}
	}
}

// etagOf is a strong ETag for body.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// matchesETag: header (If-None-Match, a list of tags or *) names etag.
// Weak tags compare as strong ones here, as GitHub's do.
func matchesETag(header, etag string) bool {
	if strings.TrimSpace(header) == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		if t = strings.TrimPrefix(strings.TrimSpace(t), "W/"); t == "*" || t == etag {
			return true
		}
	}
	return false
}

func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("forgetest: response writer cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		conn.Close()
	}
}

func (s *Server) rateHeaders(w http.ResponseWriter) {
	s.mu.Lock()
	used := s.total - s.notModified
	s.mu.Unlock()
	h := w.Header()
	h.Set("X-Ratelimit-Limit", "5000")
	h.Set("X-Ratelimit-Remaining", fmt.Sprint(max(5000-used, 1)))
	h.Set("X-Ratelimit-Used", fmt.Sprint(used))
	h.Set("X-Ratelimit-Reset", fmt.Sprint(time.Now().Add(time.Hour).Unix()))
	h.Set("X-Ratelimit-Resource", "core")
}

func (s *Server) repoGet(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"id": 1, "name": s.Repo, "full_name": s.Owner + "/" + s.Repo,
		"owner": map[string]any{"login": s.Owner}, "default_branch": s.defaultBranch,
		"html_url": s.URL + "/" + s.Owner + "/" + s.Repo, "private": false,
	})
}

func (s *Server) rateLimit(w http.ResponseWriter, r *http.Request) {
	used := s.total - s.notModified
	core := map[string]any{"limit": 5000, "remaining": max(5000-used, 1), "used": used,
		"reset": time.Now().Add(time.Hour).Unix()}
	writeJSON(w, http.StatusOK, map[string]any{"resources": map[string]any{"core": core}, "rate": core})
}

func (s *Server) issuesList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var want []string
	if l := q.Get("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	var list []*issue
	for _, it := range s.issues {
		if (state == "all" || it.state == state) && hasAll(it.labels, want) {
			list = append(list, it)
		}
	}
	asc := q.Get("direction") == "asc"
	slices.SortFunc(list, func(a, b *issue) int {
		if asc {
			return a.number - b.number
		}
		return b.number - a.number
	})
	page := paginate(w, r, list)
	out := make([]any, 0, len(page))
	for _, it := range page {
		out = append(out, s.issueJSON(it))
	}
	writeJSON(w, http.StatusOK, out)
}

// lookup finds the issue (or PR) named by the path; it answers 404 itself.
func (s *Server) lookup(w http.ResponseWriter, r *http.Request) *issue {
	var n int
	if _, err := fmt.Sscanf(r.PathValue("n"), "%d", &n); err == nil {
		if it := s.issues[n]; it != nil {
			return it
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
	return nil
}

func (s *Server) issueGet(w http.ResponseWriter, r *http.Request) {
	if it := s.lookup(w, r); it != nil {
		writeJSON(w, http.StatusOK, s.issueJSON(it))
	}
}

func (s *Server) issueEdit(w http.ResponseWriter, r *http.Request) {
	it := s.lookup(w, r)
	if it == nil {
		return
	}
	var req struct {
		Title       *string   `json:"title"`
		Body        *string   `json:"body"`
		State       *string   `json:"state"`
		StateReason *string   `json:"state_reason"`
		Labels      *[]string `json:"labels"`
	}
	if !decode(w, r, &req) {
		return
	}
	var changed []string
	if req.Title != nil {
		it.title = *req.Title
		changed = append(changed, "title")
	}
	if req.Body != nil {
		it.body = *req.Body
		changed = append(changed, "body")
	}
	if req.State != nil {
		it.state = *req.State
		changed = append(changed, "state="+*req.State)
	}
	if req.StateReason != nil {
		it.stateReason = *req.StateReason
		changed = append(changed, "state_reason="+*req.StateReason)
	}
	if req.Labels != nil {
		it.labels = slices.Clone(*req.Labels)
		changed = append(changed, "labels")
	}
	it.updated = time.Now().UTC().Truncate(time.Second)
	s.mutate(r, RouteIssueEdit, it.number, "edit "+strings.Join(changed, " "))
	writeJSON(w, http.StatusOK, s.issueJSON(it))
}

func (s *Server) labelsAdd(w http.ResponseWriter, r *http.Request) {
	it := s.lookup(w, r)
	if it == nil {
		return
	}
	var names []string
	var wrapped struct {
		Labels []string `json:"labels"`
	}
	body := readBody(r)
	if json.Unmarshal(body, &names) != nil {
		if err := json.Unmarshal(body, &wrapped); err != nil {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Invalid request."})
			return
		}
		names = wrapped.Labels
	}
	var added []string
	for _, l := range names {
		if !hasLabel(it.labels, l) {
			it.labels = append(it.labels, l)
			added = append(added, l)
		}
	}
	s.mutate(r, RouteLabelsAdd, it.number, fmt.Sprintf("add labels %q (new %q)", names, added))
	writeJSON(w, http.StatusOK, labelsJSON(it.labels))
}

func (s *Server) labelRemove(w http.ResponseWriter, r *http.Request) {
	it := s.lookup(w, r)
	if it == nil {
		return
	}
	name := r.PathValue("name")
	if !hasLabel(it.labels, name) {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Label does not exist"})
		return
	}
	it.labels = slices.DeleteFunc(it.labels, func(l string) bool { return strings.EqualFold(l, name) })
	s.mutate(r, RouteLabelRemove, it.number, fmt.Sprintf("remove label %q", name))
	writeJSON(w, http.StatusOK, labelsJSON(it.labels))
}

func (s *Server) commentsList(w http.ResponseWriter, r *http.Request) {
	it := s.lookup(w, r)
	if it == nil {
		return
	}
	page := paginate(w, r, s.comments[it.number])
	out := make([]any, 0, len(page))
	for _, c := range page {
		out = append(out, s.commentJSON(c))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) commentCreate(w http.ResponseWriter, r *http.Request) {
	it := s.lookup(w, r)
	if it == nil {
		return
	}
	var req struct {
		Body *string `json:"body"`
	}
	if !decode(w, r, &req) {
		return
	}
	if req.Body == nil || *req.Body == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed"})
		return
	}
	c := s.addComment(it.number, Login, *req.Body, time.Time{})
	s.mutate(r, RouteCommentCreate, it.number, fmt.Sprintf("create comment %d", c.id))
	writeJSON(w, http.StatusCreated, s.commentJSON(c))
}

// user is GET /user: the token's own account.
func (s *Server) user(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"login": Login, "id": 1, "type": "User"})
}
