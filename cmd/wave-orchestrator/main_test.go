package main

import (
	"os"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/internal/e2etest"
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	defer kubeCluster.Stop()
	return e2etest.Run(m)
}
