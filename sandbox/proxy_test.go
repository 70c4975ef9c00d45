package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// proxyClient is an HTTP client whose every request goes through the
// proxy on socket, as the shim relays it.
func proxyClient(socket string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:       http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy"}),
		DialContext: func(context.Context, string, string) (net.Conn, error) { return net.Dial("unix", socket) },
	}}
}

func TestTheProxyLetsThroughTheAllowlistOnly(t *testing.T) {
	t.Parallel()
	allowed, allowedHits := counting(t, "allowed")
	other, otherHits := counting(t, "other")
	allowedHost := strings.TrimPrefix(allowed.URL, "http://")
	_, port, _ := net.SplitHostPort(allowedHost)
	allow, err := ParseAllowlist([]string{allowed.URL, "model.example:" + port})
	if err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(t.TempDir(), "p.sock")
	var mu sync.Mutex
	var refused []string
	p, err := ListenProxy(socket, allow, func(hostport, why string) {
		mu.Lock()
		refused = append(refused, hostport+": "+why)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// A name the allowlist allows that resolves to loopback (DNS an
	// attacker controls) is never dialled.
	p.lookup = func(context.Context, string) ([]net.IPAddr, error) {
		return []net.IPAddr{{IP: net.ParseIP("127.0.0.1")}}, nil
	}
	c := proxyClient(socket)
	get := func(u string) (int, string) {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(allowed.URL + "/x"); code != 200 || body != "allowed" {
		t.Errorf("allowed host: %d %q", code, body)
	}
	if code, _ := get(other.URL + "/x"); code != http.StatusForbidden {
		t.Errorf("a host not allowed: %d, want 403", code)
	}
	if code, _ := get("http://model.example:" + port + "/x"); code != http.StatusForbidden {
		t.Errorf("an allowed name resolving to loopback: %d, want 403", code)
	}
	// A tunnel, as HTTPS clients ask for one.
	conn, err := connectVia(socket, allowedHost)
	if err != nil {
		t.Fatalf("CONNECT %s: %v", allowedHost, err)
	}
	fmt.Fprintf(conn, "GET /tunnel HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", allowedHost)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("through the tunnel: %v %v", resp, err)
	}
	conn.Close()
	if _, err := connectVia(socket, strings.TrimPrefix(other.URL, "http://")); err == nil {
		t.Error("a tunnel to a host not allowed was opened")
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the host not allowed got %d requests", n)
	}
	if n := allowedHits.Load(); n != 2 {
		t.Errorf("the allowed host got %d requests, want 2", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(refused) != 2 || !strings.HasPrefix(refused[0], strings.TrimPrefix(other.URL, "http://")+": not on the allowlist") ||
		!strings.HasPrefix(refused[1], "model.example:"+port+": resolves to the internal address 127.0.0.1") {
		t.Errorf("refused %q, want the other host once and the name resolving to loopback", refused)
	}
}
