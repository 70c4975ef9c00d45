package config

import (
	"slices"
	"testing"
)

func TestEverySecretVariableIsNamedOnce(t *testing.T) {
	cfg := &Config{
		GitHub: GitHub{TokenEnv: "ACME_GH"},
		Notify: []NotifySink{
			{Name: "chat", Kind: SinkWebhook, URLEnv: "CHAT_HOOK_URL"},
			{Name: "ops", Kind: SinkWebhook, URLEnv: "OPS_HOOK"},
			{Name: "log", Kind: SinkCommand, Argv: []string{"logger"}},
		},
		Runtime: Runtime{Kubernetes: Kubernetes{PassEnv: []string{"MODEL_ENDPOINT_CRED"}}},
	}
	tests := []struct {
		name    string
		cfg     *Config
		environ []string
		want    []string
	}{
		{"the GitHub tokens whatever the config", nil,
			[]string{"GITHUB_TOKEN=a", "GH_TOKEN=b", "PATH=/bin"}, []string{"GITHUB_TOKEN", "GH_TOKEN"}},
		{"github.tokenEnv though its name says nothing", cfg,
			[]string{"ACME_GH=x", "HOME=/root"}, []string{"ACME_GH"}},
		{"every webhook sink's urlEnv", cfg,
			[]string{"CHAT_HOOK_URL=https://hooks/x", "OPS_HOOK=https://hooks/y", "HOOK=z"}, []string{"CHAT_HOOK_URL", "OPS_HOOK"}},
		{"kubernetes passEnv", cfg,
			[]string{"MODEL_ENDPOINT_CRED=k"}, []string{"MODEL_ENDPOINT_CRED"}},
		{"names that look like credentials", nil,
			[]string{"ANTHROPIC_API_KEY=1", "AWS_SECRET_ACCESS_KEY=2", "DB_PASSWORD=3", "FTP_PASSWD=4",
				"GOOGLE_APPLICATION_CREDENTIALS=/k.json", "npm_config__authToken=5", "WAVE_SERVE_TOKEN=6", "openaiApiKey=7"},
			[]string{"ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "FTP_PASSWD",
				"GOOGLE_APPLICATION_CREDENTIALS", "npm_config__authToken", "WAVE_SERVE_TOKEN", "openaiApiKey"}},
		{"the OTLP exporters' header lists, a collector's token", nil,
			[]string{"OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20t", "OTEL_EXPORTER_OTLP_TRACES_HEADERS=a=b",
				"OTEL_EXPORTER_OTLP_METRICS_HEADERS=a=b", "OTEL_EXPORTER_OTLP_LOGS_HEADERS=a=b", "OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318"},
			[]string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS", "OTEL_EXPORTER_OTLP_LOGS_HEADERS"}},
		{"ordinary variables are not secrets", cfg,
			[]string{"PATH=/bin", "HOME=/root", "GIT_AUTHOR_NAME=a", "TERM=xterm", "WAVE_LANE=main", "ANTHROPIC_BASE_URL=http://x", "LANG=C"}, nil},
		{"a name is given once, in environ's order", cfg,
			[]string{"OPS_HOOK=1", "GH_TOKEN=2", "OPS_HOOK=3", "=odd", "NOEQUALS_TOKEN"}, []string{"OPS_HOOK", "GH_TOKEN", "NOEQUALS_TOKEN"}},
		{"a configured name absent from environ is not returned", cfg,
			[]string{"PATH=/bin"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.cfg.SecretEnvNames(tt.environ)
			if !slices.Equal(got, tt.want) {
				t.Errorf("SecretEnvNames(%q) = %q, want %q", tt.environ, got, tt.want)
			}
		})
	}
}

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"ANTHROPIC_AUTH_TOKEN": true, "CLAUDE_CODE_OAUTH_TOKEN": true, "OPENAI_API_KEY": true,
		"client_secret": true, "PGPASSWORD": true, "AZURE_CREDENTIALS": true,
		"OTEL_EXPORTER_OTLP_HEADERS": true, "OTEL_EXPORTER_OTLP_TRACES_HEADERS": true,
		"PATH": false, "GIT_AUTHOR_EMAIL": false, "WEBHOOK_URL": false, "HOSTNAME": false,
		"OTEL_EXPORTER_OTLP_ENDPOINT": false, "OTEL_RESOURCE_ATTRIBUTES": false, "X_OTEL_EXPORTER_OTLP_HEADERS_FILE": false,
	} {
		if got := IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}
