package kube

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// kubeletAttach plays a kubelet's attach endpoint for one agent
// container, the far end the API server connects an attach to (over
// SPDY, whatever protocol the client spoke): it reads what the user
// typed and the terminal size, and answers on the agent's terminal.
type kubeletAttach struct {
	t      *testing.T
	path   chan string // the request path and query the API server sent
	heard  chan string // keys typed, then the terminal size
	answer string
}

func (k *kubeletAttach) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	k.path <- req.URL.Path + "?" + req.URL.RawQuery
	if _, err := httpstream.Handshake(req, w, []string{"v4.channel.k8s.io"}); err != nil {
		k.t.Errorf("kubelet handshake: %v", err)
		return
	}
	streams := make(chan httpstream.Stream, 4)
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, req, func(s httpstream.Stream, _ <-chan struct{}) error {
		streams <- s
		return nil
	})
	if conn == nil {
		k.t.Error("kubelet: SPDY upgrade failed")
		return
	}
	defer conn.Close()
	byType := map[string]httpstream.Stream{}
	for len(byType) < 4 { // error, stdin, stdout, resize: a tty has no stderr
		select {
		case s := <-streams:
			byType[s.Headers().Get(corev1.StreamType)] = s
		case <-time.After(30 * time.Second):
			k.t.Errorf("kubelet: streams %v, want error, stdin, stdout and resize", keys(byType))
			return
		}
	}
	keys := make([]byte, len("hello agent"))
	if _, err := io.ReadFull(byType[corev1.StreamTypeStdin], keys); err != nil {
		k.t.Errorf("kubelet: stdin: %v", err)
		return
	}
	size, err := bufio.NewReader(byType[corev1.StreamTypeResize]).ReadString('\n')
	if err != nil {
		k.t.Errorf("kubelet: resize: %v", err)
		return
	}
	k.heard <- string(keys)
	k.heard <- strings.TrimSpace(size)
	_, _ = io.WriteString(byType[corev1.StreamTypeStdout], k.answer)
	_, _ = io.WriteString(byType[corev1.StreamTypeError], `{"metadata":{},"status":"Success"}`)
	for _, s := range byType {
		_ = s.Close()
	}
}

func keys(m map[string]httpstream.Stream) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// An attach through the real API server reaches the agent's terminal:
// keys and the terminal size go to the node, the agent's output comes
// back. The node is this test's stand-in for a kubelet; the container
// runtime behind a real one is what stays untested.
func TestAttachThroughAPIServerReachesTheAgentTerminal(t *testing.T) {
	e := newAttachEnv(t)
	k := &kubeletAttach{t: t, path: make(chan string, 2), heard: make(chan string, 2), answer: "agent says: hello agent\r\n"}
	kubelet := httptest.NewTLSServer(k)
	defer kubelet.Close()
	_, port, _ := net.SplitHostPort(kubelet.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	node := "kubelet-up-" + e.ns
	e.node(node, int32(p))
	e.pod("running", "w0-A1-a1", node, corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: agentRunning()})

	stdin, typing := io.Pipe()
	defer typing.Close()
	go func() { _, _ = io.WriteString(typing, "hello agent") }()
	sizes := make(chan TerminalSize, 1)
	sizes <- TerminalSize{Width: 132, Height: 43}
	var out strings.Builder
	if err := e.c.Attach(testCtx(t), e.ns, "running", AttachStreams{Stdin: stdin, Stdout: &out, Sizes: sizes}); err != nil {
		t.Fatalf("attach: %v", err)
	}
	if path := <-k.path; !strings.HasPrefix(path, "/attach/"+e.ns+"/running/agent?") || !strings.Contains(path, "tty=1") || !strings.Contains(path, "input=1") {
		t.Errorf("the API server asked the node for %s", path)
	}
	if got := <-k.heard; got != "hello agent" {
		t.Errorf("the agent got keys %q", got)
	}
	if got := <-k.heard; got != `{"Width":132,"Height":43}` {
		t.Errorf("the agent got terminal size %s", got)
	}
	if out.String() != k.answer {
		t.Errorf("the user saw %q, want %q", out.String(), k.answer)
	}
}
