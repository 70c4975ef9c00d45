package kube

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// The kubeconfig keys this package reads (what kubectl writes, and what
// EKS, GKE and AKS put there). A file may be YAML or JSON.
type kubeconfigFile struct {
	CurrentContext string `yaml:"current-context"`
	Clusters       []struct {
		Name    string           `yaml:"name"`
		Cluster kubeconfigServer `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string         `yaml:"name"`
		User kubeconfigUser `yaml:"user"`
	} `yaml:"users"`
	Contexts []struct {
		Name    string            `yaml:"name"`
		Context kubeconfigContext `yaml:"context"`
	} `yaml:"contexts"`
}

type kubeconfigServer struct {
	Server        string `yaml:"server"`
	CA            string `yaml:"certificate-authority"`
	CAData        string `yaml:"certificate-authority-data"`
	Insecure      bool   `yaml:"insecure-skip-tls-verify"`
	TLSServerName string `yaml:"tls-server-name"`
	ProxyURL      string `yaml:"proxy-url"`
	file          string
}

type kubeconfigUser struct {
	Token          string      `yaml:"token"`
	TokenFile      string      `yaml:"tokenFile"`
	ClientCert     string      `yaml:"client-certificate"`
	ClientKey      string      `yaml:"client-key"`
	ClientCertData string      `yaml:"client-certificate-data"`
	ClientKeyData  string      `yaml:"client-key-data"`
	Username       string      `yaml:"username"`
	Password       string      `yaml:"password"`
	Exec           *ExecConfig `yaml:"exec"`
	AuthProvider   *struct {
		Name string `yaml:"name"`
	} `yaml:"auth-provider"`
	file string
}

type kubeconfigContext struct {
	Cluster   string `yaml:"cluster"`
	User      string `yaml:"user"`
	Namespace string `yaml:"namespace"`
	file      string
}

// kubeconfigs is the merge of kubeconfig files: the first file to name a
// cluster, user or context, or to set current-context, wins.
type kubeconfigs struct {
	files       []string
	current     string
	currentFrom string
	clusters    map[string]kubeconfigServer
	users       map[string]kubeconfigUser
	contexts    map[string]kubeconfigContext
}

// configEnv is where the client config is looked for; tests give their
// own.
type configEnv struct {
	getenv func(string) string
	home   string
	// saDir holds the in-cluster service account's token, ca.crt and
	// namespace.
	saDir string
}

func defaultConfigEnv() configEnv {
	home, _ := os.UserHomeDir()
	return configEnv{getenv: os.Getenv, home: home, saDir: "/var/run/secrets/kubernetes.io/serviceaccount"}
}

// loadConfig finds the client config the way kubectl does: the file
// explicit names (it must exist), else the files $KUBECONFIG lists, else
// ~/.kube/config, else the in-cluster service account. context, when
// set, picks a context other than the current one. It returns the
// config, the context's namespace ("default" when it sets none) and
// the context's name ("" in a cluster).
func loadConfig(env configEnv, explicit, context string) (*Config, string, string, error) {
	var paths []string
	mustExist := false
	switch {
	case explicit != "":
		paths, mustExist = []string{explicit}, true
	case env.getenv("KUBECONFIG") != "":
		paths = filepath.SplitList(env.getenv("KUBECONFIG"))
	case env.home != "":
		paths = []string{filepath.Join(env.home, ".kube", "config")}
	}
	kc, err := readKubeconfigs(paths, mustExist)
	if err != nil {
		return nil, "", "", err
	}
	if len(kc.files) == 0 && context == "" {
		cfg, ns, err := inClusterConfig(env)
		if errors.Is(err, errNotInCluster) {
			return nil, "", "", fmt.Errorf("no kubeconfig (looked for %s) and %w", strings.Join(orNone(paths), ", "), err)
		}
		return cfg, ns, "", err
	}
	return kc.resolve(context)
}

func orNone(paths []string) []string {
	if len(paths) == 0 {
		return []string{"$KUBECONFIG or ~/.kube/config (neither is set)"}
	}
	return paths
}

func readKubeconfigs(paths []string, mustExist bool) (*kubeconfigs, error) {
	kc := &kubeconfigs{clusters: map[string]kubeconfigServer{}, users: map[string]kubeconfigUser{}, contexts: map[string]kubeconfigContext{}}
	seen := map[string]bool{}
	for _, p := range paths {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) && !mustExist {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("kubeconfig: %w", err)
		}
		if err := kc.add(p, b); err != nil {
			return nil, err
		}
	}
	return kc, nil
}

// add merges one file's content, which the earlier files override.
func (kc *kubeconfigs) add(path string, b []byte) error {
	var f kubeconfigFile
	if len(bytes.TrimSpace(b)) > 0 {
		if err := yaml.Unmarshal(b, &f); err != nil {
			return fmt.Errorf("kubeconfig %s: %w", path, err)
		}
	}
	kc.files = append(kc.files, path)
	if kc.current == "" && f.CurrentContext != "" {
		kc.current, kc.currentFrom = f.CurrentContext, path
	}
	for _, c := range f.Clusters {
		if _, ok := kc.clusters[c.Name]; !ok {
			c.Cluster.file = path
			kc.clusters[c.Name] = c.Cluster
		}
	}
	for _, u := range f.Users {
		if _, ok := kc.users[u.Name]; !ok {
			u.User.file = path
			kc.users[u.Name] = u.User
		}
	}
	for _, c := range f.Contexts {
		if _, ok := kc.contexts[c.Name]; !ok {
			c.Context.file = path
			kc.contexts[c.Name] = c.Context
		}
	}
	return nil
}

// resolve is the config of the context named (the current one when "").
func (kc *kubeconfigs) resolve(name string) (*Config, string, string, error) {
	where := "kubeconfig " + strings.Join(kc.files, ", ")
	if name == "" {
		if kc.current == "" {
			return nil, "", "", fmt.Errorf("%s: current-context is not set and no context was given", where)
		}
		name, where = kc.current, "kubeconfig "+kc.currentFrom
	}
	ctx, ok := kc.contexts[name]
	if !ok {
		return nil, "", "", fmt.Errorf("%s: context %q does not exist (contexts: %s)", where, name, strings.Join(slices.Sorted(maps.Keys(kc.contexts)), ", "))
	}
	at := fmt.Sprintf("kubeconfig %s: context %q", ctx.file, name)
	srv, ok := kc.clusters[ctx.Cluster]
	if !ok {
		return nil, "", "", fmt.Errorf("%s: cluster %q does not exist", at, ctx.Cluster)
	}
	cfg, err := srv.config(ctx.Cluster)
	if err != nil {
		return nil, "", "", err
	}
	if ctx.User != "" {
		u, ok := kc.users[ctx.User]
		if !ok {
			return nil, "", "", fmt.Errorf("%s: user %q does not exist", at, ctx.User)
		}
		if err := u.apply(cfg, ctx.User); err != nil {
			return nil, "", "", err
		}
	}
	ns := ctx.Namespace
	if ns == "" {
		ns = "default"
	}
	return cfg, ns, name, nil
}

func (s kubeconfigServer) config(name string) (*Config, error) {
	at := fmt.Sprintf("kubeconfig %s: cluster %q", s.file, name)
	if s.Server == "" {
		return nil, fmt.Errorf("%s: server is not set", at)
	}
	host := s.Server
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	cfg := &Config{Host: host, Insecure: s.Insecure, ServerName: s.TLSServerName, ProxyURL: s.ProxyURL, Source: "kubeconfig " + s.file}
	var err error
	if cfg.CAData, err = fileOrData(s.file, s.CA, s.CAData); err != nil {
		return nil, fmt.Errorf("%s: certificate-authority%s", at, err)
	}
	return cfg, nil
}

func (u kubeconfigUser) apply(cfg *Config, name string) error {
	at := fmt.Sprintf("kubeconfig %s: user %q", u.file, name)
	if u.AuthProvider != nil {
		return fmt.Errorf("%s: auth-provider %q is not supported (use an exec credential plugin, e.g. kubelogin or gke-gcloud-auth-plugin)", at, u.AuthProvider.Name)
	}
	var err error
	if cfg.CertData, err = fileOrData(u.file, u.ClientCert, u.ClientCertData); err != nil {
		return fmt.Errorf("%s: client-certificate%s", at, err)
	}
	if cfg.KeyData, err = fileOrData(u.file, u.ClientKey, u.ClientKeyData); err != nil {
		return fmt.Errorf("%s: client-key%s", at, err)
	}
	if (len(cfg.CertData) > 0) != (len(cfg.KeyData) > 0) {
		return fmt.Errorf("%s: client-certificate and client-key go together (one is set)", at)
	}
	cfg.BearerToken, cfg.Username, cfg.Password = u.Token, u.Username, u.Password
	if u.TokenFile != "" {
		cfg.TokenFile = relativeTo(u.file, u.TokenFile)
	}
	if u.Exec != nil {
		e := *u.Exec
		if e.Command == "" {
			return fmt.Errorf("%s: exec: command is not set", at)
		}
		if strings.ContainsRune(e.Command, '/') {
			e.Command = relativeTo(u.file, e.Command)
		}
		e.where = at + ": exec"
		cfg.Exec = &e
	}
	cfg.Source = "kubeconfig " + u.file
	return nil
}

// fileOrData is a PEM value given inline (base64, the -data key) or as
// a file relative to the kubeconfig's directory; the error's text
// follows the key's name.
func fileOrData(kubeconfig, file, data string) ([]byte, error) {
	if data != "" {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(data))
		if err != nil {
			return nil, fmt.Errorf("-data is not base64: %w", err)
		}
		return b, nil
	}
	if file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(relativeTo(kubeconfig, file))
	if err != nil {
		return nil, fmt.Errorf(": %w", err)
	}
	return b, nil
}

func relativeTo(kubeconfig, path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, path[2:])
		}
	}
	return filepath.Join(filepath.Dir(kubeconfig), path)
}

// inClusterConfig is the pod's service account: the API server from
// $KUBERNETES_SERVICE_HOST/PORT, its token (read again as it rotates),
// CA and namespace from the mounted files.
func inClusterConfig(env configEnv) (*Config, string, error) {
	host, port := env.getenv("KUBERNETES_SERVICE_HOST"), env.getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, "", errNotInCluster
	}
	tokenPath := filepath.Join(env.saDir, "token")
	if _, err := os.Stat(tokenPath); err != nil {
		return nil, "", fmt.Errorf("in-cluster service account: %w", err)
	}
	cfg := &Config{Host: "https://" + net.JoinHostPort(host, port), TokenFile: tokenPath, Source: "in-cluster service account"}
	if ca, err := os.ReadFile(filepath.Join(env.saDir, "ca.crt")); err == nil {
		cfg.CAData = ca
	}
	ns := env.getenv("POD_NAMESPACE")
	if ns == "" {
		if b, err := os.ReadFile(filepath.Join(env.saDir, "namespace")); err == nil {
			ns = strings.TrimSpace(string(b))
		}
	}
	if ns == "" {
		ns = "default"
	}
	return cfg, ns, nil
}
