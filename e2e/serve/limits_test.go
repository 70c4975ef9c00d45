package serve

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// serveToken is long enough for serve (at least 16 bytes).
const serveToken = "flood-test-token-0123456789abcdef"

// A token shorter than 16 bytes is refused at start, naming the variable
// and how to make a good one.
func TestServeRefusesAShortToken(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	cmd := r.Command(e2etest.Context(t), "serve", "--addr", "127.0.0.1:0", "--token-env", "SERVE_TEST_SHORT_TOKEN")
	cmd.Env = append(cmd.Env, "SERVE_TEST_SHORT_TOKEN=x")
	res := e2etest.RunCmd(t, cmd)
	if res.Code != e2etest.ExitUsage || !strings.Contains(res.Stderr, "SERVE_TEST_SHORT_TOKEN") ||
		!strings.Contains(res.Stderr, "at least 16") || !strings.Contains(res.Stderr, "openssl rand") {
		t.Fatalf("serve with a 1-byte token: exit %d, want %d naming the variable, the minimum and a fix\n%s%s",
			res.Code, e2etest.ExitUsage, res.Stdout, res.Stderr)
	}
}

// Four hundred connections that ask without the token and then stay
// open, against a serve whose file limit is 200, neither crash it nor
// keep the token holder out.
func TestServeSurvivesAFloodOfUnauthenticatedConnections(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	url := r.ServeUnderFileLimit(t, 200, []string{"SERVE_TEST_TOKEN=" + serveToken}, "--token-env", "SERVE_TEST_TOKEN")
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	var flood []net.Conn
	t.Cleanup(func() {
		for _, c := range flood {
			c.Close()
		}
	})
	for i := range 400 {
		c, err := net.DialTimeout("tcp", addr, 30*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		flood = append(flood, c)
		// A request without the token, kept alive; its answer is never read.
		if _, err := fmt.Fprintf(c, "GET /api/v1/state HTTP/1.1\r\nHost: %s\r\nConnection: keep-alive\r\n\r\n", addr); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	// The token holder gets in (the flood holds on to its sockets).
	client := &http.Client{Timeout: 2 * time.Minute}
	req, _ := http.NewRequestWithContext(e2etest.Context(t), http.MethodGet, url+"api/v1/state", nil)
	req.Header.Set("Authorization", "Bearer "+serveToken)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("the token holder during the flood: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the token holder during the flood: %d, want 200", resp.StatusCode)
	}
	// And each flooding connection got its 401 and was closed.
	for _, i := range []int{0, 199, 399} {
		_ = flood[i].SetReadDeadline(time.Now().Add(time.Minute))
		br := bufio.NewReader(flood[i])
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("flooding connection %d: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
			t.Errorf("flooding connection %d: %d close=%v, want 401 and closed", i, resp.StatusCode, resp.Close)
		}
	}
}
