package kubernetes

import (
	"context"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A launcher that comes back after its finished Jobs' ttlSecondsAfterFinished
// (their Jobs, pods and Leases deleted, as the TTL controller does) runs
// none of the runs that finished while it was away again: their runners
// left their final reports in the run directories, on the workspace.
func TestKubeLauncherBackAfterTheJobsTTLRunsNothingTwice(t *testing.T) {
	k := newKubeLane(t)
	ids := []string{"A1", "A2"}
	k.killLauncherOnceRunning(t, "2s", ids...) // the laptop sleeps

	ctx := context.Background()
	api := k.c.AdminClient()
	e2etest.WaitFor(t, "both Jobs complete", time.Minute, func() bool {
		l, err := api.BatchV1().Jobs(k.ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != len(ids) {
			return false
		}
		for _, j := range l.Items {
			if !jobDone(&j) {
				return false
			}
		}
		return true
	})
	fg := metav1.DeletePropagationForeground
	if err := api.BatchV1().Jobs(k.ns).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &fg}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	e2etest.WaitFor(t, "Jobs, pods and Leases gone", time.Minute, func() bool {
		j, _ := api.BatchV1().Jobs(k.ns).List(ctx, metav1.ListOptions{})
		p, _ := api.CoreV1().Pods(k.ns).List(ctx, metav1.ListOptions{})
		l, _ := api.CoordinationV1().Leases(k.ns).List(ctx, metav1.ListOptions{})
		return j != nil && p != nil && l != nil && len(j.Items)+len(p.Items)+len(l.Items) == 0
	})

	res := e2etest.Launch(t, k.Repo)
	if res.Code != 0 {
		t.Fatalf("relaunch exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	launched, adopted := e2etest.AgentStarts(k.Events())
	for _, id := range ids {
		if launched[id] != 1 || adopted[id] != 1 {
			t.Errorf("%s launched %d adopted %d; want one launch and one adoption, no rerun", id, launched[id], adopted[id])
		}
		if _, err := os.Stat(k.Layout().RunDir(0, id, 2)); err == nil {
			t.Errorf("%s has a second run", id)
		}
	}
}

func jobDone(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// A pod that cannot start fails its run with the kubelet's reason, in
// runtime.json and in what launch reports, not as a run stopped on
// request that left no exit status.
func TestKubeStartFailureCarriesTheKubeletsReason(t *testing.T) {
	k := newKubeLane(t)
	cfg, err := os.ReadFile(filepath.Join(k.Root, "wave.config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k.Write("wave.config.yaml", strings.Replace(string(cfg), "    serviceAccount: wave\n",
		"    serviceAccount: wave\n    envFrom: [no-such-secret]\n", 1))
	k.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	// One attempt: a retry would wait out the launch grace again for the
	// same reason and check nothing more.
	res := e2etest.Launch(t, k.Repo, "--max-retries-per-wave", "0")
	if res.Code == 0 {
		t.Fatalf("launch passed with a pod that cannot start\n%s", res.Stdout)
	}
	var rec struct {
		TerminalDisposition, ExitReason string
	}
	e2etest.ReadJSONFile(t, filepath.Join(k.Layout().RunDir(0, "A1", 1), "runtime.json"), &rec)
	if rec.TerminalDisposition != "failed" || !strings.Contains(rec.ExitReason, "CreateContainerConfigError") {
		t.Errorf("A1's record %+v, want failed with the kubelet's reason", rec)
	}
	if !strings.Contains(res.Stdout+res.Stderr, "CreateContainerConfigError") {
		t.Errorf("launch does not report the kubelet's reason:\n%s\n%s", res.Stdout, res.Stderr)
	}
	t.Logf("launch said:\n%s%s", res.Stdout, res.Stderr)
}
