package kube

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// A user whose Role lacks get on pods/attach (docs/kubernetes/rbac.yaml
// before it had it) is refused the WebSocket attach: the error quotes the
// API server's refusal, which names the verb and the subresource.
func TestAttachRefusedByRBACQuotesTheRefusal(t *testing.T) {
	t.Parallel()
	kc := cluster.Get(t)
	e := &attachEnv{t: t, admin: kc.AdminClient(), ns: kc.Namespace(t, "attach")}
	applyManifestFor(t, kc, e.ns, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: launcherSA, Namespace: e.ns}, func(r *rbacv1.Role) {
		for i := range r.Rules {
			if slices.Contains(r.Rules[i].Resources, "pods/attach") {
				r.Rules[i].Verbs = []string{"create"}
			}
		}
	})
	cfg, err := kc.ServiceAccountConfig(context.Background(), e.ns, launcherSA)
	if err != nil {
		t.Fatal(err)
	}
	e.c = testClient(t, cfg)
	e.pod("no-get", "w0-A2-a1", "node-a", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: runningStatuses()})
	na := e.refused("no-get")
	t.Logf("reason: %s", na.Reason)
	if !strings.Contains(na.Reason, "the API server did not open the attach") || !strings.Contains(na.Reason, `get resource "pods/attach"`) {
		t.Errorf("reason %q, want the API server's refusal of get on pods/attach", na.Reason)
	}
}
