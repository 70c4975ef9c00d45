package kube

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// cluster is one real kube-apiserver + etcd for the package's tests.
var cluster kubetest.Shared

// binPath is wave-orchestrator, built once: the pods' runner.
var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kube-test-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "wave-orchestrator")
	if out, err := exec.Command("go", "build", "-o", binPath, "../cmd/wave-orchestrator").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := cluster.Run(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is one test's namespace, node and backend.
type env struct {
	t    testing.TB
	c    *kubetest.Cluster
	ns   string
	node *kubetest.Node
	repo string
	b    *Backend
	opts Options
}

const runnerSA = "wave"

func newEnv(t testing.TB) *env {
	t.Helper()
	c := cluster.Get(t)
	ns := c.Namespace(t, "kb")
	e := &env{t: t, c: c, ns: ns, repo: t.TempDir()}
	e.grantRunner()
	e.node = c.StartNode(t, kubetest.NodeOptions{Namespace: ns, Binaries: map[string]string{DefaultBinary: binPath}})
	e.opts = Options{Namespace: ns, Image: "wave-agents:test", ServiceAccount: runnerSA, RepoRoot: e.repo,
		Lane: "main", WorkspaceHostPath: e.repo, LaunchGrace: 5 * time.Second}
	e.b = e.backend(t.Context())
	return e
}

// newEnvCounting is newEnv whose backend's API requests are counted.
func newEnvCounting(t testing.TB, n *atomic.Int64) *env {
	e := newEnv(t)
	cfg := e.c.AdminConfig()
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return counting{rt, n} })
	c, err := NewClientFromConfig(cfg, e.ns)
	if err != nil {
		t.Fatal(err)
	}
	if e.b, err = NewBackend(t.Context(), c, e.opts, "", nil); err != nil {
		t.Fatal(err)
	}
	return e
}

type counting struct {
	rt http.RoundTripper
	n  *atomic.Int64
}

func (c counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

// grantRunner gives the runners' ServiceAccount what docs/kubernetes.md
// says it needs: patch on leases, nothing else.
func (e *env) grantRunner() {
	e.c.BindServiceAccount(e.t, e.ns, runnerSA, runnerRule)
}

// runnerRule is the runner's one permission.
var runnerRule = rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"patch"}}

// backend connects a backend (a launcher) to the test's namespace; it
// stops with ctx.
func (e *env) backend(ctx context.Context) *Backend {
	e.t.Helper()
	c, err := NewClientFromConfig(e.c.AdminConfig(), e.ns)
	if err != nil {
		e.t.Fatal(err)
	}
	b, err := NewBackend(ctx, c, e.opts, "", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// payload is a run whose agent is sh -c script.
func (e *env) payload(runID, script string) *runtime.Payload {
	deadline := time.Now().Add(2 * time.Minute)
	return &runtime.Payload{RunID: runID, Lane: "main", AgentID: "A1", Attempt: 1, ExecutorID: "shell",
		Argv: []string{"/bin/sh", "-c", script}, Cwd: e.repo,
		RunDir:              filepath.Join(e.repo, ".wave", "runs", runID),
		HeartbeatIntervalMs: 200, TerminateGraceMs: 500, DeadlineAt: &deadline}
}

// await observes the run until cond holds or the deadline passes.
func (e *env) await(b *Backend, runDir, what string, within time.Duration, cond func(runtime.Observation) bool) runtime.Observation {
	e.t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var obs runtime.Observation
	for {
		obs, _ = b.Observe(context.Background(), runDir, time.Now())
		if cond(obs) {
			return obs
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: not within %s; last verdict %+v\nnode pods %v", what, within, obs.Verdict, e.node.Pods())
		}
		<-tick.C
	}
}

func done(obs runtime.Observation) bool { return obs.Verdict.Done }

func running(obs runtime.Observation) bool {
	return obs.Verdict.State == runtime.StateRunning && obs.Record != nil && obs.Record.TerminalDisposition == runtime.Running
}
