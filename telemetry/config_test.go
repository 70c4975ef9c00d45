package telemetry

import (
	"strings"
	"testing"
	"time"
)

func TestOTLPExportIsOnOnlyWhenAnEndpointIsSet(t *testing.T) {
	cases := []struct {
		name            string
		env             []string
		traces, metrics string // "" = not exported
		problem         string
	}{
		{"nothing set", nil, "", "", ""},
		{"headers alone", []string{"OTEL_EXPORTER_OTLP_HEADERS", "a=b"}, "", "", ""},
		{"one endpoint for both", []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/"},
			"http://c:4318/v1/traces", "http://c:4318/v1/metrics", ""},
		{"a signal's own endpoint as is", []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://c/otlp/t"}, "https://c/otlp/t", "", ""},
		{"the SDK turned off", []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_SDK_DISABLED", "true"}, "", "", ""},
		{"metrics turned off", []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_METRICS_EXPORTER", "none"},
			"http://c:4318/v1/traces", "", ""},
		{"gRPC refused, said why", []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"},
			"", "", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: only http/protobuf"},
		{"not a URL", []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"}, "", "", "want an http:// or https:// URL"},
		{"a bad header list", []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c", "OTEL_EXPORTER_OTLP_HEADERS", "novalue"},
			"", "", "OTEL_EXPORTER_OTLP_HEADERS: an entry without key=value"},
	}
	for _, c := range cases {
		env := map[string]string{}
		for i := 0; i+1 < len(c.env); i += 2 {
			env[c.env[i]] = c.env[i+1]
		}
		cfg := ConfigFromEnv(func(k string) string { return env[k] })
		url := func(e *endpoint) string {
			if e == nil {
				return ""
			}
			return e.URL
		}
		if url(cfg.Traces) != c.traces || url(cfg.Metrics) != c.metrics {
			t.Errorf("%s: traces %q metrics %q, want %q %q", c.name, url(cfg.Traces), url(cfg.Metrics), c.traces, c.metrics)
		}
		got := strings.Join(cfg.Problems, "; ")
		if (c.problem == "") != (got == "") || !strings.Contains(got, c.problem) {
			t.Errorf("%s: problems %q, want one saying %q", c.name, got, c.problem)
		}
		if cfg.Enabled() != (c.traces != "" || c.metrics != "") {
			t.Errorf("%s: Enabled() = %v", c.name, cfg.Enabled())
		}
	}
}

func TestTimeoutAndSignalHeadersFollowTheSpecification(t *testing.T) {
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TIMEOUT": "2500",
		"OTEL_EXPORTER_OTLP_HEADERS": "a=1,b=2", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "b=3"}
	cfg := ConfigFromEnv(func(k string) string { return env[k] })
	if cfg.Traces.Timeout != 2500*time.Millisecond || cfg.Traces.Headers["a"] != "1" || cfg.Traces.Headers["b"] != "3" ||
		cfg.Metrics.Headers["b"] != "2" {
		t.Errorf("traces %+v metrics %+v", cfg.Traces, cfg.Metrics)
	}
}
