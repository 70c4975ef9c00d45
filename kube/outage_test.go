package kube

import (
	"context"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// cutProxy forwards TCP to the API server until Cut, which drops every
// connection and refuses new ones until Restore: the launcher's side of
// a network partition (the runners still reach the API server).
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]bool
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.Cut() })
	go p.serve()
	return p
}

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[up] = true, true
		p.mu.Unlock()
		go func() { io.Copy(up, c); up.Close() }()
		go func() { io.Copy(c, up); c.Close() }()
	}
}

func (p *cutProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

func (p *cutProxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

// A launcher cut off from its cluster does not call its runs lost (and
// retry them beside themselves): an expired-looking Lease is confirmed
// with the API server first, and no answer decides nothing.
func TestLauncherCutOffFromTheClusterLosesNoRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u, err := url.Parse(e.c.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t, u.Host)
	cfg := guarded(t, Launcher, e.launcher)
	cfg.Host = "https://" + proxy.ln.Addr().String()
	cfg.Timeout = 2 * time.Second
	c, err := NewClientFromConfig(cfg, e.ns)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBackend(t.Context(), c, e.opts, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	p := e.payload("w0-A1-a1", "while [ ! -e go ]; do sleep 0.05; done")
	if err := b.Start(context.Background(), []*runtime.Payload{p}); err != nil {
		t.Fatal(err)
	}
	e.await(b, p.RunDir, "running", time.Minute, running)

	proxy.Cut()
	obs := e.await(b, p.RunDir, "the cut noticed", time.Minute, func(o runtime.Observation) bool {
		if o.Verdict.Done {
			t.Fatalf("cut off from the cluster, the launcher decided %+v", o.Verdict)
		}
		return strings.Contains(strings.Join(o.Verdict.Warnings, " "), "cluster unreachable")
	})
	if obs.Verdict.State != runtime.StateRunning {
		t.Fatalf("verdict %+v, want still running", obs.Verdict)
	}

	proxy.Restore()
	if err := os.WriteFile(filepath.Join(e.repo, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	obs = e.await(b, p.RunDir, "finished", time.Minute, func(o runtime.Observation) bool {
		if o.Verdict.Done && o.Verdict.State != runtime.StateCompleted {
			t.Fatalf("after the cut healed: %+v", o.Verdict)
		}
		return o.Verdict.Done
	})
	jobs, err := e.c.AdminClient().BatchV1().Jobs(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(jobs.Items) != 1 {
		t.Fatalf("%d jobs (%v), want the one", len(jobs.Items), err)
	}
}
