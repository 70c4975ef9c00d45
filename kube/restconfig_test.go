package kube

import (
	"os"

	"k8s.io/client-go/rest"
)

// configOf is the harness's client-go config as this package's: the
// tests get their identities from kubetest, which speaks client-go.
func configOf(r *rest.Config) *Config {
	c := &Config{Host: r.Host, CAData: r.CAData, Insecure: r.Insecure, ServerName: r.ServerName,
		CertData: r.CertData, KeyData: r.KeyData, BearerToken: r.BearerToken, TokenFile: r.BearerTokenFile,
		Username: r.Username, Password: r.Password, QPS: r.QPS, Burst: r.Burst, Timeout: r.Timeout, UserAgent: r.UserAgent}
	if r.CAFile != "" && len(c.CAData) == 0 {
		c.CAData, _ = os.ReadFile(r.CAFile)
	}
	if r.WrapTransport != nil {
		c.Wrap(r.WrapTransport)
	}
	return c
}
