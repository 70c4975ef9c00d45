package kubetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// maxTerminationMessage is the kubelet's limit on a termination message.
const maxTerminationMessage = 4096

// nodeIP is where every pod of a node runs.
const nodeIP = "127.0.0.1"

// writeStatus applies mutate to the pod's current status and writes it
// through the status subresource, retrying on conflicts; nothing is
// written once the pod is silenced (vanished, gone, node stopping).
func (w *podWorker) writeStatus(ctx context.Context, what string, mutate func(*corev1.Pod)) {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if w.silenced() {
			return nil
		}
		pod, err := w.n.client.CoreV1().Pods(w.ns).Get(ctx, w.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.UID != w.uid {
			return nil
		}
		mutate(pod)
		_, err = w.n.client.CoreV1().Pods(w.ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		w.n.log.Error("pod status", "pod", w.key, "status", what, "err", err)
	}
}

// reportWaiting keeps the pod Pending with its container waiting for
// reason, once per distinct reason and message.
func (w *podWorker) reportWaiting(ctx context.Context, why *waitingError) {
	w.mu.Lock()
	same := w.waiting == why.Error()
	w.waiting = why.Error()
	w.mu.Unlock()
	if same {
		return
	}
	w.n.log.Info("pod waiting", "pod", w.key, "reason", why.reason, "message", why.message)
	w.writeStatus(ctx, "waiting", func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodPending
		p.Status.HostIP, p.Status.HostIPs = nodeIP, []corev1.HostIP{{IP: nodeIP}}
		setPodConditions(p, false, "ContainersNotReady")
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name:  containerName(p),
			Image: containerImage(p),
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: why.reason, Message: why.message}},
		}}
	})
}

// reportRunning is the status a kubelet writes once the container runs.
func (w *podWorker) reportRunning(ctx context.Context, l *launch) {
	w.mu.Lock()
	started := metav1.NewTime(w.startAt)
	w.mu.Unlock()
	w.writeStatus(ctx, "running", func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.HostIP, p.Status.HostIPs = nodeIP, []corev1.HostIP{{IP: nodeIP}}
		p.Status.PodIP, p.Status.PodIPs = nodeIP, []corev1.PodIP{{IP: nodeIP}}
		if p.Status.StartTime == nil {
			p.Status.StartTime = &started
		}
		setPodConditions(p, true, "")
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name:        l.container,
			Image:       containerImage(p),
			ImageID:     "kubetest://" + containerImage(p),
			ContainerID: l.containerID,
			Ready:       true,
			Started:     ptrTo(true),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
		}}
	})
}

// reportStartError is what a container runtime reports for a container
// that could not start (missing executable or working directory): exit
// code 128, reason StartError, and the pod fails (restartPolicy Never).
func (w *podWorker) reportStartError(ctx context.Context, cause error) {
	w.n.log.Warn("pod failed to start", "pod", w.key, "err", cause)
	now := metav1.Now()
	w.writeStatus(ctx, "start error", func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.HostIP, p.Status.HostIPs = nodeIP, []corev1.HostIP{{IP: nodeIP}}
		if p.Status.StartTime == nil {
			p.Status.StartTime = &now
		}
		setPodConditions(p, false, "PodFailed")
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name:    containerName(p),
			Image:   containerImage(p),
			Started: ptrTo(false),
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 128, Reason: "StartError", Message: cause.Error(),
				StartedAt: now, FinishedAt: now,
			}},
		}}
	})
}

// reportTerminated writes the container's end: exit code, reason, the
// termination message and the pod's final phase.
func (w *podWorker) reportTerminated(ctx context.Context, l *launch, state *os.ProcessState) {
	code := exitCode(state)
	w.mu.Lock()
	started := metav1.NewTime(w.startAt)
	w.mu.Unlock()
	finished := metav1.Now()
	msg := terminationMessage(l, code, w.outLog)
	reason, phase := "Completed", corev1.PodSucceeded
	if code != 0 {
		reason, phase = "Error", corev1.PodFailed
	}
	w.n.log.Info("pod exited", "pod", w.key, "exitCode", code)
	w.writeStatus(ctx, "terminated", func(p *corev1.Pod) {
		p.Status.Phase = phase
		setPodConditions(p, false, "PodCompleted")
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name:        l.container,
			Image:       containerImage(p),
			ImageID:     "kubetest://" + containerImage(p),
			ContainerID: l.containerID,
			Started:     ptrTo(false),
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: code, Reason: reason, Message: msg,
				StartedAt: started, FinishedAt: finished, ContainerID: l.containerID,
			}},
		}}
	})
}

// terminationMessage reads at most 4096 bytes of the container's
// termination message file; with FallbackToLogsOnError an empty message
// of a failed container becomes the end of its output, as a kubelet does.
func terminationMessage(l *launch, code int32, outLog string) string {
	msg := readAtMost(l.termPath, maxTerminationMessage)
	if msg == "" && code != 0 && l.termPolicy == corev1.TerminationMessageFallbackToLogsOnError {
		out, _ := os.ReadFile(outLog)
		out = lastLines(out, 80)
		if len(out) > 2048 {
			out = out[len(out)-2048:]
		}
		msg = string(out)
	}
	return msg
}

func readAtMost(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, n))
	return string(data)
}

func lastLines(b []byte, n int) []byte {
	b = bytes.TrimRight(b, "\n")
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			if n--; n == 0 {
				return b[i+1:]
			}
		}
	}
	return b
}

// setPodConditions sets the four conditions a kubelet keeps: scheduled and
// initialized always, ready and containers-ready as given.
func setPodConditions(p *corev1.Pod, ready bool, notReadyReason string) {
	now := metav1.Now()
	status := corev1.ConditionTrue
	reason := ""
	if !ready {
		status, reason = corev1.ConditionFalse, notReadyReason
	}
	want := []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
		{Type: corev1.ContainersReady, Status: status, Reason: reason},
		{Type: corev1.PodReady, Status: status, Reason: reason},
	}
	for _, c := range want {
		c.LastTransitionTime = now
		replaced := false
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == c.Type {
				if p.Status.Conditions[i].Status == c.Status {
					c.LastTransitionTime = p.Status.Conditions[i].LastTransitionTime
				}
				p.Status.Conditions[i] = c
				replaced = true
			}
		}
		if !replaced {
			p.Status.Conditions = append(p.Status.Conditions, c)
		}
	}
}

func containerName(p *corev1.Pod) string {
	if len(p.Spec.Containers) == 0 {
		return ""
	}
	return p.Spec.Containers[0].Name
}

func containerImage(p *corev1.Pod) string {
	if len(p.Spec.Containers) == 0 {
		return ""
	}
	return p.Spec.Containers[0].Image
}

// waitingError is a reason a pod cannot start yet; the node retries.
type waitingError struct{ reason, message string }

func (e *waitingError) Error() string { return e.reason + ": " + e.message }

func waitFor(reason, format string, args ...any) *waitingError {
	return &waitingError{reason: reason, message: fmt.Sprintf(format, args...)}
}

// containerID names a container the way runtimes do: scheme://id.
func containerID(uid string, at time.Time) string {
	return "kubetest://" + strings.ReplaceAll(uid, "-", "")[:12] + fmt.Sprintf("%x", at.UnixNano()&0xffffff)
}
