package kube

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testCAPEM = "-----BEGIN CERTIFICATE-----\nnot really\n-----END CERTIFICATE-----\n"

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

func envOf(vars map[string]string, home, saDir string) configEnv {
	return configEnv{getenv: func(k string) string { return vars[k] }, home: home, saDir: saDir}
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
	dir := kubeconfigDir(t, map[string]string{"config": oneContext, "ca.pem": testCAPEM})
	path := filepath.Join(dir, "config")
	cfg, ns, name, err := loadConfig(envOf(nil, "", ""), path, "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://dev.example.com:6443" || string(cfg.CAData) != testCAPEM || cfg.ServerName != "api.dev" ||
		cfg.BearerToken != "s3cret-token" || ns != "agents" || name != "dev" {
		t.Errorf("got %+v ns %q context %q", cfg, ns, name)
	}
	if _, ns, _, err := loadConfig(envOf(nil, "", ""), path, "nons"); err != nil || ns != "default" {
		t.Errorf("a context without a namespace: %q %v, want default", ns, err)
	}
	for _, c := range []struct{ context, want string }{
		{"missing", `kubeconfig ` + path + `: context "missing" does not exist (contexts: dev, nons, other)`},
		{"other", `kubeconfig ` + path + `: context "other": user "nobody" does not exist`},
	} {
		_, _, _, err := loadConfig(envOf(nil, "", ""), path, c.context)
		if err == nil || err.Error() != c.want {
			t.Errorf("context %s: %v, want %s", c.context, err, c.want)
		}
	}
}

func TestKubeconfigErrorsNameTheFileAndTheKey(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte(testCAPEM))
	for _, c := range []struct {
		name, cluster, user, want string
	}{
		{"no server", `{}`, `{token: t0ken}`, `cluster "c": server is not set`},
		{"missing CA file", `{server: https://x, certificate-authority: nowhere.pem}`, `{token: t0ken}`, `cluster "c": certificate-authority: open `},
		{"CA data not base64", `{server: https://x, certificate-authority-data: "!!"}`, `{token: t0ken}`, `cluster "c": certificate-authority-data is not base64`},
		{"cert without key", `{server: https://x, certificate-authority-data: ` + b64 + `}`, `{client-certificate-data: ` + b64 + `}`, `user "u": client-certificate and client-key go together`},
		{"auth provider", `{server: https://x}`, `{auth-provider: {name: gcp}}`, `user "u": auth-provider "gcp" is not supported`},
		{"exec without command", `{server: https://x}`, `{exec: {apiVersion: client.authentication.k8s.io/v1}}`, `user "u": exec: command is not set`},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := "current-context: x\nclusters: [{name: c, cluster: " + c.cluster + "}]\nusers: [{name: u, user: " + c.user +
				"}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
			dir := kubeconfigDir(t, map[string]string{"kc": body})
			path := filepath.Join(dir, "kc")
			_, _, _, err := loadConfig(envOf(nil, "", ""), path, "")
			if err == nil || !strings.Contains(err.Error(), "kubeconfig "+path+": ") || !strings.Contains(err.Error(), c.want) {
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
	dir := kubeconfigDir(t, map[string]string{
		"a/config": "current-context: a\nclusters: [{name: shared, cluster: {server: https://from-a}}]\n" +
			"contexts: [{name: a, context: {cluster: shared, user: only-b}}]\n",
		"b/config": "current-context: b\nclusters: [{name: shared, cluster: {server: https://from-b}}]\n" +
			"users: [{name: only-b, user: {tokenFile: token, exec: null}}]\n" +
			"contexts: [{name: a, context: {cluster: other}}, {name: b, context: {cluster: shared}}]\n",
	})
	list := strings.Join([]string{filepath.Join(dir, "missing"), filepath.Join(dir, "a/config"), filepath.Join(dir, "b/config")}, string(os.PathListSeparator))
	cfg, _, name, err := loadConfig(envOf(map[string]string{"KUBECONFIG": list}, "/nonexistent-home", ""), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if name != "a" || cfg.Host != "https://from-a" || cfg.TokenFile != filepath.Join(dir, "b", "token") {
		t.Errorf("context %q host %q token file %q", name, cfg.Host, cfg.TokenFile)
	}
}

// ~/.kube/config when $KUBECONFIG is unset; with neither, the pod's
// service account; with none of them an error that says where it looked.
func TestClientConfigFallsBackToHomeThenInCluster(t *testing.T) {
	home := kubeconfigDir(t, map[string]string{".kube/config": oneContext, ".kube/ca.pem": testCAPEM})
	if cfg, _, _, err := loadConfig(envOf(nil, home, ""), "", ""); err != nil || cfg.Host != "https://dev.example.com:6443" {
		t.Errorf("home kubeconfig: %+v %v", cfg, err)
	}
	sa := kubeconfigDir(t, map[string]string{"token": "pod-token\n", "ca.crt": testCAPEM, "namespace": "agents\n"})
	env := envOf(map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}, t.TempDir(), sa)
	cfg, ns, name, err := loadConfig(env, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://10.0.0.1:443" || cfg.TokenFile != filepath.Join(sa, "token") || string(cfg.CAData) != testCAPEM || ns != "agents" || name != "" {
		t.Errorf("in-cluster: %+v ns %q context %q", cfg, ns, name)
	}
	_, _, _, err = loadConfig(envOf(nil, t.TempDir(), sa), "", "")
	if err == nil || !strings.Contains(err.Error(), ".kube/config") || !strings.Contains(err.Error(), "KUBERNETES_SERVICE_HOST") {
		t.Errorf("no config anywhere: %v", err)
	}
	if _, _, _, err := loadConfig(envOf(nil, "", ""), filepath.Join(home, "nope"), ""); err == nil {
		t.Error("an explicit kubeconfig that does not exist is no error")
	}
}

// A token file is read again as it rotates, and an unreadable moment
// keeps the last token.
func TestTokenFileIsReadAgainAsItRotates(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "token")
	if err := os.WriteFile(p, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &tokenFile{path: p}
	if tok, err := f.get(); err != nil || tok != "one" {
		t.Fatalf("%q %v", tok, err)
	}
	if err := os.WriteFile(p, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.read = f.read.Add(-2 * 60e9) // a minute and more later
	if tok, _ := f.get(); tok != "two" {
		t.Errorf("after rotation %q, want two", tok)
	}
	os.Remove(p)
	f.read = f.read.Add(-2 * 60e9)
	if tok, err := f.get(); err != nil || tok != "two" {
		t.Errorf("while the file is replaced: %q %v, want the last token", tok, err)
	}
}
