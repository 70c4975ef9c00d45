package webui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

// maxAnswerBytes bounds an answer: it ends up in an agent's prompt.
const maxAnswerBytes = questions.MaxAnswer + 4<<10 // the JSON around it

func (s *Server) handleQuestions(w http.ResponseWriter, r *http.Request) {
	qs, problems, err := questions.List(s.opt.Layout)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	for _, p := range problems {
		s.opt.Logger.Warn("serve: questions", "problem", p)
	}
	if qs == nil {
		qs = []questions.Question{}
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
	// Never force: a question answered meanwhile (from the terminal, the
	// dashboard, another page) is refused with what it was answered.
	q, err := s.answer(r.Context(), id, text, op)
	switch {
	case errors.Is(err, questions.ErrUnknownID):
		httpError(w, http.StatusNotFound, err.Error())
		return
	case errors.Is(err, questions.ErrAlreadyAnswered):
		httpError(w, http.StatusConflict, err.Error())
		return
	case err != nil:
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	s.opt.Logger.Info("serve: question answered", "id", id, "operator", op)
	writeJSON(w, http.StatusOK, q)
}

func (s *Server) answer(ctx context.Context, id, text, operator string) (questions.Question, error) {
	if s.opt.Answer != nil {
		return s.opt.Answer(ctx, id, text, operator)
	}
	return questions.Answer(ctx, s.opt.Layout, id, text, operator, false, questions.AnswerOptions{})
}
