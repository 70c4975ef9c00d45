package kube

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/client-go/rest"
)

// recorded is one request the attach made.
type recorded struct {
	method, path string
	query        map[string][]string
	header       http.Header
}

// recorder is an httptest server that keeps every request and refuses
// each upgrade with a Status, as an API server refuses an attach.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.reqs = append(r.reqs, recorded{req.Method, req.URL.Path, req.URL.Query(), req.Header.Clone()})
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"refused by the test server","reason":"BadRequest","code":400}`)
}

func hostClient(t *testing.T, host string) *Client {
	return testClient(t, &rest.Config{Host: host})
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// The attach asks for the agent container's terminal (stdin, stdout, a
// tty, no stderr) on the pod's attach subresource: over WebSocket first,
// then over SPDY when the WebSocket upgrade is refused.
func TestAttachRequestTargetsAgentTerminalWebSocketThenSPDY(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c := hostClient(t, srv.URL)
	err := c.stream(testCtx(t), "agents", "wave-w0-a1-a1-1a2b3c4d-x7k2p", AttachStreams{Stdin: strings.NewReader(""), Stdout: io.Discard})
	var na *NotAttachableError
	if !errors.As(err, &na) {
		t.Fatalf("err = %v (%T), want a *NotAttachableError", err, err)
	}
	if !strings.Contains(err.Error(), "pod agents/wave-w0-a1-a1-1a2b3c4d-x7k2p") || !strings.Contains(na.Reason, "refused by the test server") {
		t.Errorf("error %q does not name the pod and give the server's message", err)
	}
	if len(rec.reqs) != 2 {
		t.Fatalf("%d requests, want 2 (WebSocket, then SPDY): %+v", len(rec.reqs), rec.reqs)
	}
	for i, r := range rec.reqs {
		if r.path != "/api/v1/namespaces/agents/pods/wave-w0-a1-a1-1a2b3c4d-x7k2p/attach" {
			t.Errorf("request %d path %s", i, r.path)
		}
		want := map[string]string{"container": "agent", "stdin": "true", "stdout": "true", "tty": "true"}
		for k, v := range want {
			if got := r.query[k]; len(got) != 1 || got[0] != v {
				t.Errorf("request %d query %s = %v, want %s", i, k, got, v)
			}
		}
		if got := r.query["stderr"]; len(got) > 0 && got[0] == "true" {
			t.Errorf("request %d asks for stderr with a tty", i)
		}
	}
	ws, spdy := rec.reqs[0], rec.reqs[1]
	if ws.method != http.MethodGet || !strings.EqualFold(ws.header.Get("Upgrade"), "websocket") || !strings.Contains(ws.header.Get("Sec-Websocket-Protocol"), "v5.channel.k8s.io") {
		t.Errorf("first request is not a v5 WebSocket upgrade: %s %v", ws.method, ws.header)
	}
	if spdy.method != http.MethodPost || !strings.EqualFold(spdy.header.Get("Upgrade"), "SPDY/3.1") || len(spdy.header.Values("X-Stream-Protocol-Version")) == 0 {
		t.Errorf("second request is not an SPDY upgrade: %s %v", spdy.method, spdy.header)
	}
}

// agentPeer plays the far end of an attach (what the API server relays
// from the kubelet) on the v5 WebSocket channel protocol: it answers
// the first keys with what it was told, the terminal size included.
func agentPeer(t *testing.T, got chan<- string) http.Handler {
	up := websocket.Upgrader{Subprotocols: []string{"v5.channel.k8s.io"}}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		conn, err := up.Upgrade(w, req, nil)
		if err != nil {
			t.Errorf("upgrade: %v", err)
			return
		}
		defer conn.Close()
		var keys, size string
		for keys == "" || size == "" {
			_, msg, err := conn.ReadMessage()
			if err != nil {
				t.Errorf("read: %v", err)
				return
			}
			switch msg[0] {
			case 0: // stdin
				keys = string(msg[1:])
			case 4: // resize
				var s TerminalSize
				if err := json.Unmarshal(msg[1:], &s); err != nil {
					t.Errorf("resize %q: %v", msg[1:], err)
				}
				size = strings.TrimSpace(string(msg[1:]))
			}
		}
		got <- keys
		got <- size
		_ = conn.WriteMessage(websocket.BinaryMessage, append([]byte{1}, "agent says: "+keys+"\r\n"...))
		_ = conn.WriteMessage(websocket.BinaryMessage, append([]byte{3}, `{"metadata":{},"status":"Success"}`...))
		_ = conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	})
}

// What the user types reaches the agent's terminal, its output comes
// back, the terminal size goes along, and the attach ends cleanly when
// the far end closes.
func TestAttachCarriesKeysOutputAndTerminalSize(t *testing.T) {
	t.Parallel()
	got := make(chan string, 2)
	srv := httptest.NewServer(agentPeer(t, got))
	defer srv.Close()
	c := hostClient(t, srv.URL)
	stdin, typing := io.Pipe()
	defer typing.Close()
	go func() { _, _ = io.WriteString(typing, "hello agent") }()
	sizes := make(chan TerminalSize, 1)
	sizes <- TerminalSize{Width: 132, Height: 43}
	var out strings.Builder
	err := c.stream(testCtx(t), "agents", "p", AttachStreams{Stdin: stdin, Stdout: &out, Sizes: sizes})
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	if keys := <-got; keys != "hello agent" {
		t.Errorf("agent got keys %q", keys)
	}
	if size := <-got; size != `{"Width":132,"Height":43}` {
		t.Errorf("agent got size %s", size)
	}
	if out.String() != "agent says: hello agent\r\n" {
		t.Errorf("stdout %q", out.String())
	}
}
