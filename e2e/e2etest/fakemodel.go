package e2etest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// FakeModel is a small Anthropic Messages API on 127.0.0.1 that scripts a
// backlog worker for the real claude CLI: asked about issue N, its first
// turn calls the Bash tool to write src/iN/done.txt (inside the issue's
// declared surface) and commit it; once the tool's result comes back it
// ends with the [backlog-result] marker (see forgetMarker). Any other
// request (the probe, a side query the CLI makes on its own) gets a
// one-word answer. It answers both non-streaming JSON and `stream: true`
// server-sent events.
type FakeModel struct {
	*httptest.Server
	mu  sync.Mutex
	log []string // one line per request, for the failure report
	// Also, when set, is shell the worker's tool call runs first (what a
	// worker the issue's text turned would try).
	Also string
	// tools are the conversations ScriptTools set up, results the tool
	// results they got back, bodies every Messages request as sent
	// (fakemodel_tools.go).
	tools   []toolScript
	results []ToolResult
	bodies  []string
	// limitUntil, while in the future, makes every Messages request
	// answer as the API does for a subscription whose session limit is
	// reached (see LimitUntil).
	limitUntil time.Time
}

// LimitUntil makes the model answer every Messages request until t as
// Anthropic's API does for a subscriber whose five-hour limit is reached:
// 429, with the unified rate-limit headers naming t as the reset. The
// claude CLI signed in with a subscription token then prints "You've hit
// your session limit · resets …" (in stream-json, a rate_limit_event
// with the exact reset) and exits 1 without retrying.
func (f *FakeModel) LimitUntil(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limitUntil = t
}

// limited answers r as a usage limit when the window is open.
func (f *FakeModel) limited(w http.ResponseWriter, r *http.Request) bool {
	f.mu.Lock()
	until := f.limitUntil
	f.mu.Unlock()
	if !time.Now().Before(until) {
		return false
	}
	f.note(r, "→ usage limit")
	reset := until.Unix()
	if until.Nanosecond() > 0 {
		reset++
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("anthropic-ratelimit-unified-status", "rejected")
	h.Set("anthropic-ratelimit-unified-reset", strconv.FormatInt(reset, 10))
	h.Set("anthropic-ratelimit-unified-representative-claim", "five_hour")
	w.WriteHeader(http.StatusTooManyRequests)
	fmt.Fprint(w, `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit. Please try again later."}}`)
	return true
}

// NewFakeModel starts the fake model on 127.0.0.1 until the test ends.
func NewFakeModel(t *testing.T) *FakeModel {
	t.Helper()
	f := &FakeModel{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", f.messages)
	mux.HandleFunc("POST /v1/messages/count_tokens", func(w http.ResponseWriter, r *http.Request) {
		f.note(r, "count_tokens")
		writeJSON(w, map[string]any{"input_tokens": 100})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// Health checks, feature flags, anything else: empty and fine.
		f.note(r, "other")
		if r.Method == http.MethodHead {
			return
		}
		writeJSON(w, map[string]any{})
	})
	f.Server = httptest.NewServer(mux) // httptest listens on 127.0.0.1
	t.Cleanup(f.Close)
	return f
}

func (f *FakeModel) note(r *http.Request, what string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, fmt.Sprintf("%s %s: %s", r.Method, r.URL.RequestURI(), what))
}

// Requests is the request log so far.
func (f *FakeModel) Requests() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.log, "\n")
}

// msgRequest is the part of a Messages request the script reads.
type msgRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string or a list of blocks
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// block is one content block of a request or a reply.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"` // a tool_result's
	IsError   bool            `json:"is_error,omitempty"`
}

func blocksOf(raw json.RawMessage) []block {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []block{{Type: "text", Text: s}}
	}
	var bs []block
	_ = json.Unmarshal(raw, &bs)
	return bs
}

// ForgetMarker in an issue's body makes the worker's first attempt end
// without its marker (a failure the supervisor salvages); its relaunch,
// whose prompt says it resumes, ends with the marker.
const ForgetMarker = "fake-model: forget the marker once"

var issueFact = regexp.MustCompile(`(?m)^- issue: #(\d+)$`)

func (f *FakeModel) messages(w http.ResponseWriter, r *http.Request) {
	if f.limited(w, r) {
		return
	}
	var req msgRequest
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, string(body))
	also := f.Also
	f.mu.Unlock()
	content, stop, what, ok := f.scriptedTurn(req)
	if !ok {
		content, stop, what = script(req, also)
	}
	f.note(r, fmt.Sprintf("model=%s stream=%v tools=%d messages=%d → %s", req.Model, req.Stream, len(req.Tools), len(req.Messages), what))
	msg := map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": req.Model,
		"stop_reason": stop, "stop_sequence": nil, "usage": map[string]int{"input_tokens": FakeInputTokens, "output_tokens": FakeOutputTokens,
			"cache_read_input_tokens": FakeCacheReadTokens, "cache_creation_input_tokens": FakeCacheWriteTokens}}
	if !req.Stream {
		msg["content"] = content
		writeJSON(w, msg)
		return
	}
	streamReply(w, msg, content, stop)
}

// The usage every reply reports, so tests can check it arrives end to end
// (each request adds these; the CLI adds them up into its result).
const (
	FakeInputTokens      = 100
	FakeOutputTokens     = 20
	FakeCacheReadTokens  = 300
	FakeCacheWriteTokens = 40
)

// script decides the reply: the worker's tool call, its final marker, or
// a one-word answer to a request that is not a worker's turn.
func script(req msgRequest, also string) (content []block, stop, what string) {
	var first string // the user's words: the worker prompt
	var sawResult bool
	for _, m := range req.Messages {
		for _, b := range blocksOf(m.Content) {
			if m.Role == "user" && b.Type == "text" {
				first += b.Text + "\n"
			}
			if m.Role == "user" && b.Type == "tool_result" {
				sawResult = true
			}
		}
	}
	hasBash := false
	for _, t := range req.Tools {
		hasBash = hasBash || t.Name == "Bash"
	}
	m := issueFact.FindStringSubmatch(first)
	switch {
	case m == nil || !hasBash:
		return []block{{Type: "text", Text: "ok"}}, "end_turn", "side query"
	case sawResult && strings.Contains(first, ForgetMarker) && !strings.Contains(first, "## Resuming after a failed attempt"):
		return []block{{Type: "text", Text: "Committed the file."}}, "end_turn", "no marker"
	case sawResult:
		return []block{{Type: "text", Text: "Committed the file.\n[backlog-result] state=done detail=wrote src/i" + m[1] + "/done.txt"}}, "end_turn", "marker"
	}
	dir := "src/i" + m[1]
	cmd := fmt.Sprintf("mkdir -p %s && echo 'done by the fake model' > %s/done.txt && git add %s && git commit -q -m 'Issue #%s: add %s/done.txt'", dir, dir, dir, m[1], dir)
	if also != "" {
		cmd = "{ " + also + "\n} ; " + cmd
	}
	in, _ := json.Marshal(map[string]string{"command": cmd, "description": "Write and commit the issue's file"})
	return []block{{Type: "text", Text: "Writing the file."}, {Type: "tool_use", ID: "toolu_fake_" + m[1], Name: "Bash", Input: in}}, "tool_use", "tool_use Bash"
}

// streamReply writes msg as the Messages API's server-sent events.
func streamReply(w http.ResponseWriter, msg map[string]any, content []block, stop string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	msg["content"], msg["stop_reason"] = []block{}, nil
	event("message_start", map[string]any{"type": "message_start", "message": msg})
	for i, b := range content {
		switch b.Type {
		case "text":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": b.Text}})
		case "tool_use":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(b.Input)}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": FakeOutputTokens}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
