package kube

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"

	"github.com/wave-orchestrator/wave-orchestrator/internal/buildtest"
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
	if err := buildtest.Binary(binPath); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := cluster.Run(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is one test's namespace, node and backend. The backend runs as
// the launcher docs/kubernetes/rbac.yaml binds, and its requests pass
// the permission table or fail the test; the runners run as the
// manifest's ServiceAccount.
type env struct {
	t        testing.TB
	c        *kubetest.Cluster
	ns       string
	node     *kubetest.Node
	repo     string
	b        *Backend
	opts     Options
	launcher *rest.Config
}

// runnerSA is the manifest's ServiceAccount of the pods.
const runnerSA = "wave"

// launcherSA is the tests' launcher: a ServiceAccount (a token from the
// TokenRequest API works on this harness and on a real cluster alike)
// as the subject of the manifest's launcher RoleBinding.
const launcherSA = "launcher"

func newEnv(t testing.TB) *env {
	t.Helper()
	c := cluster.Get(t)
	ns := c.Namespace(t, "kb")
	e := &env{t: t, c: c, ns: ns, repo: t.TempDir()}
	e.launcher = launcherConfig(t, c, ns)
	e.node = c.StartNode(t, kubetest.NodeOptions{Namespace: ns, Binaries: map[string]string{DefaultBinary: binPath}})
	e.opts = Options{Namespace: ns, Image: "wave-agents:test", ServiceAccount: runnerSA, RepoRoot: e.repo,
		Lane: "main", WorkspaceHostPath: e.repo, LaunchGrace: 5 * time.Second}
	e.b = e.backend(t.Context())
	return e
}

// newEnvCounting is newEnv whose backend's API requests are counted.
func newEnvCounting(t testing.TB, n *atomic.Int64) *env {
	e := newEnv(t)
	cfg := guarded(t, Launcher, e.launcher)
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

// launcherConfig applies docs/kubernetes/rbac.yaml to ns, unchanged but
// for the launcher's subject, and returns the launcher's client config.
func launcherConfig(t testing.TB, c *kubetest.Cluster, ns string) *rest.Config {
	t.Helper()
	applyManifestFor(t, c, ns, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: launcherSA, Namespace: ns}, nil)
	cfg, err := c.ServiceAccountConfig(context.Background(), ns, launcherSA)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// backend connects a backend (a launcher) to the test's namespace; it
// stops with ctx.
func (e *env) backend(ctx context.Context) *Backend {
	e.t.Helper()
	c, err := NewClientFromConfig(guarded(e.t, Launcher, e.launcher), e.ns)
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
