package webui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Questions is what the server needs of the lane's questions.
type Questions interface {
	// List is every question of the lane, oldest first, as JSON-able
	// records.
	List(ctx context.Context) (any, error)
	// Answer answers question id; the error's status is StatusOf's.
	Answer(ctx context.Context, id, text, operator string) (any, error)
	// StatusOf maps an Answer error onto an HTTP status (404 unknown id,
	// 409 already answered…).
	StatusOf(err error) int
}

// maxAnswerBytes bounds an answer: it ends up in an agent's prompt.
const maxAnswerBytes = 64 << 10

func (s *Server) handleQuestions(w http.ResponseWriter, r *http.Request) {
	if s.opt.Questions == nil {
		writeJSON(w, http.StatusOK, []any{})
		return
	}
	qs, err := s.opt.Questions.List(r.Context())
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, qs)
}

// answerRequest is the body of POST /api/v1/questions/{id}/answer.
type answerRequest struct {
	Answer   string `json:"answer"`
	Operator string `json:"operator"`
}

func (s *Server) handleAnswer(w http.ResponseWriter, r *http.Request) {
	if !s.opt.AllowAnswer {
		httpError(w, http.StatusForbidden, "answering is off: start serve with --allow-answer")
		return
	}
	if s.opt.Questions == nil {
		httpError(w, http.StatusNotFound, "this lane has no questions")
		return
	}
	// A JSON body only: a cross-site form cannot send one without a
	// preflight this server never grants.
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		httpError(w, http.StatusUnsupportedMediaType, "the answer must be a JSON body {\"answer\": \"…\"}")
		return
	}
	var req answerRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAnswerBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("answer body: %v", err))
		return
	}
	text := strings.TrimSpace(req.Answer)
	if text == "" || !utf8.ValidString(text) {
		httpError(w, http.StatusBadRequest, "answer: must be non-empty UTF-8 text")
		return
	}
	op := strings.TrimSpace(req.Operator)
	if op == "" {
		op = s.opt.Operator
	}
	id := r.PathValue("id")
	q, err := s.opt.Questions.Answer(r.Context(), id, text, op)
	if err != nil {
		httpError(w, s.opt.Questions.StatusOf(err), err.Error())
		return
	}
	s.opt.Logger.Info("serve: question answered", "id", id, "operator", op)
	writeJSON(w, http.StatusOK, q)
}
