package config

import (
	"maps"
	"slices"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/internal/redact"
)

// alwaysSecret are credentials whatever the configuration says: the
// GitHub CLI's and the API's conventional token variables.
var alwaysSecret = []string{"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}

// IsSecretName reports whether an environment variable's name alone says
// it holds a secret: it mentions a token, secret, key, password or
// credential (ANTHROPIC_API_KEY, GITHUB_TOKEN, DB_PASSWORD), or it is an
// OpenTelemetry exporter's header list (OTEL_EXPORTER_OTLP_HEADERS and
// the per-signal ones, where a collector's token goes). It is the
// rule behind SecretEnvNames and behind every redaction of env values
// written to disk or printed (launch.json, dry runs, manifests).
func IsSecretName(name string) bool { return redact.Name(name) }

// SecretEnvNames returns the names in environ (KEY=VALUE entries, as
// os.Environ gives them) that hold secrets, in environ's order without
// repeats: GITHUB_TOKEN and GH_TOKEN, the variable github.tokenEnv names,
// every notify sink's urlEnv (a webhook URL is a bearer credential), the
// variables runtime.kubernetes.passEnv hands to pods, and every name
// IsSecretName matches. A nil c applies the fixed names and the pattern
// only.
//
// Agents, workers and verify commands are started without these
// variables, except the ones their own executor needs (package executor
// declares those).
func (c *Config) SecretEnvNames(environ []string) []string {
	named := c.configuredSecrets()
	seen := map[string]bool{}
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if k == "" || seen[k] {
			continue
		}
		if named[k] || IsSecretName(k) {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// ConfiguredSecretEnv lists, sorted, the variables the configuration
// names as credentials whether or not they are set: GITHUB_TOKEN,
// GH_TOKEN, github.tokenEnv, every notify sink's urlEnv and kubernetes
// passEnv. SecretEnvNames adds the names that look like secrets.
func (c *Config) ConfiguredSecretEnv() []string {
	return slices.Sorted(maps.Keys(c.configuredSecrets()))
}

// configuredSecrets is the set of variable names the configuration
// itself says hold credentials.
func (c *Config) configuredSecrets() map[string]bool {
	named := map[string]bool{}
	for _, k := range alwaysSecret {
		named[k] = true
	}
	if c == nil {
		return named
	}
	add := func(k string) {
		if k = strings.TrimSpace(k); k != "" {
			named[k] = true
		}
	}
	add(c.GitHub.TokenEnv)
	for _, s := range c.Notify {
		add(s.URLEnv)
	}
	for _, k := range c.Runtime.Kubernetes.PassEnv {
		add(k)
	}
	return named
}
