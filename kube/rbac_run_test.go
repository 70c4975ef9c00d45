package kube

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"path/filepath"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// TestRBACManifestIsEnoughToRunAndStopRuns runs the real backend as a
// user bound by docs/kubernetes/rbac.yaml, and the real runner as its
// ServiceAccount: what the checks ask for is what the code uses.
func TestRBACManifestIsEnoughToRunAndStopRuns(t *testing.T) {
	t.Parallel()
	kc := cluster.Get(t)
	ns := kc.Namespace(t, "rbac-run")
	applyManifest(t, kc, ns, "alice", nil)
	kc.StartNode(t, kubetest.NodeOptions{Namespace: ns, Binaries: map[string]string{DefaultBinary: binPath}})
	repo := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := NewBackend(ctx, testClient(t, guarded(t, Launcher, kc.UserConfig("alice"))), Options{Namespace: ns, Image: "agents:1", ServiceAccount: "wave",
		WorkspaceHostPath: repo, RepoRoot: repo, Lane: "main"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	payload := func(id string, argv ...string) *runtime.Payload {
		return &runtime.Payload{RunID: id, Lane: "main", AgentID: "A1", Argv: argv, Cwd: repo,
			RunDir: filepath.Join(repo, ".wave", "runs", id), HeartbeatIntervalMs: 200, TerminateGraceMs: 1000}
	}
	exit3 := payload("w0-A1-exit", "/bin/sh", "-c", "exit 3")
	long := payload("w0-A2-long", "/bin/sh", "-c", "sleep 120")
	if err := b.Start(ctx, []*runtime.Payload{exit3, long}); err != nil {
		t.Fatalf("start as a user bound by %s: %v", RBACManifest, err)
	}
	observe := func(p *runtime.Payload, cond func(runtime.Verdict) bool) runtime.Verdict {
		t.Helper()
		var v runtime.Verdict
		if !b.waitFor(ctx, func() bool {
			obs, _ := b.Observe(ctx, p.RunDir, time.Now())
			v = obs.Verdict
			return cond(v)
		}) {
			t.Fatalf("run %s: last verdict %+v", p.RunID, v)
		}
		return v
	}
	v := observe(exit3, func(v runtime.Verdict) bool { return v.Done })
	if v.State != runtime.StateFailed || v.ExitCode == nil || *v.ExitCode != 3 {
		t.Fatalf("exit 3 run: verdict %+v, want failed with code 3", v)
	}
	// The finished run's Secret is deleted as this user (a manifest
	// without that right leaves payloads behind).
	eventually(t, "the finished run's secret deleted", func() bool {
		_, err := kc.AdminClient().CoreV1().Secrets(ns).Get(ctx, exit3.Kubernetes.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	// Running means the runner renewed its Lease as the ServiceAccount.
	observe(long, func(v runtime.Verdict) bool { return v.State == runtime.StateRunning || v.Done })
	if err := b.Terminate(ctx, long.RunDir, time.Second, false); err != nil {
		t.Fatalf("stop as a user bound by %s: %v", RBACManifest, err)
	}
	if v := observe(long, func(v runtime.Verdict) bool { return v.Done }); v.State != runtime.StateTerminated {
		t.Fatalf("stopped run: verdict %+v, want terminated", v)
	}
}
