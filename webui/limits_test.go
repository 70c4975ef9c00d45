package webui

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// request sends one GET from client (an IP address) with token ("" for
// none) and returns the answer's code.
func request(t *testing.T, h http.Handler, client, token string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "http://10.0.0.5:7777/api/v1/state", nil)
	r.RemoteAddr = client + ":40000"
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// Wrong tokens from one address are answered 401 loginBurst times, then
// 429 until time passes; its bare requests and other addresses are not
// held back, so nobody can lock the token holder out from elsewhere.
func TestFailedLoginsAreSlowedWithoutLockingOutTheTokenHolder(t *testing.T) {
	const token = "a-token-of-32-bytes-0123456789ab"
	f := newFixture(t)
	now := time.Unix(1_700_000_000, 0)
	o := f.options()
	o.Token, o.Now = token, func() time.Time { return now }
	h := New(o).Handler()
	for i := range loginBurst {
		if w := request(t, h, "198.51.100.7", "guess"); w.Code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d, want 401", i+1, w.Code)
		}
	}
	w := request(t, h, "198.51.100.7", token)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" || w.Header().Get("Connection") != "close" {
		t.Fatalf("a try over the budget: %d %v, want 429 with Retry-After, closing", w.Code, w.Header())
	}
	if w := request(t, h, "198.51.100.7", ""); w.Code != http.StatusUnauthorized {
		t.Errorf("a bare request from the guesser: %d, want 401 (not counted)", w.Code)
	}
	if w := request(t, h, "203.0.113.9", token); w.Code != http.StatusOK {
		t.Errorf("the token holder elsewhere: %d, want 200", w.Code)
	}
	now = now.Add(loginRefill)
	if w := request(t, h, "198.51.100.7", token); w.Code != http.StatusOK {
		t.Errorf("the guesser's address after %s: %d, want 200", loginRefill, w.Code)
	}
}

// Guessing from many addresses neither grows the table past maxClients
// nor guesses faster: addresses past it share one budget.
func TestManyAddressesShareOneBudgetPastTheTable(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := newLoginLimiter(func() time.Time { return now })
	addr := func(i int) string { return fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255) }
	for i := range maxClients {
		l.failed(addr(i))
	}
	for i := maxClients; i < maxClients+loginBurst; i++ {
		if ok, _ := l.allow(addr(i)); !ok {
			t.Fatalf("new address %d refused before the shared budget was spent", i-maxClients+1)
		}
		l.failed(addr(i))
	}
	if ok, _ := l.allow(addr(maxClients + loginBurst)); ok || len(l.by) > maxClients {
		t.Fatalf("after the shared budget: allowed %v, table %d (max %d)", ok, len(l.by), maxClients)
	}
}

// Every 401 closes its connection: a client without the token holds no
// connection (nor file descriptor) of the server's.
func TestAnUnauthorizedAnswerClosesItsConnection(t *testing.T) {
	f := newFixture(t)
	o := f.options()
	o.Token = "a-token-of-32-bytes-0123456789ab"
	h := New(o).Handler()
	for _, tok := range []string{"", "wrong"} {
		if w := request(t, h, "198.51.100.8", tok); w.Code != http.StatusUnauthorized || w.Header().Get("Connection") != "close" {
			t.Errorf("token %q: %d %v, want 401 with Connection: close", tok, w.Code, w.Header())
		}
	}
}

// serveWith runs s on a loopback port until the test ends.
func serveWith(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx, ln, nil) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// An event stream outlives the server's write timeout (which ends slow
// answers), and only so many streams are open at once.
func TestEventStreamsOutliveTheWriteTimeoutAndAreCapped(t *testing.T) {
	f := newFixture(t)
	s := New(f.options())
	s.lim.write, s.lim.read, s.lim.heartbeat, s.lim.streams = 100*time.Millisecond, 100*time.Millisecond, 10*time.Millisecond, 2
	s.hub.maxSubs = s.lim.streams
	base := serveWith(t, s)
	var bodies []*http.Response
	for range s.lim.streams {
		resp, err := http.Get(base + "/api/v1/events")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		bodies = append(bodies, resp)
	}
	extra, err := http.Get(base + "/api/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	extra.Body.Close()
	if extra.StatusCode != http.StatusServiceUnavailable || extra.Header.Get("Retry-After") == "" {
		t.Errorf("a stream over the cap: %d, want 503 with Retry-After", extra.StatusCode)
	}
	// Pings every 10ms: 50 of them span five write timeouts, which a
	// stream still under the deadline would not survive.
	buf := make([]byte, 4096)
	pings := 0
	for pings < 50 {
		n, err := bodies[0].Body.Read(buf)
		if err != nil {
			t.Fatalf("the stream ended after %d pings: %v", pings, err)
		}
		pings += strings.Count(string(buf[:n]), ": ping")
	}
}
