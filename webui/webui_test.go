package webui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/dashboard"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// fixture is a lane on disk with one agent whose log has lines 1..n.
type fixture struct {
	layout lanes.Layout
	lane   state.Lane
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	layout := lanes.New(t.TempDir(), ".wave", "p", "main")
	run := layout.RunDir(1, "A1", 1)
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&log, "line %d\n", i)
	}
	logPath := filepath.Join(run, lanes.LogFile)
	if err := os.WriteFile(logPath, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	l := state.Lane{SchemaVersion: 1, Lane: "main", GeneratedAt: time.Unix(0, 0).UTC(), Waves: []state.Wave{{
		Wave: 1, Status: state.WaveCompleted, Agents: []state.Agent{{ID: "A1", Title: "<b>title</b>", State: "completed", RunDir: run, LogPath: logPath}},
	}}}
	return &fixture{layout: layout, lane: l}
}

func (f *fixture) options() Options {
	return Options{Layout: f.layout, State: func(context.Context) (state.Lane, error) { return f.lane, nil }}
}

func get(t *testing.T, h http.Handler, path string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	// A stream let through by mistake ends, so the test fails rather
	// than hangs.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:7777"+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestStateIsTheStatusJSONDocument(t *testing.T) {
	f := newFixture(t)
	w := get(t, New(f.options()).Handler(), "/api/v1/state")
	if w.Code != http.StatusOK {
		t.Fatalf("GET /api/v1/state: %d %s", w.Code, w.Body)
	}
	var want bytes.Buffer
	if err := dashboard.WriteStatusJSON(&want, f.lane, -1); err != nil {
		t.Fatal(err)
	}
	if w.Body.String() != want.String() {
		t.Fatalf("state document differs from status --json:\n got %s\nwant %s", w.Body, want.String())
	}
}

func TestTokenIsRequiredOnEveryRequest(t *testing.T) {
	f := newFixture(t)
	o := f.options()
	o.Token = "s3cret-token"
	h := New(o).Handler()
	for _, p := range []string{"/", "/app.js", "/api/v1/about", "/api/v1/state", "/api/v1/questions", "/api/v1/backlog", "/api/v1/runs/1/A1/log", "/api/v1/events"} {
		if w := get(t, h, p); w.Code != http.StatusUnauthorized {
			t.Errorf("GET %s without a token: %d, want 401", p, w.Code)
		}
		if w := get(t, h, p, "Authorization", "Bearer wrong"); w.Code != http.StatusUnauthorized {
			t.Errorf("GET %s with a wrong token: %d, want 401", p, w.Code)
		}
		if strings.HasSuffix(p, "/events") {
			continue // a stream: its 200 is checked in the SSE test
		}
		if w := get(t, h, p, "Authorization", "Bearer s3cret-token"); w.Code == http.StatusUnauthorized || w.Code == http.StatusForbidden {
			t.Errorf("GET %s with the token: %d %s", p, w.Code, w.Body)
		}
	}
	if w := get(t, h, "/api/v1/state", "Authorization", "Bearer s3cret-token"); w.Code != http.StatusOK {
		t.Fatalf("GET /api/v1/state with the token: %d", w.Code)
	}
	// The page's way in: the login form sets a cookie that then works.
	r := httptest.NewRequest(http.MethodPost, "http://10.0.0.5:7777/login", strings.NewReader("token=s3cret-token"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusSeeOther || len(w.Result().Cookies()) != 1 {
		t.Fatalf("POST /login with the token: %d, cookies %v", w.Code, w.Result().Cookies())
	}
	c := w.Result().Cookies()[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || strings.Contains(c.Value, "s3cret") {
		t.Fatalf("token cookie %+v: want HttpOnly, SameSite=Strict, and not the token itself", c)
	}
	if w := get(t, h, "/api/v1/state", "Cookie", c.Name+"=s3cret-token"); w.Code != http.StatusUnauthorized {
		t.Fatalf("the token itself as the cookie: %d, want 401", w.Code)
	}
	if w := get(t, h, "/api/v1/state", "Cookie", c.Name+"="+c.Value); w.Code != http.StatusOK {
		t.Fatalf("GET /api/v1/state with the login cookie: %d", w.Code)
	}
	if w := get(t, h, "/"); !strings.Contains(w.Body.String(), `action="/login"`) {
		t.Fatalf("GET / without a token shows no login form: %s", w.Body)
	}
}

func TestServingOffLoopbackNeedsAToken(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:7777": true, "localhost:0": true, "[::1]:7777": true, "0.0.0.0:7777": false, ":7777": false, "192.168.1.4:80": false} {
		err := CheckAddr(addr, "")
		if (err == nil) != ok {
			t.Errorf("CheckAddr(%q, no token) = %v, want ok=%v", addr, err, ok)
		}
		if err := CheckAddr(addr, "t"); err != nil {
			t.Errorf("CheckAddr(%q, token) = %v", addr, err)
		}
	}
	err := ListenAndServe(context.Background(), "0.0.0.0:0", Options{}, nil)
	if err == nil || !strings.Contains(err.Error(), "--token-env") {
		t.Fatalf("ListenAndServe off loopback without a token: %v", err)
	}
}

func TestLoopbackServerRefusesAForeignHostName(t *testing.T) {
	f := newFixture(t)
	h := New(f.options()).Handler()
	r := httptest.NewRequest(http.MethodGet, "http://attacker.example:7777/api/v1/state", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden {
		t.Fatalf("GET with Host attacker.example on a token-less server: %d, want 403", w.Code)
	}
	if w := get(t, h, "/api/v1/state"); w.Code != http.StatusOK {
		t.Fatalf("GET with a loopback Host: %d", w.Code)
	}
}

func TestLogTailIsBoundedAndNamesNoFile(t *testing.T) {
	f := newFixture(t)
	secret := filepath.Join(f.layout.RepoRoot, "secret")
	_ = os.WriteFile(secret, []byte("do not serve\n"), 0o644)
	h := New(f.options()).Handler()
	if w := get(t, h, "/api/v1/runs/1/A1/log?tail=3"); w.Code != http.StatusOK || w.Body.String() != "line 48\nline 49\nline 50\n" {
		t.Fatalf("tail=3: %d %q", w.Code, w.Body)
	}
	if w := get(t, h, "/api/v1/runs/1/A1/log"); strings.Count(w.Body.String(), "\n") != 50 {
		t.Fatalf("default tail of a 50-line log: %q", w.Body)
	}
	if w := get(t, h, "/api/v1/runs/1/A1/log?tail=999999999"); w.Code != http.StatusOK {
		t.Fatalf("a huge tail is capped, not refused: %d", w.Code)
	}
	for path, code := range map[string]int{
		"/api/v1/runs/1/A1/log?tail=-1":         http.StatusBadRequest,
		"/api/v1/runs/1/A1/log?tail=x":          http.StatusBadRequest,
		"/api/v1/runs/x/A1/log":                 http.StatusBadRequest,
		"/api/v1/runs/1/..%2F..%2Fsecret/log":   http.StatusBadRequest,
		"/api/v1/runs/1/.hidden/log":            http.StatusBadRequest,
		"/api/v1/runs/1/A2/log":                 http.StatusNotFound,
		"/api/v1/runs/2/A1/log":                 http.StatusNotFound,
		"/api/v1/runs/1/..%2F..%2F..%2Fetc/log": http.StatusBadRequest,
	} {
		w := get(t, h, path)
		if w.Code != code {
			t.Errorf("GET %s: %d, want %d (%s)", path, w.Code, code, w.Body)
		}
		if strings.Contains(w.Body.String(), "do not serve") {
			t.Errorf("GET %s served a file outside the lane", path)
		}
	}
	// A state whose log path points outside the lane is not followed.
	f.lane.Waves[0].Agents[0].LogPath = secret
	if w := get(t, h, "/api/v1/runs/1/A1/log"); w.Code != http.StatusNotFound || strings.Contains(w.Body.String(), "do not serve") {
		t.Fatalf("log path outside the state dir: %d %q", w.Code, w.Body)
	}
}

func TestAnsweringIsOffUnlessAllowed(t *testing.T) {
	f := newFixture(t)
	q, err := questions.Post(f.layout, questions.Ask{Wave: 1, AgentID: "A1", Attempt: 1, Text: "which colour?", Blocking: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	o := f.options()
	post := func(h http.Handler, id, ct, origin, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7777/api/v1/questions/"+id+"/answer", strings.NewReader(body))
		r.Header.Set("Content-Type", ct)
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	state := func() string {
		qs, _, err := questions.List(f.layout)
		if err != nil || len(qs) != 1 {
			t.Fatalf("questions: %v %v", qs, err)
		}
		return qs[0].State + ":" + qs[0].Answer + ":" + qs[0].Operator
	}
	if w := post(New(o).Handler(), q.ID, "application/json", "", `{"answer":"blue"}`); w.Code != http.StatusForbidden {
		t.Fatalf("answer without --allow-answer: %d, want 403", w.Code)
	}
	o.AllowAnswer = true
	h := New(o).Handler()
	for _, c := range []struct {
		why, ct, origin, body string
		code                  int
	}{
		{"a text/plain body (what a cross-site form can send)", "text/plain", "", `{"answer":"blue"}`, http.StatusUnsupportedMediaType},
		{"another origin", "application/json", "http://evil.example", `{"answer":"blue"}`, http.StatusForbidden},
		{"an opaque origin the browser does not vouch for", "application/json", "null", `{"answer":"blue"}`, http.StatusForbidden},
		{"an empty answer", "application/json", "", `{"answer":"  "}`, http.StatusBadRequest},
		{"an unknown field", "application/json", "", `{"answer":"blue","force":true}`, http.StatusBadRequest},
	} {
		if w := post(h, q.ID, c.ct, c.origin, c.body); w.Code != c.code {
			t.Errorf("%s: %d, want %d (%s)", c.why, w.Code, c.code, w.Body)
		}
	}
	if got := state(); got != "pending::" {
		t.Fatalf("refused requests changed the question: %s", got)
	}
	if w := post(h, "q-nosuch", "application/json", "", `{"answer":"blue"}`); w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), q.ID) {
		t.Fatalf("an unknown id: %d %s, want 404 naming the pending %s", w.Code, w.Body, q.ID)
	}
	if w := post(h, q.ID, "application/json", "http://127.0.0.1:7777", `{"answer":"blue, <b>not</b> red"}`); w.Code != http.StatusOK {
		t.Fatalf("a same-origin JSON answer: %d %s", w.Code, w.Body)
	}
	if got := state(); got != "answered:blue, <b>not</b> red:web" {
		t.Fatalf("after the answer: %s", got)
	}
	if w := post(h, q.ID, "application/json", "", `{"answer":"red"}`); w.Code != http.StatusConflict {
		t.Fatalf("answering again: %d, want 409", w.Code)
	}
	w := get(t, h, "/api/v1/questions")
	var qs []questions.Question
	if err := json.Unmarshal(w.Body.Bytes(), &qs); err != nil || len(qs) != 1 || qs[0].ID != q.ID {
		t.Fatalf("GET /api/v1/questions: %s (%v)", w.Body, err)
	}
}

func TestPageNeverInsertsMarkup(t *testing.T) {
	names, _ := fs.Glob(pageFS, "page/*.js")
	for _, name := range append(names, "page/index.html") {
		b, err := pageFS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
			if bytes.Contains(b, []byte(sink)) {
				t.Errorf("%s uses %s: untrusted text must only reach the page as text", name, sink)
			}
		}
	}
	f := newFixture(t)
	w := get(t, New(f.options()).Handler(), "/")
	csp := w.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Fatalf("page CSP %q: want scripts from this origin only", csp)
	}
	if !strings.Contains(w.Body.String(), `<script src="app.js"`) {
		t.Fatalf("GET / is not the page: %s", w.Body)
	}
}
