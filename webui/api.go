package webui

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/dashboard"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// ErrNoBacklogRun is what Options.Backlog wraps when the run asked for
// does not exist (or the lane never ran its backlog): the endpoint
// answers 404 with it.
var ErrNoBacklogRun = errors.New("no such backlog run")

// Bounds of a log tail: enough to read what an agent is doing, never a
// whole multi-megabyte log per request.
const (
	defaultTailLines = 200
	maxTailLines     = 5000
	maxTailBytes     = 512 << 10
)

// isPathPart reports whether s is one path element an agent or run id
// may be: [A-Za-z0-9][A-Za-z0-9._-]{0,127}. Checked by hand: that regexp
// compiles to 128 copies of its class, half a millisecond of every
// process's start (each agent's runner included).
func isPathPart(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

func (s *Server) handleState(w http.ResponseWriter, r *http.Request) {
	l, err := s.opt.State(r.Context())
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if err := dashboard.WriteStatusJSON(w, l, -1); err != nil {
		s.opt.Logger.Warn("serve: write state", "err", err)
	}
}

func (s *Server) handleBacklog(w http.ResponseWriter, r *http.Request) {
	if s.opt.Backlog == nil {
		httpError(w, http.StatusNotFound, ErrNoBacklogRun.Error())
		return
	}
	run := r.URL.Query().Get("run")
	if run != "" && !isPathPart(run) {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("run %q: not a backlog run id", run))
		return
	}
	v, err := s.opt.Backlog(r.Context(), run)
	switch {
	case errors.Is(err, ErrNoBacklogRun):
		httpError(w, http.StatusNotFound, err.Error())
		return
	case err != nil:
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// handleLog is the tail of one agent's output: the wave and agent must
// name an agent of the lane's state, whose log path the server takes
// from that state, so no request names a file.
func (s *Server) handleLog(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.PathValue("wave"))
	if err != nil || n < 0 {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("wave %q: must be a wave number", r.PathValue("wave")))
		return
	}
	agent := r.PathValue("agent")
	if !isPathPart(agent) || strings.Contains(agent, "..") {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("agent %q: not an agent id", agent))
		return
	}
	lines, ok := tailLines(w, r)
	if !ok {
		return
	}
	l, err := s.opt.State(r.Context())
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	a, ok := findAgent(l, n, agent)
	if !ok {
		httpError(w, http.StatusNotFound, fmt.Sprintf("wave %d has no agent %s", n, agent))
		return
	}
	if a.LogPath == "" || !within(s.opt.Layout.StateDir, a.LogPath) {
		httpError(w, http.StatusNotFound, fmt.Sprintf("wave %d agent %s: no log yet", n, agent))
		return
	}
	writeTail(w, a.LogPath, lines, fmt.Sprintf("wave %d agent %s", n, agent))
}

// tailLines is the tail=N of a log request (the default when absent,
// bounded), ok false when it was answered with an error.
func tailLines(w http.ResponseWriter, r *http.Request) (int, bool) {
	lines := defaultTailLines
	if t := r.URL.Query().Get("tail"); t != "" {
		var err error
		if lines, err = strconv.Atoi(t); err != nil || lines < 1 {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("tail %q: must be a number of lines, 1 or more", t))
			return 0, false
		}
	}
	return min(lines, maxTailLines), true
}

// writeTail answers the last lines of the log at path, of what.
func writeTail(w http.ResponseWriter, path string, lines int, what string) {
	text, err := runtime.ReadLogTail(path, maxTailBytes)
	if err != nil {
		httpError(w, http.StatusNotFound, what+": no log yet")
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, lastLines(text, lines))
}

// handleIssueLog is the tail of a backlog worker's output: the issue must
// be one of the run's (the newest, or ?run=ID), and the file is in the
// latest run directory that run's status document names for it, so no
// request can name a path.
func (s *Server) handleIssueLog(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.PathValue("issue"))
	if err != nil || n < 1 {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("issue %q: must be an issue number", r.PathValue("issue")))
		return
	}
	run := r.URL.Query().Get("run")
	if run != "" && !isPathPart(run) {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("run %q: not a backlog run id", run))
		return
	}
	lines, ok := tailLines(w, r)
	if !ok {
		return
	}
	if s.opt.Backlog == nil {
		httpError(w, http.StatusNotFound, ErrNoBacklogRun.Error())
		return
	}
	v, err := s.opt.Backlog(r.Context(), run)
	switch {
	case errors.Is(err, ErrNoBacklogRun):
		httpError(w, http.StatusNotFound, err.Error())
		return
	case err != nil:
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	dir, found := issueRunDir(v, n)
	what := fmt.Sprintf("issue #%d", n)
	switch {
	case !found:
		httpError(w, http.StatusNotFound, fmt.Sprintf("the backlog run has no issue #%d", n))
		return
	case dir == "" || !within(s.opt.Layout.StateDir, dir):
		httpError(w, http.StatusNotFound, what+": no log yet")
		return
	}
	writeTail(w, filepath.Join(dir, lanes.LogFile), lines, what)
}

// issueRunDir is the latest run directory the backlog status document v
// names for issue n (read through its JSON form, the one the page gets).
func issueRunDir(v any, n int) (string, bool) {
	var doc struct {
		Issues []struct {
			Number int    `json:"number"`
			RunDir string `json:"runDir"`
		} `json:"issues"`
	}
	b, err := json.Marshal(v)
	if err != nil || json.Unmarshal(b, &doc) != nil {
		return "", false
	}
	for _, is := range doc.Issues {
		if is.Number == n {
			return is.RunDir, true
		}
	}
	return "", false
}

func findAgent(l state.Lane, n int, id string) (state.Agent, bool) {
	for _, wv := range l.Waves {
		if wv.Wave != n {
			continue
		}
		for _, a := range wv.Agents {
			if a.ID == id {
				return a, true
			}
		}
	}
	return state.Agent{}, false
}

// within reports whether path lies inside dir.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// lastLines is the last n lines of s (a partial first line dropped when
// the byte bound cut it).
func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	idx := len(s)
	for range n {
		i := strings.LastIndexByte(s[:idx], '\n')
		if i < 0 {
			return s + "\n"
		}
		idx = i
	}
	return s[idx+1:] + "\n"
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// httpError answers {"error": msg}; the message is data for the page,
// which shows it as text.
func httpError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}
