package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
	var impl []agentSpec
	for _, id := range ids {
		impl = append(impl, implAgent(id, "local.delay: 2s"))
	}
	k.writeWave(0, append(impl, closureAgents()...)...)
	first := k.command(ctxFor(t), "launch", "--lane", "main", "--no-dashboard")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "two running agents", time.Minute, func() bool {
		for _, id := range ids {
			b, err := os.ReadFile(filepath.Join(k.layout().RunDir(0, id, 1), "runtime.json"))
			if err != nil || !strings.Contains(string(b), `"running"`) {
				return false
			}
		}
		return true
	})
	_ = first.Process.Signal(syscall.SIGKILL) // the laptop sleeps
	_ = first.Wait()

	ctx := context.Background()
	api := k.c.AdminClient()
	waitFor(t, "both Jobs complete", time.Minute, func() bool {
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
	waitFor(t, "Jobs, pods and Leases gone", time.Minute, func() bool {
		j, _ := api.BatchV1().Jobs(k.ns).List(ctx, metav1.ListOptions{})
		p, _ := api.CoreV1().Pods(k.ns).List(ctx, metav1.ListOptions{})
		l, _ := api.CoordinationV1().Leases(k.ns).List(ctx, metav1.ListOptions{})
		return j != nil && p != nil && l != nil && len(j.Items)+len(p.Items)+len(l.Items) == 0
	})

	res := launch(t, k.testRepo)
	if res.code != 0 {
		t.Fatalf("relaunch exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	launched, adopted := agentStarts(k.events())
	for _, id := range ids {
		if launched[id] != 1 || adopted[id] != 1 {
			t.Errorf("%s launched %d adopted %d; want one launch and one adoption, no rerun", id, launched[id], adopted[id])
		}
		if _, err := os.Stat(k.layout().RunDir(0, id, 2)); err == nil {
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
	cfg, err := os.ReadFile(filepath.Join(k.root, "wave.config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k.write("wave.config.yaml", strings.Replace(string(cfg), "    serviceAccount: wave\n",
		"    serviceAccount: wave\n    envFrom: [no-such-secret]\n", 1))
	k.writeWave(0, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	res := launch(t, k.testRepo)
	if res.code == 0 {
		t.Fatalf("launch passed with a pod that cannot start\n%s", res.stdout)
	}
	var rec struct {
		TerminalDisposition, ExitReason string
	}
	readJSONFile(t, filepath.Join(k.layout().RunDir(0, "A1", 1), "runtime.json"), &rec)
	if rec.TerminalDisposition != "failed" || !strings.Contains(rec.ExitReason, "CreateContainerConfigError") {
		t.Errorf("A1's record %+v, want failed with the kubelet's reason", rec)
	}
	if !strings.Contains(res.stdout+res.stderr, "CreateContainerConfigError") {
		t.Errorf("launch does not report the kubelet's reason:\n%s\n%s", res.stdout, res.stderr)
	}
	t.Logf("launch said:\n%s%s", res.stdout, res.stderr)
}
