package kube

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// ExecConfig is a kubeconfig user's exec credential plugin (the
// client.authentication.k8s.io ExecCredential protocol, v1 and
// v1beta1): a command that prints a token or a client certificate, as
// aws eks get-token, gke-gcloud-auth-plugin and kubelogin do.
type ExecConfig struct {
	APIVersion         string    `yaml:"apiVersion"`
	Command            string    `yaml:"command"`
	Args               []string  `yaml:"args"`
	Env                []ExecEnv `yaml:"env"`
	InstallHint        string    `yaml:"installHint"`
	ProvideClusterInfo bool      `yaml:"provideClusterInfo"`
	InteractiveMode    string    `yaml:"interactiveMode"`
	// where names the kubeconfig key, for errors.
	where string
}

// ExecEnv is one environment variable the plugin gets on top of ours.
type ExecEnv struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

var execAPIVersions = []string{"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"}

// execProvider runs the plugin when it has no credential or the one it
// has expired or was refused, and keeps the credential in between.
type execProvider struct {
	cfg     ExecConfig
	cluster *execCluster
	now     func() time.Time

	mu     sync.Mutex
	have   bool
	tok    string
	cert   *tls.Certificate
	expiry time.Time // zero: until refused
}

// execCluster is the cluster as KUBERNETES_EXEC_INFO tells a plugin
// that asks for it (provideClusterInfo).
type execCluster struct {
	Server        string `json:"server"`
	TLSServerName string `json:"tls-server-name,omitempty"`
	Insecure      bool   `json:"insecure-skip-tls-verify,omitempty"`
	CAData        []byte `json:"certificate-authority-data,omitempty"`
	ProxyURL      string `json:"proxy-url,omitempty"`
}

func newExecProvider(e *ExecConfig, c *Config) (*execProvider, error) {
	if e.where == "" {
		e.where = "exec credential plugin"
	}
	known := false
	for _, v := range execAPIVersions {
		known = known || e.APIVersion == v
	}
	if !known {
		return nil, fmt.Errorf("%s: apiVersion %q is not one of %s", e.where, e.APIVersion, strings.Join(execAPIVersions, ", "))
	}
	if e.InteractiveMode == "Always" {
		return nil, fmt.Errorf("%s: interactiveMode Always needs a terminal for %s, which wave-orchestrator does not give it (log in beforehand and use a plugin that caches its credential)", e.where, e.Command)
	}
	p := &execProvider{cfg: *e, now: time.Now}
	if e.ProvideClusterInfo {
		p.cluster = &execCluster{Server: c.Host, TLSServerName: c.ServerName, Insecure: c.Insecure, CAData: c.CAData, ProxyURL: c.ProxyURL}
	}
	return p, nil
}

func (p *execProvider) token() (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.refresh(); err != nil {
		return "", err
	}
	return p.tok, nil
}

func (p *execProvider) certificate() (*tls.Certificate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.refresh(); err != nil {
		return nil, err
	}
	return p.cert, nil
}

// expire drops the credential whose header sent was refused (unless a
// newer one replaced it meanwhile); the next request runs the plugin.
func (p *execProvider) expire(sent string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.have && (sent == "" || sent == "Bearer "+p.tok) {
		p.have = false
	}
	return true
}

func (p *execProvider) refresh() error {
	if p.have && (p.expiry.IsZero() || p.now().Before(p.expiry)) {
		return nil
	}
	cred, err := p.run()
	if err != nil {
		return err
	}
	p.have, p.tok, p.cert, p.expiry = true, cred.tok, cred.cert, cred.expiry
	return nil
}

type execCredential struct {
	tok    string
	cert   *tls.Certificate
	expiry time.Time
}

// execOutput is what the plugin prints.
type execOutput struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Status     *struct {
		Token                 string     `json:"token"`
		ExpirationTimestamp   *time.Time `json:"expirationTimestamp"`
		ClientCertificateData string     `json:"clientCertificateData"`
		ClientKeyData         string     `json:"clientKeyData"`
	} `json:"status"`
}

func (p *execProvider) run() (execCredential, error) {
	e := p.cfg
	info := map[string]any{"apiVersion": e.APIVersion, "kind": "ExecCredential"}
	spec := map[string]any{"interactive": false}
	if p.cluster != nil {
		spec["cluster"] = p.cluster
	}
	info["spec"] = spec
	infoJSON, err := json.Marshal(info)
	if err != nil {
		return execCredential{}, fmt.Errorf("%s: %w", e.where, err)
	}
	cmd := exec.Command(e.Command, e.Args...)
	cmd.Env = os.Environ()
	for _, v := range e.Env {
		cmd.Env = append(cmd.Env, v.Name+"="+v.Value)
	}
	cmd.Env = append(cmd.Env, "KUBERNETES_EXEC_INFO="+string(infoJSON))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		hint := ""
		if errors.Is(err, exec.ErrNotFound) && e.InstallHint != "" {
			hint = " (" + strings.TrimSpace(e.InstallHint) + ")"
		}
		return execCredential{}, fmt.Errorf("%s: run %s: %w%s", e.where, e.Command, err, hint)
	}
	return parseExecOutput(e, out.Bytes())
}

// parseExecOutput reads the plugin's ExecCredential; its errors never
// quote the output (it holds the credential).
func parseExecOutput(e ExecConfig, b []byte) (execCredential, error) {
	var o execOutput
	if err := json.Unmarshal(b, &o); err != nil {
		return execCredential{}, fmt.Errorf("%s: %s printed no ExecCredential JSON: %w", e.where, e.Command, err)
	}
	switch {
	case o.Kind != "ExecCredential":
		return execCredential{}, fmt.Errorf("%s: %s printed kind %q, want ExecCredential", e.where, e.Command, o.Kind)
	case o.APIVersion != e.APIVersion:
		return execCredential{}, fmt.Errorf("%s: %s printed apiVersion %q, want the configured %q", e.where, e.Command, o.APIVersion, e.APIVersion)
	case o.Status == nil:
		return execCredential{}, fmt.Errorf("%s: %s printed an ExecCredential without status", e.where, e.Command)
	}
	c := execCredential{tok: o.Status.Token}
	if o.Status.ExpirationTimestamp != nil {
		c.expiry = *o.Status.ExpirationTimestamp
	}
	if o.Status.ClientCertificateData != "" || o.Status.ClientKeyData != "" {
		kp, err := tls.X509KeyPair([]byte(o.Status.ClientCertificateData), []byte(o.Status.ClientKeyData))
		if err != nil {
			return execCredential{}, fmt.Errorf("%s: %s printed a client certificate and key that do not load: %w", e.where, e.Command, err)
		}
		c.cert = &kp
	}
	if c.tok == "" && c.cert == nil {
		return execCredential{}, fmt.Errorf("%s: %s printed neither a token nor a client certificate", e.where, e.Command)
	}
	return c, nil
}
