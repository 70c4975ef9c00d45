package forgetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func readBody(r *http.Request) []byte {
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	return b
}

// decode reads a JSON request body into v; it answers 400 itself.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.Unmarshal(readBody(r), v); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
		return false
	}
	return true
}

// paginate returns the page of items that per_page/page ask for (30 and
// 1 by default, at most 100 a page) and sets the Link header GitHub sends.
func paginate[T any](w http.ResponseWriter, r *http.Request, items []T) []T {
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	last := max((len(items)+per-1)/per, 1)
	link := func(p int, rel string) string {
		u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path}
		v := r.URL.Query()
		v.Set("page", strconv.Itoa(p))
		v.Set("per_page", strconv.Itoa(per))
		u.RawQuery = v.Encode()
		return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	lo := min((page-1)*per, len(items))
	hi := min(lo+per, len(items))
	return items[lo:hi]
}

func (s *Server) htmlURL(it *issue) string {
	kind := "issues"
	if it.isPR {
		kind = "pull"
	}
	return fmt.Sprintf("%s/%s/%s/%s/%d", s.URL, s.Owner, s.Repo, kind, it.number)
}

func (s *Server) issueJSON(it *issue) map[string]any {
	m := map[string]any{
		"id": it.number, "number": it.number, "title": it.title, "body": it.body,
		"state": it.state, "labels": labelsJSON(it.labels), "user": map[string]any{"login": "reporter"},
		"created_at": it.created, "updated_at": it.updated, "html_url": s.htmlURL(it),
		"comments": len(s.comments[it.number]),
	}
	if it.stateReason != "" {
		m["state_reason"] = it.stateReason
	}
	if it.isPR {
		m["pull_request"] = map[string]any{
			"url":      fmt.Sprintf("%s/api/v3/repos/%s/%s/pulls/%d", s.URL, s.Owner, s.Repo, it.number),
			"html_url": s.htmlURL(it),
		}
	}
	return m
}

func (s *Server) commentJSON(c *comment) map[string]any {
	return map[string]any{
		"id": c.id, "body": c.body, "user": map[string]any{"login": c.author},
		"created_at": c.created, "updated_at": c.created,
		"html_url": fmt.Sprintf("%s/%s/%s/issues/%d#issuecomment-%d", s.URL, s.Owner, s.Repo, c.issue, c.id),
	}
}

func labelsJSON(labels []string) []any {
	out := make([]any, 0, len(labels))
	for i, l := range labels {
		out = append(out, map[string]any{"id": i + 1, "name": l, "color": "ededed"})
	}
	return out
}

func hasLabel(labels []string, l string) bool {
	for _, x := range labels {
		if strings.EqualFold(x, l) {
			return true
		}
	}
	return false
}

func hasAll(labels, want []string) bool {
	for _, w := range want {
		if !hasLabel(labels, strings.TrimSpace(w)) {
			return false
		}
	}
	return true
}

func itoa(n int) string { return strconv.Itoa(n) }
