package runtime

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/sandbox"
)

// tryAction is the fake agent's try mode (see fakeAgent).
func tryAction(a string) string {
	verb, arg, _ := strings.Cut(a, ":")
	switch verb {
	case "write":
		if err := os.WriteFile(arg, []byte("planted"), 0o644); err != nil {
			return "err " + err.Error()
		}
		return "ok"
	case "connect":
		u, err := url.Parse(os.Getenv("HTTPS_PROXY"))
		if err != nil || u.Host == "" {
			return "err no proxy"
		}
		c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
		if err != nil {
			return "err " + err.Error()
		}
		defer c.Close()
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", arg, arg)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return "err " + err.Error()
		}
		return fmt.Sprint("ok ", resp.StatusCode)
	}
	return "err unknown"
}

// sandboxed makes p a sandboxed run in a checkout of its own, apart from
// its run directory, and returns the checkout.
func sandboxed(t *testing.T, p *Payload) string {
	t.Helper()
	bwrap, err := sandbox.Usable(context.Background())
	if err != nil {
		if os.Getenv("SANDBOXTEST_REQUIRED") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	p.Cwd = t.TempDir()
	p.Sandbox = &Sandbox{Bwrap: bwrap}
	return p.Cwd
}

// A stop reaches a sandboxed agent, which gets its grace to wind down:
// bwrap, which would kill everything inside at once if it died of the
// TERM, never gets it.
func TestASandboxedAgentIsStoppedWithItsGrace(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.payload(t, t.TempDir(), "A1")
	wt := sandboxed(t, p)
	p.Argv = append(p.Argv, "graceful", filepath.Join(wt, "stopped"))
	p.TerminateGraceMs = 10000
	h.start(t, p)
	waitRunning(t, p)
	if err := h.b.Terminate(context.Background(), p.RunDir, 10*time.Second, true); err != nil {
		t.Fatal(err)
	}
	obs := h.waitDone(t, p.RunDir)
	if b, _ := os.ReadFile(filepath.Join(wt, "stopped")); string(b) != "graceful" {
		t.Errorf("the agent wrote %q: it was killed before it could wind down", b)
	}
	if r := obs.Record; r.TerminalDisposition != Terminated || r.Sandbox != SandboxName || r.ExitCode == nil || *r.ExitCode != 0 {
		t.Errorf("record %+v, want terminated, sandboxed, the agent's own exit code 0", r)
	}
}

// A sandboxed agent cannot touch its own run's records, which stay the
// runner's, and every host its proxy refused is in them.
func TestASandboxedAgentsRecordsAreOutOfItsReachAndNameTheHostsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.payload(t, t.TempDir(), "A1")
	sandboxed(t, p)
	p.Sandbox.AllowHosts = []string{"api.example.com:443"}
	p.FillPaths()
	p.Argv = append(p.Argv, "try", "write:"+p.RuntimePath, "write:"+filepath.Join(p.RunDir, "status.json"),
		"connect:blocked.example.com:443", "connect:127.0.0.1:9", "connect:blocked.example.com:443")
	h.start(t, p)
	obs := h.waitDone(t, p.RunDir)
	log, _ := os.ReadFile(p.LogPath)
	for _, line := range []string{"write:" + p.RuntimePath + ": err", "write:" + filepath.Join(p.RunDir, "status.json") + ": err",
		"connect:blocked.example.com:443: ok 403", "connect:127.0.0.1:9: ok 403",
		"[wave] the sandbox refused connections to: blocked.example.com:443, 127.0.0.1:9"} {
		if !strings.Contains(string(log), line) {
			t.Errorf("log lacks %q:\n%s", line, log)
		}
	}
	r := obs.Record
	if r.TerminalDisposition != Completed || !slices.Equal(r.BlockedHosts, []string{"blocked.example.com:443", "127.0.0.1:9"}) {
		t.Errorf("record %+v, want completed, blocked hosts in order, each once", r)
	}
	if st, err := ReadStatus(p.StatusPath); err != nil || st.Code != 0 {
		t.Errorf("status %+v, %v", st, err)
	}
}
