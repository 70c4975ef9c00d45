package kubetest_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
)

// KUBETEST_EXISTING_CLUSTER points the harness at the cluster of
// $KUBECONFIG instead of starting one (here: the shared test cluster,
// standing in for a real one): its admin is the kubeconfig's user, the
// unprivileged users are ServiceAccounts with real tokens, namespaces
// and tokens work, and a test that needs the harness's Node skips.
func TestExistingClusterSwitchUsesTheKubeconfigsCluster(t *testing.T) {
	real := cluster.Get(t)
	if real.Existing() {
		t.Skip("already on an existing cluster")
	}
	t.Setenv("KUBETEST_EXISTING_CLUSTER", "1")
	t.Setenv("KUBECONFIG", real.AdminKubeconfig())
	c := kubetest.Start(t)
	if !c.Existing() || c.URL() != real.URL() {
		t.Fatalf("existing = %v, url %s; want the kubeconfig's cluster %s", c.Existing(), c.URL(), real.URL())
	}
	if u := whoAmI(t, c.AdminConfig()); u.Username != "kubetest-admin" {
		t.Errorf("admin is %q, want the kubeconfig's user", u.Username)
	}
	if u := whoAmI(t, c.UserConfig("alice")); u.Username != "system:serviceaccount:kubetest-users:alice" {
		t.Errorf("alice is %q, want a ServiceAccount of kubetest-users", u.Username)
	}
	if u := whoAmI(t, kubeconfigREST(t, c.UserKubeconfig("bob"))); u.Username != "system:serviceaccount:kubetest-users:bob" {
		t.Errorf("bob's kubeconfig is %q", u.Username)
	}
	ns := c.Namespace(t, "existing")
	if _, err := c.AdminClient().CoreV1().ServiceAccounts(ns).Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		t.Errorf("namespace %s has no default ServiceAccount: %v", ns, err)
	}
	t.Run("node", func(t *testing.T) {
		c.StartNode(t, kubetest.NodeOptions{Namespace: ns})
		t.Error("StartNode on an existing cluster did not skip")
	})
}
