package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// TerminalSize is a terminal's size in character cells.
type TerminalSize = remotecommand.TerminalSize

// AttachStreams is the terminal an attach connects to the agent's
// container. With a tty there is no separate stderr: the agent's
// terminal is one stream.
type AttachStreams struct {
	Stdin  io.Reader
	Stdout io.Writer
	// Sizes, when set, carries the user's terminal size: its size at
	// attach, then every change. The agent's terminal follows it.
	Sizes <-chan TerminalSize
}

// NotAttachableError says why a run's pod cannot be attached to (the
// text from the cluster in Reason is untrusted: escape it to print).
type NotAttachableError struct {
	Agent          string // "" when not known
	Namespace, Pod string // Pod is "" when the run has no pod
	Reason         string
	// Gone: the pod (or the run's Job and pod) no longer exists.
	Gone bool
	// Err is the API server's answer when it turned the attach down.
	Err error
}

func (e *NotAttachableError) Unwrap() error { return e.Err }

func (e *NotAttachableError) Error() string {
	var b strings.Builder
	if e.Agent != "" {
		fmt.Fprintf(&b, "agent %s: ", e.Agent)
	}
	if e.Pod != "" {
		fmt.Fprintf(&b, "pod %s/%s: ", e.Namespace, e.Pod)
	} else {
		fmt.Fprintf(&b, "namespace %s: ", e.Namespace)
	}
	b.WriteString(e.Reason)
	return b.String()
}

// RunPod names the pod of the kubernetes run rec describes: the one its
// record names (the launcher's mirror fills it in), else the newest pod
// carrying the run's label and id.
func (c *Client) RunPod(ctx context.Context, rec *runtime.Record) (namespace, pod string, err error) {
	ref := rec.Kubernetes
	if ref == nil || ref.Namespace == "" || ref.Job == "" {
		return "", "", fmt.Errorf("agent %s: run %s is not a kubernetes run (its runtime.json names no namespace and job)", rec.AgentID, rec.RunID)
	}
	if ref.Pod != "" {
		return ref.Namespace, ref.Pod, nil
	}
	sel := labels.SelectorFromSet(labels.Set{LabelRun: LabelValue(rec.RunID)}).String()
	pods, err := c.pods(ref.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return "", "", fmt.Errorf("agent %s: list the pods of job %s/%s: %w", rec.AgentID, ref.Namespace, ref.Job, err)
	}
	var newest *corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Annotations[AnnotationRunID] == rec.RunID && (newest == nil || p.CreationTimestamp.After(newest.CreationTimestamp.Time)) {
			newest = p
		}
	}
	if newest != nil {
		return ref.Namespace, newest.Name, nil
	}
	e := &NotAttachableError{Agent: rec.AgentID, Namespace: ref.Namespace}
	_, jerr := c.jobs(ref.Namespace).Get(ctx, ref.Job, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(jerr):
		e.Reason, e.Gone = fmt.Sprintf("job %s and its pod are gone", ref.Job), true
	case jerr != nil:
		return "", "", fmt.Errorf("agent %s: get job %s/%s: %w", rec.AgentID, ref.Namespace, ref.Job, jerr)
	default:
		e.Reason = fmt.Sprintf("job %s has no pod yet", ref.Job)
	}
	return "", "", e
}

// Attachable returns nil when the pod's agent container runs on a node,
// else a *NotAttachableError saying why not (or the API's error).
func (c *Client) Attachable(ctx context.Context, namespace, pod string) error {
	_, err := c.attachable(ctx, namespace, pod)
	return err
}

func (c *Client) attachable(ctx context.Context, namespace, pod string) (*corev1.Pod, error) {
	p, err := c.pods(namespace).Get(ctx, pod, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, &NotAttachableError{Namespace: namespace, Pod: pod, Reason: "the pod is gone", Gone: true, Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: %w", namespace, pod, err)
	}
	if why := notAttachable(p); why != "" {
		return nil, &NotAttachableError{Namespace: namespace, Pod: pod, Reason: why}
	}
	return p, nil
}

// notAttachable says why p's agent container cannot be attached to now,
// or "" when it can.
func notAttachable(p *corev1.Pod) string {
	cs := agentStatus(p)
	if cs != nil && cs.State.Terminated != nil {
		t := cs.State.Terminated
		return fmt.Sprintf("container %s has ended with exit code %d%s", Container, t.ExitCode, detail(t.Reason, t.Message))
	}
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return fmt.Sprintf("the pod has finished (phase %s%s)", p.Status.Phase, detail(p.Status.Reason, p.Status.Message))
	}
	if p.Spec.NodeName == "" {
		why := "the pod is not scheduled to a node yet"
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				why += detail(c.Reason, c.Message)
			}
		}
		return why
	}
	if cs != nil && cs.State.Waiting != nil {
		w := cs.State.Waiting
		return fmt.Sprintf("the pod is %s on node %s; container %s is waiting%s", phase(p), p.Spec.NodeName, Container, detail(w.Reason, w.Message))
	}
	if p.Status.Phase == corev1.PodPending || p.Status.Phase == "" {
		return fmt.Sprintf("the pod is %s on node %s; container %s has not started", phase(p), p.Spec.NodeName, Container)
	}
	return ""
}

func phase(p *corev1.Pod) corev1.PodPhase {
	if p.Status.Phase == "" {
		return corev1.PodPending
	}
	return p.Status.Phase
}

// detail formats a status reason and message as " (Reason: message)".
func detail(reason, message string) string {
	switch {
	case reason != "" && message != "":
		return " (" + reason + ": " + message + ")"
	case reason != "" || message != "":
		return " (" + reason + message + ")"
	}
	return ""
}

// Attach connects s to the agent container of pod, as `kubectl attach
// -it` does: the user's keys go to the agent's terminal and its output
// comes back, until the container ends, the connection breaks or ctx is
// done (then it returns ctx's error). It checks the pod first, so a pod
// that cannot be attached to gives a *NotAttachableError that says why.
func (c *Client) Attach(ctx context.Context, namespace, pod string, s AttachStreams) error {
	p, err := c.attachable(ctx, namespace, pod)
	if err != nil {
		return err
	}
	err = c.stream(ctx, namespace, pod, s)
	var na *NotAttachableError
	if !errors.As(err, &na) {
		return err
	}
	if st := serverStatus(na.Err); st != nil && st.Reason == metav1.StatusReasonNotFound &&
		st.Details != nil && st.Details.Name == p.Spec.NodeName {
		// The API server reports a node it has no object for as a
		// missing pod named after the node.
		na.Reason = fmt.Sprintf("the pod's node %s is not registered with the cluster", p.Spec.NodeName)
	}
	return err
}

// attachURL is the pod's attach subresource for the agent container, with
// a tty.
func (c *Client) attachURL(namespace, pod string) *url.URL {
	return c.api.core.Post().Namespace(namespace).Resource("pods").Name(pod).SubResource("attach").
		VersionedParams(&corev1.PodAttachOptions{Container: Container, Stdin: true, Stdout: true, TTY: true}, c.api.params).
		URL()
}

// stream runs the attach itself, as kubectl does: over WebSocket (API
// servers from 1.30 speak it and relay it to the kubelet), else over
// SPDY when the WebSocket upgrade is refused (an older server, a proxy
// that does not pass WebSockets).
func (c *Client) stream(ctx context.Context, namespace, pod string, s AttachStreams) error {
	u := c.attachURL(namespace, pod)
	ws, err := remotecommand.NewWebSocketExecutor(c.Config, "GET", u.String())
	if err != nil {
		return fmt.Errorf("pod %s/%s: attach: %w", namespace, pod, err)
	}
	spdy, err := remotecommand.NewSPDYExecutor(c.Config, "POST", u)
	if err != nil {
		return fmt.Errorf("pod %s/%s: attach: %w", namespace, pod, err)
	}
	var wsErr error
	exec, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		if httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err) {
			wsErr = err
			return true
		}
		return false
	})
	if err != nil {
		return fmt.Errorf("pod %s/%s: attach: %w", namespace, pod, err)
	}
	out := &seenWriter{w: s.Stdout}
	opts := remotecommand.StreamOptions{Stdin: s.Stdin, Stdout: out, Tty: true}
	if s.Sizes != nil {
		opts.TerminalSizeQueue = sizeQueue{ctx: ctx, sizes: s.Sizes}
	}
	err = exec.StreamWithContext(quietly(ctx, slog.Default()), opts)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case refused(err):
		return refusal(namespace, pod, err, wsErr)
	case !out.seen.Load():
		// Opened, then failed before the agent's terminal sent a byte:
		// the API server relays a kubelet it cannot reach this way.
		return &NotAttachableError{Namespace: namespace, Pod: pod, Reason: "the attach failed before the agent's terminal sent anything: " + err.Error(), Err: err}
	}
	return fmt.Errorf("pod %s/%s: attach: %w", namespace, pod, err)
}

// refusal says why the API server opened no attach: err is the last
// protocol's refusal, wsErr the WebSocket's when SPDY was tried after
// it. The WebSocket's answer carries the API's Status; the SPDY one is
// the last word when the WebSocket's was only a Role without get on
// pods/attach, and then both are said.
func refusal(namespace, pod string, err, wsErr error) error {
	if wsErr == nil {
		return &NotAttachableError{Namespace: namespace, Pod: pod, Reason: "the API server did not open the attach: " + serverMessage(err), Err: err}
	}
	last, ws := strings.TrimPrefix(serverMessage(err), "unable to upgrade connection: "), serverMessage(wsErr)
	if st := serverStatus(wsErr); st == nil || st.Reason != metav1.StatusReasonForbidden || ws == last {
		return &NotAttachableError{Namespace: namespace, Pod: pod, Reason: "the API server did not open the attach: " + ws, Err: wsErr}
	}
	return &NotAttachableError{Namespace: namespace, Pod: pod, Err: err,
		Reason: "the API server did not open the attach: " + last + " (over WebSocket: " + ws + ")"}
}

// seenWriter notes that output came back.
type seenWriter struct {
	w    io.Writer
	seen atomic.Bool
}

func (s *seenWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		s.seen.Store(true)
	}
	return s.w.Write(p)
}

// refused reports whether err is the server declining the upgrade
// (client-go gives the SPDY one no type of its own).
func refused(err error) bool {
	return httpstream.IsUpgradeFailure(err) || strings.HasPrefix(err.Error(), "unable to upgrade connection")
}

// serverStatus is the API server's Status in err, if any (an
// UpgradeFailureError does not unwrap to its cause).
func serverStatus(err error) *metav1.Status {
	var se *apierrors.StatusError
	var uf *httpstream.UpgradeFailureError
	switch {
	case errors.As(err, &se):
		return &se.ErrStatus
	case errors.As(err, &uf) && errors.As(uf.Cause, &se):
		return &se.ErrStatus
	}
	return nil
}

// serverMessage is the API server's message in a refused attach.
func serverMessage(err error) string {
	if st := serverStatus(err); st != nil && st.Message != "" {
		return st.Message
	}
	var uf *httpstream.UpgradeFailureError
	if errors.As(err, &uf) && uf.Cause != nil {
		return uf.Cause.Error()
	}
	return err.Error()
}

// sizeQueue hands the user's terminal sizes to the executor.
type sizeQueue struct {
	ctx   context.Context
	sizes <-chan TerminalSize
}

func (q sizeQueue) Next() *remotecommand.TerminalSize {
	select {
	case s, ok := <-q.sizes:
		if !ok {
			return nil
		}
		return &s
	case <-q.ctx.Done():
		return nil
	}
}
