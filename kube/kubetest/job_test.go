package kubetest_test

import (
	"regexp"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
)

func TestJobRecordsExitCodeAndTerminationMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, kubetest.NodeOptions{})
	job := e.createJob(shJob("exit3", `printf msg > "$TERMINATION_PATH"; exit 3`))

	done := e.waitJob("exit3", kubetest.JobCondition(batchv1.JobFailed))
	if c := jobCondition(done, batchv1.JobFailed); c.Reason != batchv1.JobReasonBackoffLimitExceeded {
		t.Errorf("Failed reason = %q, want %s", c.Reason, batchv1.JobReasonBackoffLimitExceeded)
	}
	if jobCondition(done, batchv1.JobFailureTarget) == nil {
		t.Error("no FailureTarget condition before Failed")
	}
	if done.Status.Failed != 1 || done.Status.Active != 0 || done.Status.StartTime == nil {
		t.Errorf("job status = failed %d, active %d, startTime %v; want 1, 0, set", done.Status.Failed, done.Status.Active, done.Status.StartTime)
	}

	pod := e.waitJobPod("exit3", kubetest.PodTerminated)
	term := kubetest.Terminated(pod)
	if term.ExitCode != 3 || term.Message != "msg" || term.Reason != "Error" {
		t.Errorf("terminated = exit %d, message %q, reason %q; want 3, \"msg\", Error", term.ExitCode, term.Message, term.Reason)
	}
	if pod.Status.Phase != corev1.PodFailed {
		t.Errorf("phase = %s, want Failed", pod.Status.Phase)
	}
	if !regexp.MustCompile(`^exit3-[a-z0-9]{5}$`).MatchString(pod.Name) {
		t.Errorf("pod name %q is not <job>-<5 random>", pod.Name)
	}
	for _, k := range []string{"batch.kubernetes.io/job-name", "job-name"} {
		if pod.Labels[k] != "exit3" {
			t.Errorf("label %s = %q, want exit3", k, pod.Labels[k])
		}
	}
	for _, k := range []string{"batch.kubernetes.io/controller-uid", "controller-uid"} {
		if pod.Labels[k] != string(job.UID) {
			t.Errorf("label %s = %q, want the job's uid", k, pod.Labels[k])
		}
	}
	if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != job.UID || ref.Kind != "Job" {
		t.Errorf("controller reference = %+v, want the job", ref)
	}
	if pod.Spec.NodeName != e.node.Name() || pod.Status.HostIP != "127.0.0.1" {
		t.Errorf("nodeName %q hostIP %q, want %q and 127.0.0.1", pod.Spec.NodeName, pod.Status.HostIP, e.node.Name())
	}
}

func TestJobCompletes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, kubetest.NodeOptions{})
	e.createJob(shJob("ok", `exit 0`))
	done := e.waitJob("ok", kubetest.JobCondition(batchv1.JobComplete))
	if done.Status.Succeeded != 1 || done.Status.CompletionTime == nil || jobCondition(done, batchv1.JobSuccessCriteriaMet) == nil {
		t.Errorf("job status = %+v, want succeeded 1, completionTime and SuccessCriteriaMet", done.Status)
	}
	pod := e.waitJobPod("ok", kubetest.PodTerminated)
	if term := kubetest.Terminated(pod); term.ExitCode != 0 || term.Reason != "Completed" || pod.Status.Phase != corev1.PodSucceeded {
		t.Errorf("pod = %s %+v, want Succeeded, exit 0, Completed", pod.Status.Phase, term)
	}
}

func TestActiveDeadlineFailsTheJobAndEndsItsPod(t *testing.T) {
	t.Parallel()
	e := newEnv(t, kubetest.NodeOptions{})
	j := shJob("late", `exec sleep 1000`)
	j.Spec.ActiveDeadlineSeconds = ptr(int64(1))
	e.createJob(j)
	running := e.waitJobPod("late", kubetest.PodPhase(corev1.PodRunning))

	done := e.waitJob("late", kubetest.JobCondition(batchv1.JobFailed))
	if c := jobCondition(done, batchv1.JobFailed); c.Reason != batchv1.JobReasonDeadlineExceeded {
		t.Errorf("Failed reason = %q, want DeadlineExceeded", c.Reason)
	}
	if done.Status.Failed != 1 {
		t.Errorf("failed = %d, want 1", done.Status.Failed)
	}
	// The deadline deleted the pod: TERM ended sleep, then the node
	// removed it.
	e.waitPod(running.Name, kubetest.PodGone)
}

func TestRunningJobPodIsActiveAndReady(t *testing.T) {
	t.Parallel()
	started := make(chan *corev1.Pod, 1)
	e := newEnv(t, kubetest.NodeOptions{OnStart: func(p *corev1.Pod) { started <- p }})
	e.createJob(shJob("busy", `exec sleep 1000`))
	pod := e.waitJobPod("busy", kubetest.PodPhase(corev1.PodRunning))
	select {
	case p := <-started:
		if p.Name != pod.Name {
			t.Errorf("OnStart got pod %s, want %s", p.Name, pod.Name)
		}
	case <-e.ctx.Done():
		t.Fatal("OnStart was not called for a running pod")
	}
	cs := pod.Status.ContainerStatuses
	if len(cs) != 1 || !cs[0].Ready || cs[0].State.Running == nil || cs[0].ContainerID == "" || pod.Status.StartTime == nil {
		t.Fatalf("running pod status = %+v", pod.Status)
	}
	e.waitJob("busy", func(j *batchv1.Job) bool {
		return j != nil && j.Status.Active == 1 && j.Status.Ready != nil && *j.Status.Ready == 1
	})
	if pid := e.node.Process(pod.Name); pid == 0 {
		t.Error("node.Process = 0 for a running pod")
	}
}

// With $KUBETEST_CONTROLLER_MANAGER the real Job controller makes the
// pods (it alone puts its tracking finalizer on them, and leaves them
// unbound) and the Node only binds and runs them.
func TestRealControllerManagerMakesTheJobsPods(t *testing.T) {
	t.Parallel()
	e := newEnv(t, kubetest.NodeOptions{})
	if !e.c.RealControllers() {
		t.Skip("no kube-controller-manager: set KUBETEST_CONTROLLER_MANAGER")
	}
	e.createJob(shJob("real", `sleep 2; exit 0`))
	pod := e.waitJobPod("real", func(p *corev1.Pod) bool {
		return slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer) && p.Spec.NodeName != ""
	})
	if pod.Spec.NodeName != e.node.Name() {
		t.Errorf("nodeName %q, want the node's %q", pod.Spec.NodeName, e.node.Name())
	}
	e.waitJob("real", kubetest.JobCondition(batchv1.JobComplete))
}
