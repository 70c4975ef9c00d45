package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// rootCAConfigMap is the ConfigMap a controller-manager publishes in every
// namespace; the token volume the ServiceAccount admission plugin adds to
// pods reads ca.crt from it.
const rootCAConfigMap = "kube-root-ca.crt"

// Namespace creates a fresh namespace named after prefix for t, with what
// the controller-manager would put there: the "default" ServiceAccount
// (pods are refused without it) and the kube-root-ca.crt ConfigMap. It is
// deleted when t ends; with no namespace controller it then stays
// Terminating, which keeps stray writes into it from succeeding.
func (c *Cluster) Namespace(t testing.TB, prefix string) string {
	t.Helper()
	ctx := context.Background()
	name := namespaceName(prefix)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("kubetest: create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		err := c.client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("kubetest: delete namespace %s: %v", name, err)
		}
	})
	if err := c.ensureServiceAccount(ctx, name, "default"); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: rootCAConfigMap},
		Data:       map[string]string{"ca.crt": string(c.caPEM)},
	}
	// A real cluster's controller-manager may have published it first.
	if _, err := c.client.CoreV1().ConfigMaps(name).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("kubetest: create %s/%s: %v", name, rootCAConfigMap, err)
	}
	return name
}

var notDNSLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// namespaceName turns prefix (often t.Name()) into a DNS label with a
// random suffix.
func namespaceName(prefix string) string {
	p := notDNSLabel.ReplaceAllString(strings.ToLower(prefix), "-")
	if len(p) > 50 {
		p = p[:50]
	}
	p = strings.Trim(p, "-")
	if p == "" {
		p = "test"
	}
	return p + "-" + randomSuffix(5)
}

// ensureServiceAccount creates ServiceAccount ns/name unless it exists.
func (c *Cluster) ensureServiceAccount(ctx context.Context, ns, name string) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
	_, err := c.client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("kubetest: create service account %s/%s: %w", ns, name, err)
	}
	return nil
}

// ServiceAccountKubeconfig writes a kubeconfig file for ServiceAccount
// ns/sa (created if missing) with a real token from the TokenRequest API,
// valid for an hour, and returns its path. Its context's namespace is ns.
func (c *Cluster) ServiceAccountKubeconfig(ctx context.Context, ns, sa string) (string, error) {
	if err := c.ensureServiceAccount(ctx, ns, sa); err != nil {
		return "", err
	}
	token, err := c.serviceAccountToken(ctx, ns, sa)
	if err != nil {
		return "", err
	}
	return c.writeKubeconfig("sa-"+ns+"-"+sa+"-"+randomSuffix(5), token, ns)
}

// serviceAccountToken asks the TokenRequest API for an hour's token of
// ServiceAccount ns/sa for the apiserver's audience.
func (c *Cluster) serviceAccountToken(ctx context.Context, ns, sa string) (string, error) {
	return c.requestToken(ctx, ns, sa, authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptrTo(int64(time.Hour / time.Second)),
	})
}

// podToken is a token of pod's ServiceAccount bound to the pod, as a
// kubelet gets for the pod's projected token volume: it stops working
// once the pod is gone. audience "" means the apiserver's own.
func (c *Cluster) podToken(ctx context.Context, pod *corev1.Pod, audience string, expiration *int64) (string, error) {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	if expiration == nil {
		expiration = ptrTo(int64(time.Hour / time.Second))
	}
	spec := authenticationv1.TokenRequestSpec{
		ExpirationSeconds: expiration,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}
	if audience != "" {
		spec.Audiences = []string{audience}
	}
	return c.requestToken(ctx, pod.Namespace, sa, spec)
}

func (c *Cluster) requestToken(ctx context.Context, ns, sa string, spec authenticationv1.TokenRequestSpec) (string, error) {
	req := &authenticationv1.TokenRequest{Spec: spec}
	resp, err := c.client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("kubetest: token for service account %s/%s: %w", ns, sa, err)
	}
	return resp.Status.Token, nil
}

// writeKubeconfig writes a one-context kubeconfig for token into the
// cluster's directory under name.
func (c *Cluster) writeKubeconfig(name, token, namespace string) (string, error) {
	path := filepath.Join(c.dir, "kubeconfig-"+name)
	return path, writeKubeconfigFile(path, c.url, c.caPEM, token, namespace)
}

func writeKubeconfigFile(path, server string, caPEM []byte, token, namespace string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubetest"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos["kubetest"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["kubetest"] = &clientcmdapi.Context{Cluster: "kubetest", AuthInfo: "kubetest", Namespace: namespace}
	cfg.CurrentContext = "kubetest"
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("kubetest: kubeconfig dir: %w", err)
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("kubetest: write kubeconfig %s: %w", path, err)
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }

// ServiceAccountConfig is a client config for ServiceAccount ns/sa
// (created if missing) with an hour's token from the TokenRequest API:
// an identity that works the same on this harness and on a real cluster,
// where the harness's static-token users do not exist.
func (c *Cluster) ServiceAccountConfig(ctx context.Context, ns, sa string) (*rest.Config, error) {
	if err := c.ensureServiceAccount(ctx, ns, sa); err != nil {
		return nil, err
	}
	token, err := c.serviceAccountToken(ctx, ns, sa)
	if err != nil {
		return nil, err
	}
	return c.config(token), nil
}
