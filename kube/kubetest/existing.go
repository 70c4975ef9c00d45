package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// existingCluster reports whether the tests run against a cluster that
// exists already ($KUBETEST_EXISTING_CLUSTER, like envtest's
// UseExistingCluster) instead of one this harness starts.
func existingCluster() bool {
	v := os.Getenv("KUBETEST_EXISTING_CLUSTER")
	return v != "" && v != "0"
}

// usersNamespace holds the ServiceAccounts that stand for the harness's
// static-token users on an existing cluster, which has no token file.
const usersNamespace = "kubetest-users"

// startExisting connects to the cluster of the kubeconfig the usual
// loading rules find ($KUBECONFIG, else ~/.kube/config; its current
// context), whose user must be a cluster admin: tests make namespaces,
// Roles and tokens. Nothing is started, nothing is stopped but the
// namespaces tests make (each deletes its own). The unprivileged users
// are ServiceAccounts of namespace kubetest-users, so their names are
// system:serviceaccount:kubetest-users:<name>.
func startExisting(ctx context.Context, s settings) (*Cluster, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubetest: KUBETEST_EXISTING_CLUSTER: kubeconfig: %w", err)
	}
	dir, err := os.MkdirTemp("", "kubetest-existing-")
	if err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	c := &Cluster{dir: dir, url: cfg.Host, users: map[string]user{}, adminCfg: rest.CopyConfig(cfg)}
	if err := rest.LoadTLSFiles(c.adminCfg); err != nil {
		return nil, fmt.Errorf("kubetest: KUBETEST_EXISTING_CLUSTER: %w", err)
	}
	c.caPEM = c.adminCfg.CAData
	if c.client, err = kubernetes.NewForConfig(c.adminCfg); err != nil {
		return nil, fmt.Errorf("kubetest: admin client: %w", err)
	}
	if c.adminKubecfg, err = writeAdminKubeconfig(cc, dir); err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: usersNamespace}}
	if _, err := c.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("kubetest: existing cluster %s: create namespace %s: %w", c.url, usersNamespace, err)
	}
	for _, name := range s.users {
		if err := c.ensureServiceAccount(ctx, usersNamespace, name); err != nil {
			return nil, err
		}
		token, err := c.serviceAccountToken(ctx, usersNamespace, name)
		if err != nil {
			return nil, err
		}
		c.users[name] = user{name: "system:serviceaccount:" + usersNamespace + ":" + name, token: token}
	}
	return c, nil
}

// writeAdminKubeconfig flattens the kubeconfig in use (files inlined) to
// one file in dir, for the processes tests start.
func writeAdminKubeconfig(cc clientcmd.ClientConfig, dir string) (string, error) {
	raw, err := cc.RawConfig()
	if err != nil {
		return "", fmt.Errorf("kubetest: kubeconfig: %w", err)
	}
	if err := clientcmdapi.FlattenConfig(&raw); err != nil {
		return "", fmt.Errorf("kubetest: kubeconfig: %w", err)
	}
	path := filepath.Join(dir, "kubeconfig-admin")
	if err := clientcmd.WriteToFile(raw, path); err != nil {
		return "", fmt.Errorf("kubetest: write kubeconfig %s: %w", path, err)
	}
	return path, nil
}
