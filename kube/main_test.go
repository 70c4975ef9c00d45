package kube

import (
	"os"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
)

// cluster is the package's shared control plane (a real kube-apiserver
// with RBAC), started by the first test that needs it.
var cluster kubetest.Shared

func TestMain(m *testing.M) { os.Exit(cluster.Run(m)) }
