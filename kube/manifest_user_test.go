package kube

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
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
	t.Parallel()
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
	t.Parallel()
	e := newEnv(t)
	first, die := context.WithCancel(context.Background())
	b := e.backend(first)
	p := e.payload("w0-A1-half", "echo ran >> ran.txt")
	if err := b.prepare(p); err != nil {
		t.Fatal(err)
	}
	job, err := b.c.jobs(e.ns).Create(context.Background(), jobFor(p, b.o, p.Kubernetes.Name, time.Now()), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec, err := secretFor(p, b.o, "", job)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.c.secrets(e.ns).Create(context.Background(), sec, metav1.CreateOptions{}); err != nil {
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

// deleteLikeTTL deletes a run's Job as the TTL-after-finished controller
// does (foreground: its pod goes first) and waits until the Job, its pods
// and its Lease are gone.
func (e *env) deleteLikeTTL(name string, runID string) {
	e.t.Helper()
	ctx := context.Background()
	api := e.c.AdminClient()
	fg := metav1.DeletePropagationForeground
	if err := api.BatchV1().Jobs(e.ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		e.t.Fatal(err)
	}
	e.waitRunObjectsGone(name, runID)
}

// waitRunObjectsGone waits until a run's Job, pods and Lease are gone.
func (e *env) waitRunObjectsGone(name, runID string) {
	e.t.Helper()
	ctx := context.Background()
	api := e.c.AdminClient()
	eventually(e.t, "job, pod and lease gone", func() bool {
		_, jerr := api.BatchV1().Jobs(e.ns).Get(ctx, name, metav1.GetOptions{})
		_, lerr := api.CoordinationV1().Leases(e.ns).Get(ctx, name, metav1.GetOptions{})
		pods, perr := api.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: LabelRun + "=" + LabelValue(runID)})
		return apierrors.IsNotFound(jerr) && apierrors.IsNotFound(lerr) && perr == nil && len(pods.Items) == 0
	})
}

// TestRunThatFinishedWhileNoLauncherRanIsNotRunAgainAfterItsJobIsGone: a
// launcher away for longer than ttlSecondsAfterFinished finds the Job,
// pod and Lease of a run that finished meanwhile gone. The runner left
// its final report in the run directory, on the shared workspace: the
// run is recorded as it ended, not lost and run again.
func TestRunThatFinishedWhileNoLauncherRanIsNotRunAgainAfterItsJobIsGone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if e.c.RealControllers() {
		e.opts.FinishedTTL = 1 // the real TTL-after-finished controller deletes it
	}
	first, die := context.WithCancel(context.Background())
	b1 := e.backend(first)
	p := e.payload("w0-A1-ttl", "while [ ! -e go ]; do sleep 0.05; done; echo ran >> ran.txt")
	if err := b1.Start(context.Background(), []*runtime.Payload{p}); err != nil {
		t.Fatal(err)
	}
	e.await(b1, p.RunDir, "running", time.Minute, running)
	die() // the laptop goes to sleep
	if err := os.WriteFile(filepath.Join(e.repo, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if e.c.RealControllers() {
		if _, err := e.c.WaitJob(ctx, e.ns, p.Kubernetes.Name, kubetest.JobGone); err != nil {
			t.Fatalf("the TTL controller did not delete the finished Job: %v", err)
		}
		e.waitRunObjectsGone(p.Kubernetes.Name, p.RunID)
	} else {
		if _, err := e.c.WaitJob(ctx, e.ns, p.Kubernetes.Name, kubetest.JobCondition(batchv1.JobComplete)); err != nil {
			t.Fatal(err)
		}
		e.deleteLikeTTL(p.Kubernetes.Name, p.RunID)
	}

	b2 := e.backend(t.Context())
	b2.Watch(p.RunDir)
	obs := e.await(b2, p.RunDir, "recorded", time.Minute, done)
	if v := obs.Verdict; v.State != runtime.StateCompleted || v.ExitCode == nil || *v.ExitCode != 0 {
		t.Fatalf("verdict %+v, want the run's own completion", v)
	}
	st, err := runtime.ReadStatus(filepath.Join(p.RunDir, "status.json"))
	if err != nil || st.Code != 0 {
		t.Fatalf("status.json %+v (%v), want code 0", st, err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.repo, "ran.txt")); string(b) != "ran\n" {
		t.Fatalf("the agent ran %q, want once", b)
	}
}

// TestRunWhoseOutcomeIsUnknownIsLostSayingWhy: a runner that died without
// a word (its node gone) and whose Job is gone left nothing that says how
// it ended. The run is lost, and its record and verdict say why it will
// be run again, not just that its pod was deleted.
func TestRunWhoseOutcomeIsUnknownIsLostSayingWhy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first, die := context.WithCancel(context.Background())
	b1 := e.backend(first)
	p := e.payload("w0-A1-unknown", "sleep 60")
	if err := b1.Start(context.Background(), []*runtime.Payload{p}); err != nil {
		t.Fatal(err)
	}
	obs := e.await(b1, p.RunDir, "running", time.Minute, running)
	die()
	if err := e.node.Vanish(obs.Record.Kubernetes.Pod); err != nil {
		t.Fatal(err)
	}
	// The node will never confirm: its pod goes by force, as an operator
	// removes a dead node's pods, and then the Job.
	zero := int64(0)
	if err := e.c.AdminClient().CoreV1().Pods(e.ns).Delete(context.Background(), obs.Record.Kubernetes.Pod, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	e.deleteLikeTTL(p.Kubernetes.Name, p.RunID)

	b2 := e.backend(t.Context())
	b2.Watch(p.RunDir)
	obs = e.await(b2, p.RunDir, "lost", time.Minute, done)
	const why = "how it ended is unknown"
	if v := obs.Verdict; v.State != runtime.StateLost || !strings.Contains(v.Reason, why) {
		t.Fatalf("verdict %+v, want lost saying %q", v, why)
	}
	rec, err := runtime.ReadRecord(filepath.Join(p.RunDir, "runtime.json"))
	if err != nil || rec.TerminalDisposition != runtime.Failed || !rec.Lost || !strings.Contains(rec.ExitReason, why) {
		t.Fatalf("record %+v (%v), want failed, lost, saying %q", rec, err, why)
	}
}
