package kubetest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// AttachNode is a registered Node whose kubelet endpoint serves the
// attach API, so that an attach to one of its pods goes through the API
// server to the test, which plays the container's terminal. (The Node of
// StartNode runs pods but serves no kubelet API.) The API server does not
// verify kubelet certificates here (no --kubelet-certificate-authority),
// so a self-signed endpoint on 127.0.0.1 does.
type AttachNode struct {
	c        *Cluster
	name     string
	sessions chan *AttachSession
}

// AttachSession is one attach that reached the node: Stdin is what the
// user typed, Stdout the container's terminal, Sizes the terminal sizes
// the user's side sent. End finishes it the way a container that exits
// does; the session also ends when the client goes away.
type AttachSession struct {
	// Path is the kubelet request's path and query, as the API server
	// sent them (/attach/<ns>/<pod>/<container>?...).
	Path   string
	Stdin  io.Reader
	Stdout io.Writer
	Sizes  <-chan TerminalSize
	// Closed is closed when the connection is gone.
	Closed <-chan bool

	errStream httpstream.Stream
	end       chan struct{}
}

// TerminalSize is a size the user's side of an attach sent.
type TerminalSize struct{ Width, Height uint16 }

// End reports success on the error stream and closes the session.
func (s *AttachSession) End() {
	_, _ = io.WriteString(s.errStream, `{"metadata":{},"status":"Success"}`)
	close(s.end)
}

// StartAttachNode registers a node (removed when t ends) and serves its
// attach endpoint.
func (c *Cluster) StartAttachNode(t testing.TB) *AttachNode {
	t.Helper()
	n := &AttachNode{c: c, name: "kubetest-attach-" + randomSuffix(5), sessions: make(chan *AttachSession, 4)}
	srv := httptest.NewTLSServer(http.HandlerFunc(n.serve))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	ctx := context.Background()
	nodes := c.client.CoreV1().Nodes()
	node, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: create node %s: %v", n.name, err)
	}
	t.Cleanup(func() {
		if err := nodes.Delete(context.Background(), n.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("kubetest: delete node %s: %v", n.name, err)
		}
	})
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(p)
	if _, err := nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("kubetest: node %s status: %v", n.name, err)
	}
	return n
}

// Name is the node's name.
func (n *AttachNode) Name() string { return n.name }

// RunningPod creates pod ns/name on this node, one tty container named
// container, with labels and annotations, and reports it Running as a
// kubelet would.
func (n *AttachNode) RunningPod(t testing.TB, ns, name, container string, labels, annotations map[string]string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	pods := n.c.client.CoreV1().Pods(ns)
	pod, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{NodeName: n.name, RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: container, Image: "kubetest.invalid/attach:1", TTY: true, Stdin: true}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: create pod %s/%s: %v", ns, name, err)
	}
	now := metav1.Now()
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "127.0.0.1", StartTime: &now,
		ContainerStatuses: []corev1.ContainerStatus{{Name: container, Image: "kubetest.invalid/attach:1", Ready: true, Started: ptrTo(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}}
	if pod, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("kubetest: pod %s/%s status: %v", ns, name, err)
	}
	return pod
}

// Accept waits up to timeout for the next attach to reach the node.
func (n *AttachNode) Accept(t testing.TB, timeout time.Duration) *AttachSession {
	t.Helper()
	select {
	case s := <-n.sessions:
		return s
	case <-time.After(timeout):
		t.Fatalf("kubetest: no attach reached node %s within %s", n.name, timeout)
		return nil
	}
}

// serve is the kubelet's attach handler: SPDY, remote command protocol
// v4, with a tty (so streams error, stdin, stdout and resize).
func (n *AttachNode) serve(w http.ResponseWriter, req *http.Request) {
	if _, err := httpstream.Handshake(req, w, []string{"v4.channel.k8s.io"}); err != nil {
		return
	}
	streams := make(chan httpstream.Stream, 8)
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, req, func(s httpstream.Stream, _ <-chan struct{}) error {
		streams <- s
		return nil
	})
	if conn == nil {
		return
	}
	defer conn.Close()
	byType := map[string]httpstream.Stream{}
	for len(byType) < 4 {
		select {
		case s := <-streams:
			byType[s.Headers().Get(corev1.StreamType)] = s
		case <-conn.CloseChan():
			return
		case <-time.After(30 * time.Second):
			return
		}
	}
	sizes := make(chan TerminalSize, 16)
	go readSizes(byType[corev1.StreamTypeResize], sizes)
	s := &AttachSession{Path: req.URL.Path + "?" + req.URL.RawQuery, Stdin: byType[corev1.StreamTypeStdin],
		Stdout: byType[corev1.StreamTypeStdout], Sizes: sizes, Closed: conn.CloseChan(),
		errStream: byType[corev1.StreamTypeError], end: make(chan struct{})}
	n.sessions <- s
	select {
	case <-s.end:
		for _, st := range byType {
			_ = st.Close()
		}
	case <-conn.CloseChan():
	}
}

func readSizes(r io.Reader, out chan<- TerminalSize) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var s TerminalSize
		if json.Unmarshal(sc.Bytes(), &s) == nil {
			select {
			case out <- s:
			default: // nobody reads: drop
			}
		}
	}
}

// String names the session for test messages.
func (s *AttachSession) String() string { return fmt.Sprintf("attach %s", s.Path) }
