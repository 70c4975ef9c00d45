package kubernetes

import (
	"os"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

// testMain stops the shared API server (started by the first test that
// asks for it) after the tests.
func testMain(m *testing.M) int {
	defer kubeCluster.Stop()
	return e2etest.Run(m)
}
