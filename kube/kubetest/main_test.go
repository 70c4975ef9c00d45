package kubetest_test

import (
	"os"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
)

var cluster kubetest.Shared

func TestMain(m *testing.M) { os.Exit(cluster.Run(m)) }
