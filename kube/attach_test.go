package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// attachEnv is a namespace on the shared cluster and a Client of the
// launcher docs/kubernetes/rbac.yaml binds (not behind verbGuard: the
// manifest is the table, so RBAC holds the same line): what is refused is
// the pod's doing.
type attachEnv struct {
	t     *testing.T
	c     *Client
	admin kubernetes.Interface // what the test itself makes
	ns    string
}

func newAttachEnv(t *testing.T) *attachEnv {
	t.Helper()
	k := cluster.Get(t)
	ns := k.Namespace(t, "attach")
	c, err := NewClientFromConfig(launcherConfig(t, k, ns), "")
	if err != nil {
		t.Fatal(err)
	}
	return &attachEnv{t: t, c: c, admin: k.AdminClient(), ns: ns}
}

// pod creates an agent pod as the backend's Job would have it made, on
// node (none: not scheduled), then gives it status st as a kubelet would.
func (e *attachEnv) pod(name, runID, node string, st corev1.PodStatus) *corev1.Pod {
	e.t.Helper()
	ctx := testCtx(e.t)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{LabelRun: LabelValue(runID)},
			Annotations: map[string]string{AnnotationRunID: runID}},
		Spec: corev1.PodSpec{NodeName: node, RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: Container, Image: "registry.example.com/agents:1", TTY: true, Stdin: true}}},
	}
	p, err := e.admin.CoreV1().Pods(e.ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create pod %s: %v", name, err)
	}
	p.Status = st
	if p, err = e.admin.CoreV1().Pods(e.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		e.t.Fatalf("pod %s status: %v", name, err)
	}
	return p
}

// attach runs Attach and wants it refused: it returns the reason.
func (e *attachEnv) refused(pod string) *NotAttachableError {
	e.t.Helper()
	err := e.c.Attach(testCtx(e.t), e.ns, pod, AttachStreams{Stdin: strings.NewReader(""), Stdout: io.Discard})
	var na *NotAttachableError
	if !errors.As(err, &na) {
		e.t.Fatalf("attach %s: err = %v (%T), want a *NotAttachableError", pod, err, err)
	}
	if want := "pod " + e.ns + "/" + pod + ": "; !strings.Contains(err.Error(), want) {
		e.t.Errorf("error %q does not name %s", err, want)
	}
	return na
}

func agentWaiting(reason, msg string) []corev1.ContainerStatus {
	return []corev1.ContainerStatus{{Name: Container, Image: "registry.example.com/agents:1",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}
}

func TestAttachToDeletedPodSaysItIsGone(t *testing.T) {
	t.Parallel()
	e := newAttachEnv(t)
	na := e.refused("wave-w0-a1-a1-1a2b3c4d-gone1")
	if !na.Gone || !strings.Contains(na.Reason, "gone") {
		t.Errorf("reason %q gone=%v, want the pod gone", na.Reason, na.Gone)
	}
}

// A pod no scheduler has placed: we say so (with the scheduler's reason)
// before asking to attach; asked anyway, the API server refuses it and
// we relay its words.
func TestAttachToUnscheduledPod(t *testing.T) {
	t.Parallel()
	e := newAttachEnv(t)
	e.pod("unscheduled", "w0-A1-a1", "", corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/3 nodes are available: 3 Insufficient memory."}}})
	na := e.refused("unscheduled")
	if na.Gone || !strings.Contains(na.Reason, "not scheduled to a node") || !strings.Contains(na.Reason, "Unschedulable: 0/3 nodes are available") {
		t.Errorf("reason %q, want not scheduled with the scheduler's reason", na.Reason)
	}
	err := e.c.stream(testCtx(t), e.ns, "unscheduled", AttachStreams{Stdin: strings.NewReader(""), Stdout: io.Discard})
	if !errors.As(err, &na) || !strings.Contains(na.Reason, "the API server did not open the attach") || !strings.Contains(na.Reason, "does not have a host assigned") {
		t.Fatalf("attach without the check: %v, want the API server's refusal", err)
	}
	t.Logf("the API server on a pod without a node: %v", err)
}

func TestAttachToPodStillStarting(t *testing.T) {
	t.Parallel()
	e := newAttachEnv(t)
	e.pod("pulling", "w0-A1-a1", "node-a", corev1.PodStatus{Phase: corev1.PodPending,
		ContainerStatuses: agentWaiting("ContainerCreating", "pulling image \"registry.example.com/agents:1\"")})
	na := e.refused("pulling")
	if !strings.Contains(na.Reason, "Pending on node node-a") || !strings.Contains(na.Reason, "waiting (ContainerCreating: pulling image") {
		t.Errorf("reason %q, want Pending with the waiting reason", na.Reason)
	}
	e.pod("nostatus", "w0-A2-a1", "node-a", corev1.PodStatus{Phase: corev1.PodPending})
	if na := e.refused("nostatus"); !strings.Contains(na.Reason, "Pending on node node-a; container agent has not started") {
		t.Errorf("reason %q", na.Reason)
	}
}

func TestAttachToEndedContainerGivesItsExitCode(t *testing.T) {
	t.Parallel()
	e := newAttachEnv(t)
	e.pod("ended", "w0-A1-a1", "node-a", corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
		Name: Container, Image: "registry.example.com/agents:1",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}}}}})
	if na := e.refused("ended"); !strings.Contains(na.Reason, "container agent has ended with exit code 3 (Error)") {
		t.Errorf("reason %q", na.Reason)
	}
}

func runningStatuses() []corev1.ContainerStatus {
	return []corev1.ContainerStatus{{Name: Container, Image: "registry.example.com/agents:1", Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
}

// node registers a Node whose kubelet would listen on 127.0.0.1:port.
func (e *attachEnv) node(name string, port int32) {
	e.t.Helper()
	ctx := testCtx(e.t)
	nodes := e.admin.CoreV1().Nodes()
	n, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create node %s: %v", name, err)
	}
	e.t.Cleanup(func() { _ = nodes.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = port
	if _, err := nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		e.t.Fatalf("node %s status: %v", name, err)
	}
}

// A running agent container passes the check; the attach then goes to
// the API server, which cannot connect it here (no kubelet): we say what
// it said, in words about the node.
func TestAttachToRunningPodWithoutKubelet(t *testing.T) {
	t.Parallel()
	e := newAttachEnv(t)
	e.pod("unregistered", "w0-A1-a1", "node-not-registered", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: runningStatuses()})
	if err := e.c.Attachable(testCtx(t), e.ns, "unregistered"); err != nil {
		t.Fatalf("a running agent container is not attachable: %v", err)
	}
	if na := e.refused("unregistered"); !strings.Contains(na.Reason, "node node-not-registered is not registered with the cluster") {
		t.Errorf("reason %q, want the node named as unknown", na.Reason)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there: a node whose kubelet is down
	name := "kubelet-down-" + e.ns
	e.node(name, int32(port))
	e.pod("kubelet-down", "w0-A2-a1", name, corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: runningStatuses()})
	na := e.refused("kubelet-down")
	if !strings.Contains(na.Reason, "failed before the agent's terminal sent anything") || !strings.Contains(na.Reason, fmt.Sprintf("127.0.0.1:%d", port)) {
		t.Errorf("reason %q, want the API server's failure to reach the kubelet", na.Reason)
	}
	t.Logf("the API server on a node whose kubelet is down: %v", na)
}

// RunPod finds a run's pod by its label and run id when the record does
// not name it yet, and tells a Job still without a pod from one gone.
func TestRunPodFindsThePodOfTheRun(t *testing.T) {
	t.Parallel()
	e := newAttachEnv(t)
	ctx := testCtx(t)
	rec := &runtime.Record{RunID: "w0-A1-a1", AgentID: "A1", Kubernetes: &runtime.KubeRef{Namespace: e.ns, Job: "wave-w0-a1-a1-1a2b3c4d"}}
	_, _, err := e.c.RunPod(ctx, rec)
	var na *NotAttachableError
	if !errors.As(err, &na) || !na.Gone || !strings.Contains(err.Error(), "agent A1: namespace "+e.ns+": job wave-w0-a1-a1-1a2b3c4d and its pod are gone") {
		t.Fatalf("no job, no pod: %v", err)
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: rec.Kubernetes.Job}, Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](0),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: Container, Image: "registry.example.com/agents:1"}}}}}}
	if _, err := e.admin.BatchV1().Jobs(e.ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.c.RunPod(ctx, rec); !errors.As(err, &na) || na.Gone || !strings.Contains(na.Reason, "has no pod yet") {
		t.Fatalf("job without a pod: %v", err)
	}
	e.pod("other-run", "w0-A1-a2", "", corev1.PodStatus{})
	e.pod("this-run", "w0-A1-a1", "", corev1.PodStatus{})
	ns, pod, err := e.c.RunPod(ctx, rec)
	if err != nil || ns != e.ns || pod != "this-run" {
		t.Fatalf("RunPod = %s/%s, %v; want %s/this-run", ns, pod, err, e.ns)
	}
	rec.Kubernetes.Pod = "named-by-the-mirror"
	if _, pod, _ := e.c.RunPod(ctx, rec); pod != "named-by-the-mirror" {
		t.Errorf("RunPod = %s, want the pod the record names", pod)
	}
}
