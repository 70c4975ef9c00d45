package kube

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
)

// An attach through the real API server reaches the agent's terminal:
// keys and the terminal size go to the node, the agent's output comes
// back, and the attach ends when the container does. The node's kubelet
// endpoint is kubetest's stand-in; the container runtime behind a real
// kubelet is what stays untested.
func TestAttachThroughAPIServerReachesTheAgentTerminal(t *testing.T) {
	t.Parallel()
	e := newAttachEnv(t)
	node := cluster.Get(t).StartAttachNode(t)
	node.RunningPod(t, e.ns, "running", Container, nil, nil)

	stdin, typing := io.Pipe()
	defer typing.Close()
	sizes := make(chan TerminalSize, 1)
	sizes <- TerminalSize{Width: 132, Height: 43}
	var out strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- e.c.Attach(testCtx(t), e.ns, "running", AttachStreams{Stdin: stdin, Stdout: &out, Sizes: sizes})
	}()

	s := node.Accept(t, 60*time.Second)
	if !strings.HasPrefix(s.Path, "/attach/"+e.ns+"/running/agent?") || !strings.Contains(s.Path, "tty=1") || !strings.Contains(s.Path, "input=1") {
		t.Errorf("the API server asked the node for %s", s.Path)
	}
	if got := <-s.Sizes; got != (kubetest.TerminalSize{Width: 132, Height: 43}) {
		t.Errorf("the agent's terminal got size %v", got)
	}
	go func() { _, _ = io.WriteString(typing, "hello agent") }()
	keys := make([]byte, len("hello agent"))
	if _, err := io.ReadFull(s.Stdin, keys); err != nil || string(keys) != "hello agent" {
		t.Errorf("the agent got keys %q (%v)", keys, err)
	}
	_, _ = io.WriteString(s.Stdout, "agent says: hello\r\n")
	s.End()
	if err := <-done; err != nil {
		t.Fatalf("attach: %v", err)
	}
	if out.String() != "agent says: hello\r\n" {
		t.Errorf("the user saw %q", out.String())
	}
}
