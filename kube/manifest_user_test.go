package kube

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// These run as the launcher docs/kubernetes/rbac.yaml binds (newEnv):
// each was a run that hung, or was failed, only for that user.

// TestFrozenRunnerIsDeclaredLostAsTheManifestsUser: a runner that stops
// renewing (SIGSTOP, as a node cut off from the cluster looks) is lost
// within its Lease's duration, and its pod is to be deleted before a
// retry runs beside it. The expired Lease is confirmed with a GET, which
// the manifest grants.
func TestFrozenRunnerIsDeclaredLostAsTheManifestsUser(t *testing.T) {
	e := newEnv(t)
	p := e.payload("w0-A1-frozen", "sleep 60")
	if err := e.b.Start(context.Background(), []*runtime.Payload{p}); err != nil {
		t.Fatal(err)
	}
	obs := e.await(e.b, p.RunDir, "running", time.Minute, running)
	pid := e.node.Process(obs.Record.Kubernetes.Pod)
	if pid == 0 {
		t.Fatalf("pod %s has no process", obs.Record.Kubernetes.Pod)
	}
	if err := syscall.Kill(-pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	obs = e.await(e.b, p.RunDir, "lost", time.Minute, done)
	if v := obs.Verdict; v.State != runtime.StateLost || !strings.Contains(v.Reason, "lease not renewed") || !v.Terminate {
		t.Fatalf("verdict %+v, want lost by its lease, its pod to be deleted", v)
	}
}

// TestLauncherDeathBetweenSecretAndLeaseRunsTheAgentOnceWithoutARetry: a
// launcher killed after the run's Secret and before its Lease left a pod
// whose runner cannot renew. The runner waits; the launcher that adopts
// the run makes the Lease, and the agent runs once, to completion: no
// failed run, no attempt spent.
func TestLauncherDeathBetweenSecretAndLeaseRunsTheAgentOnceWithoutARetry(t *testing.T) {
	e := newEnv(t)
	first, die := context.WithCancel(context.Background())
	b := e.backend(first)
	p := e.payload("w0-A1-half", "echo ran >> ran.txt")
	if err := b.prepare(p); err != nil {
		t.Fatal(err)
	}
	job, err := b.c.jobs(e.ns).create(context.Background(), jobFor(p, b.o, p.Kubernetes.Name, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	sec, err := secretFor(p, b.o, "", job)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.c.secrets(e.ns).create(context.Background(), sec); err != nil {
		t.Fatal(err)
	}
	die()
	// The pod starts and its runner finds no Lease.
	eventually(t, "the runner waiting for its lease", func() bool {
		for _, pod := range e.node.Pods() {
			if strings.Contains(e.node.Output(strings.TrimPrefix(pod, e.ns+"/")), "does not exist yet") {
				return true
			}
		}
		return false
	})
	restarted := e.backend(t.Context())
	restarted.Watch(p.RunDir)
	obs := e.await(restarted, p.RunDir, "finished", time.Minute, done)
	if v := obs.Verdict; v.State != runtime.StateCompleted || v.ExitCode == nil || *v.ExitCode != 0 {
		t.Fatalf("verdict %+v, want the agent's completion", v)
	}
	if b, err := os.ReadFile(filepath.Join(e.repo, "ran.txt")); err != nil || string(b) != "ran\n" {
		t.Fatalf("the agent ran %q (%v), want once", b, err)
	}
}
