package runs

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter/tmuxtest"
)

// The test binary doubles as the runner (`agent-run`, what a session
// runs) and as the local executor's agent (`local ...`, which prints
// "ready" and waits to be stopped), so a run goes through the real
// runtime on a real tmux server.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "agent-run":
			if len(os.Args) != 4 || os.Args[2] != "--payload" {
				fmt.Fprintln(os.Stderr, "usage: agent-run --payload PATH")
				os.Exit(2)
			}
			os.Exit(runtime.RunAgent(context.Background(), os.Args[3], runtime.Stdio{In: os.Stdin, Out: os.Stdout}))
		case "local":
			stop := make(chan os.Signal, 1)
			signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
			fmt.Println("ready")
			<-stop
			os.Exit(143)
		}
	}
	code := tmuxtest.Run(m, nil)
	cluster.Stop()
	os.Exit(code)
}

// cluster is a real API server for the kubernetes lane's tests, started
// by the first that asks.
var cluster kubetest.Shared
