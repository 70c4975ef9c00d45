package kube

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCAPEM is a CA certificate (the client loads it as it is made).
var testCAPEM = func() string {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubetest-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}()

// kubeconfigDir is a directory of files named as given.
func kubeconfigDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// noClusterEnv clears where else a client config could come from: the
// test's own files are all there is ($KUBECONFIG names a file that does
// not exist, so not even the user's ~/.kube/config is read).
func noClusterEnv(t *testing.T) {
	t.Helper()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "no-kubeconfig"))
	for _, v := range []string{"KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "KUBERNETES_MASTER", "POD_NAMESPACE"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
}

const oneContext = `
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://dev.example.com:6443
    certificate-authority: ca.pem
    tls-server-name: api.dev
users:
- name: dev-user
  user:
    token: s3cret-token
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user, namespace: agents}
- name: other
  context: {cluster: dev-cluster, user: nobody}
- name: nons
  context: {cluster: dev-cluster}
`

// The kubeconfig keys the client reads: the current context's server,
// CA (a file next to the kubeconfig), server name, token and namespace;
// a context given instead; and errors that name the file and the key.
func TestKubeconfigIsReadAsKubectlReadsIt(t *testing.T) {
	noClusterEnv(t)
	dir := kubeconfigDir(t, map[string]string{"config": oneContext, "ca.pem": testCAPEM})
	path := filepath.Join(dir, "config")
	c, err := NewClient(path, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.Config
	if cfg.Host != "https://dev.example.com:6443" || cfg.CAFile != filepath.Join(dir, "ca.pem") || cfg.ServerName != "api.dev" ||
		cfg.BearerToken != "s3cret-token" || c.Namespace != "agents" || c.Context != "dev" {
		t.Errorf("got %+v ns %q context %q", cfg, c.Namespace, c.Context)
	}
	if c, err := NewClient(path, "nons"); err != nil || c.Namespace != "default" {
		t.Errorf("a context without a namespace: %v, want default", err)
	}
	for _, c := range []struct{ context, want string }{
		{"missing", `context "missing" does not exist`},
		{"other", `user "nobody" was not found for context "other"`},
	} {
		_, err := NewClient(path, c.context)
		if err == nil || !strings.Contains(err.Error(), "kubeconfig "+path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("context %s: %v, want the file and %s", c.context, err, c.want)
		}
	}
}

func TestKubeconfigErrorsNameTheFileAndTheKey(t *testing.T) {
	noClusterEnv(t)
	b64 := base64.StdEncoding.EncodeToString([]byte(testCAPEM))
	for _, c := range []struct {
		name, cluster, user, want string
	}{
		{"no server", `{}`, `{token: t0ken}`, `no server found for cluster "c"`},
		{"missing CA file", `{server: https://x, certificate-authority: nowhere.pem}`, `{token: t0ken}`, `unable to read certificate-authority`},
		{"CA data not base64", `{server: https://x, certificate-authority-data: "!!"}`, `{token: t0ken}`, `illegal base64 data`},
		{"cert without key", `{server: https://x, certificate-authority-data: ` + b64 + `}`, `{client-certificate-data: ` + b64 + `}`, `client-key-data or client-key must be specified for u`},
		{"auth provider", `{server: https://x}`, `{auth-provider: {name: gcp}}`, `no Auth Provider found for name "gcp"`},
		{"exec without command", `{server: https://x}`, `{exec: {apiVersion: client.authentication.k8s.io/v1}}`, `command must be specified for u to use exec authentication plugin`},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := "current-context: x\nclusters: [{name: c, cluster: " + c.cluster + "}]\nusers: [{name: u, user: " + c.user +
				"}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
			dir := kubeconfigDir(t, map[string]string{"kc": body})
			path := filepath.Join(dir, "kc")
			_, err := NewClient(path, "")
			if err == nil || !strings.Contains(err.Error(), "kubeconfig "+path) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want the file and %q", err, c.want)
			}
			if strings.Contains(err.Error(), "t0ken") {
				t.Errorf("the error shows the token: %v", err)
			}
		})
	}
}

// $KUBECONFIG lists files merged as kubectl merges them: the first file
// to set current-context or to name a cluster, user or context wins; a
// listed file that does not exist is skipped; relative paths are the
// defining file's.
func TestKubeconfigListMergesFirstWins(t *testing.T) {
	noClusterEnv(t)
	dir := kubeconfigDir(t, map[string]string{
		"a/config": "current-context: a\nclusters: [{name: shared, cluster: {server: https://from-a}}]\n" +
			"contexts: [{name: a, context: {cluster: shared, user: only-b}}]\n",
		"b/config": "current-context: b\nclusters: [{name: shared, cluster: {server: https://from-b}}]\n" +
			"users: [{name: only-b, user: {tokenFile: token, exec: null}}]\n" +
			"contexts: [{name: a, context: {cluster: other}}, {name: b, context: {cluster: shared}}]\n",
		"b/token": "t0ken\n",
	})
	list := strings.Join([]string{filepath.Join(dir, "missing"), filepath.Join(dir, "a/config"), filepath.Join(dir, "b/config")}, string(os.PathListSeparator))
	t.Setenv("KUBECONFIG", list)
	c, err := NewClient("", "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Context != "a" || c.Config.Host != "https://from-a" || c.Config.BearerTokenFile != filepath.Join(dir, "b", "token") {
		t.Errorf("context %q host %q token file %q", c.Context, c.Config.Host, c.Config.BearerTokenFile)
	}
}

// With no kubeconfig where $KUBECONFIG (else ~/.kube/config) says and
// no pod's service account, the error says where it looked; an explicit
// kubeconfig must exist.
func TestClientConfigWithoutAnySaysWhereItLooked(t *testing.T) {
	noClusterEnv(t)
	_, err := NewClient("", "")
	if err == nil || !strings.Contains(err.Error(), os.Getenv("KUBECONFIG")) || !strings.Contains(err.Error(), "KUBERNETES_SERVICE_HOST") {
		t.Errorf("no config anywhere: %v", err)
	}
	dir := kubeconfigDir(t, map[string]string{"config": oneContext, "ca.pem": testCAPEM})
	if _, err := NewClient(filepath.Join(dir, "nope"), ""); err == nil {
		t.Error("an explicit kubeconfig that does not exist is no error")
	}
}
