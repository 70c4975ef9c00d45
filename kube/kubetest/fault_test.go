package kubetest_test

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
)

// waitStopped waits until the node no longer runs the pod's process (a
// ticker and a deadline: a process's end has no API event when the node
// reports nothing).
func (e *env) waitStopped(pod string) {
	e.t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for e.node.Process(pod) != 0 {
		select {
		case <-e.ctx.Done():
			e.t.Fatalf("pod %s's process still runs", pod)
		case <-tick.C:
		}
	}
}

func TestKillIsReportedAndVanishIsNot(t *testing.T) {
	t.Parallel()
	e := newEnv(t, kubetest.NodeOptions{})
	e.createJob(shJob("vanishing", `exec sleep 1000`))
	e.createJob(shJob("killed", `exec sleep 1000`))
	vanishing := e.waitJobPod("vanishing", kubetest.PodPhase(corev1.PodRunning))
	killed := e.waitJobPod("killed", kubetest.PodPhase(corev1.PodRunning))

	if err := e.node.Vanish(vanishing.Name); err != nil {
		t.Fatal(err)
	}
	e.waitStopped(vanishing.Name)
	if err := e.node.Kill(killed.Name); err != nil {
		t.Fatal(err)
	}
	// A killed process is reported like a kubelet does, and fails its Job.
	if term := kubetest.Terminated(e.waitJobPod("killed", kubetest.PodTerminated)); term.ExitCode != 137 {
		t.Errorf("killed: exit %d, want 137", term.ExitCode)
	}
	e.waitJob("killed", kubetest.JobCondition(batchv1.JobFailed))

	// The vanished one died first, yet the API still has it running: its
	// node is gone, as when a runner's node dies and only its Lease
	// expiring tells.
	pod, err := e.c.AdminClient().CoreV1().Pods(e.ns).Get(e.ctx, vanishing.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Status.Phase != corev1.PodRunning || pod.Status.ContainerStatuses[0].State.Running == nil {
		t.Errorf("vanished pod: phase %s, state %+v; want still Running", pod.Status.Phase, pod.Status.ContainerStatuses[0].State)
	}
	job, err := e.c.AdminClient().BatchV1().Jobs(e.ns).Get(e.ctx, "vanishing", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if job.Status.Active != 1 || len(job.Status.Conditions) != 0 {
		t.Errorf("vanished pod's job: active %d, conditions %+v; want still active", job.Status.Active, job.Status.Conditions)
	}
}
