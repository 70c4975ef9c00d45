package kube

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
)

// cluster is the package's shared control plane (a real kube-apiserver
// with RBAC), started by the first test that needs it.
var cluster kubetest.Shared

func TestMain(m *testing.M) {
	code := cluster.Run(m)
	if rbacRunner.path != "" {
		os.RemoveAll(filepath.Dir(rbacRunner.path))
	}
	os.Exit(code)
}
