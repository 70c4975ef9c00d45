// Package webui owns `wave-orchestrator serve`: the lane's read-only HTTP
// API (the status and backlog documents, the questions, the agents' log
// tails, a Server-Sent Events stream of the lane's event logs), the one
// embedded HTML page that shows them live, and the guard around both (a
// Bearer token off loopback, answering only when allowed).
package webui

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

//go:embed page
var pageFS embed.FS

// Options are what a server reads and whom it lets in.
type Options struct {
	Layout lanes.Layout
	// State loads the lane as `status --json` does; the server encodes it
	// with the same writer.
	State func(ctx context.Context) (state.Lane, error)
	// Backlog is the `backlog status --json` document of run (the newest
	// when ""); ErrNoBacklogRun when the lane has none.
	Backlog func(ctx context.Context, run string) (any, error)
	// Answer answers question id as `answer` does (never forced); nil
	// answers with questions.Answer and no issue source, so wave
	// questions only.
	Answer func(ctx context.Context, id, text, operator string) (questions.Question, error)
	// AllowAnswer enables POST /api/v1/questions/{id}/answer.
	AllowAnswer bool
	// Token, when set, is required on every request (Bearer header or
	// the cookie the login form sets).
	Token string
	// Operator is who answers from the page when the request names no
	// one.
	Operator string
	Logger   *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Server is the HTTP side of `serve`; Watch feeds its event stream.
type Server struct {
	opt    Options
	hub    *hub
	mux    *http.ServeMux
	logins *loginLimiter
	lim    limits
}

// New builds a server; call Watch to start its event stream.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Operator == "" {
		o.Operator = "web"
	}
	s := &Server{opt: o, hub: newHub(o.Layout, o.Logger), logins: newLoginLimiter(o.Now), lim: defaultLimits()}
	s.hub.maxSubs = s.lim.streams
	s.routes()
	return s
}

func (s *Server) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(pageFS, "page")
	files := http.FileServerFS(static)
	m.Handle("GET /{$}", files)
	m.Handle("GET /app.js", files)
	m.Handle("GET /waves.js", files)
	m.Handle("GET /app.css", files)
	m.HandleFunc("GET /api/v1/about", s.handleAbout)
	m.HandleFunc("GET /api/v1/state", s.handleState)
	m.HandleFunc("GET /api/v1/backlog", s.handleBacklog)
	m.HandleFunc("GET /api/v1/questions", s.handleQuestions)
	m.HandleFunc("POST /api/v1/questions/{id}/answer", s.handleAnswer)
	m.HandleFunc("GET /api/v1/events", s.handleEvents)
	m.HandleFunc("GET /api/v1/runs/{wave}/{agent}/log", s.handleLog)
	m.HandleFunc("GET /api/v1/backlog/issues/{issue}/log", s.handleIssueLog)
	m.HandleFunc("POST /login", s.handleLogin)
	m.Handle("GET /metrics", s.metricsHandler())
	s.mux = m
}

// Handler is the whole site behind its guard.
func (s *Server) Handler() http.Handler {
	return s.guard(s.mux)
}

// Watch follows the lane's event logs for the event stream until ctx ends.
func (s *Server) Watch(ctx context.Context) error {
	return s.hub.run(ctx)
}

// about is what the page needs to know of the server itself.
type about struct {
	Lane        string `json:"lane"`
	AllowAnswer bool   `json:"allowAnswer"`
}

func (s *Server) handleAbout(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, about{Lane: s.opt.Layout.Lane, AllowAnswer: s.opt.AllowAnswer})
}
