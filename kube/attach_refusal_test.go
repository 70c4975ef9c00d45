package kube

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// A user whose Role lacks get on pods/attach (docs/kubernetes/rbac.yaml
// before it had it) is refused the WebSocket attach and allowed the SPDY
// one: when the SPDY attach then fails too, the error says why it did,
// not only that the WebSocket was forbidden.
func TestAttachRefusedOverBothProtocolsQuotesTheSPDYRefusal(t *testing.T) {
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	name := "kubelet-down-" + e.ns
	e.node(name, int32(port))
	e.pod("kubelet-down", "w0-A2-a1", name, corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: runningStatuses()})
	na := e.refused("kubelet-down")
	t.Logf("reason: %s", na.Reason)
	if !strings.Contains(na.Reason, fmt.Sprintf("127.0.0.1:%d", port)) {
		t.Errorf("reason %q, want the SPDY attach's failure to reach the kubelet", na.Reason)
	}
}
