package kubetest_test

import (
	"context"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// whoAmI asks the apiserver who cfg authenticates as.
func whoAmI(t *testing.T, cfg *rest.Config) authenticationv1.UserInfo {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(cfg)
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview: %v", err)
	}
	return r.Status.UserInfo
}

func kubeconfigREST(t *testing.T, path string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("load kubeconfig %s: %v", path, err)
	}
	return cfg
}

func TestAdminIsClusterAdminOverVerifiedTLS(t *testing.T) {
	t.Parallel()
	c := cluster.Get(t)
	t.Logf("control plane started in %s", c.StartupTime)
	cfg := kubeconfigREST(t, c.AdminKubeconfig())
	if cfg.Insecure || len(cfg.CAData) == 0 {
		t.Fatalf("admin kubeconfig does not verify TLS: insecure=%v, %d bytes of CA", cfg.Insecure, len(cfg.CAData))
	}
	if u := whoAmI(t, cfg); !contains(u.Groups, "system:masters") {
		t.Fatalf("admin groups = %v, want system:masters", u.Groups)
	}
	ns := c.Namespace(t, t.Name())
	cs := kubernetes.NewForConfigOrDie(cfg)
	if _, err := cs.CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("admin create secret: %v", err)
	}

	// A client that does not trust the cluster's CA is refused: the
	// configs verify the serving certificate rather than skip it.
	untrusted := rest.CopyConfig(cfg)
	untrusted.CAData = nil
	_, err := kubernetes.NewForConfigOrDie(untrusted).CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("client without the CA: err = %v, want a certificate error", err)
	}
}

func TestUnprivilegedUserIsForbidden(t *testing.T) {
	t.Parallel()
	c := cluster.Get(t)
	ns := c.Namespace(t, t.Name())
	cfg := kubeconfigREST(t, c.UserKubeconfig("alice"))
	if u := whoAmI(t, cfg); u.Username != "alice" {
		t.Fatalf("user = %q, want alice", u.Username)
	}
	_, err := kubernetes.NewForConfigOrDie(c.UserConfig("bob")).BatchV1().Jobs(ns).List(context.Background(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `"bob"`) {
		t.Fatalf("bob lists jobs: err = %v, want Forbidden naming bob", err)
	}
}

func TestServiceAccountKubeconfigIsTheServiceAccount(t *testing.T) {
	t.Parallel()
	c := cluster.Get(t)
	ns := c.Namespace(t, t.Name())
	ctx := context.Background()
	path, err := c.ServiceAccountKubeconfig(ctx, ns, "runner")
	if err != nil {
		t.Fatal(err)
	}
	cfg := kubeconfigREST(t, path)
	want := "system:serviceaccount:" + ns + ":runner"
	if u := whoAmI(t, cfg); u.Username != want {
		t.Fatalf("user = %q, want %q", u.Username, want)
	}
	_, err = kubernetes.NewForConfigOrDie(cfg).CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("service account lists secrets: err = %v, want Forbidden naming %s", err, want)
	}
	if _, err := c.AdminClient().CoreV1().ServiceAccounts(ns).Get(ctx, "runner", metav1.GetOptions{}); err != nil {
		t.Fatalf("the service account was not created: %v", err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
