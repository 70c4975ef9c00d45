package config

import "strings"

// TODO(hsec): a stand-in with the signature of the one list of secret
// variables; delete this file when that lands on main.
func (c *Config) SecretEnvNames(environ []string) []string {
	named := map[string]bool{"GITHUB_TOKEN": true, "GH_TOKEN": true, c.GitHub.TokenEnv: true}
	for _, s := range c.Notify {
		named[s.URLEnv] = true
	}
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		l := strings.ToLower(k)
		if k != "" && (named[k] || strings.Contains(l, "token") || strings.Contains(l, "secret") || strings.Contains(l, "key") ||
			strings.Contains(l, "passw") || strings.Contains(l, "credential")) {
			out = append(out, k)
		}
	}
	return out
}
