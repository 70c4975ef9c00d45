package telemetry

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wave-orchestrator/wave-orchestrator/telemetry/otlptest"
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
		{"gRPC to the base endpoint", []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"},
			"http://c:4317", "http://c:4317", ""},
		{"a signal's own protocol wins", []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc",
			"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf"}, "http://c:4318", "http://c:4318/v1/metrics", ""},
		{"JSON refused, said why", []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
			"", "", "OTEL_EXPORTER_OTLP_PROTOCOL=http/json: only http/protobuf"},
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

// The exporters read the timeout and headers themselves: a signal's own
// header list replaces the general one, as the official exporters read
// it; the timeout bounds every export.
func TestTimeoutAndSignalHeadersFollowTheSpecification(t *testing.T) {
	rcv := otlptest.NewGRPC(t)
	getenv := setEnv(t, append(pairs(rcv.Env()), "OTEL_EXPORTER_OTLP_TIMEOUT", "2500",
		"OTEL_EXPORTER_OTLP_HEADERS", "a=1,b=2", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "b=3")...)
	ctx := context.Background()
	if err := testSpanExporter(t, getenv).ExportSpans(ctx, tracetest.SpanStubs{{Name: SpanWave}}.Snapshots()); err != nil {
		t.Fatal(err)
	}
	rm := &metricdata.ResourceMetrics{Resource: resource.Empty(), ScopeMetrics: []metricdata.ScopeMetrics{{Metrics: []metricdata.Metrics{{
		Name: MetricRuns, Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
			DataPoints: []metricdata.DataPoint[int64]{{Value: 1}}}}}}}}
	if err := testMetricExporter(t, getenv).Export(ctx, rm); err != nil {
		t.Fatal(err)
	}
	h, dls := rcv.Headers(), rcv.Deadlines()
	if len(h) != 2 || len(dls) != 2 {
		t.Fatalf("received %d calls with %d deadlines, want 2 with 2", len(h), len(dls))
	}
	if traces, metrics := h[0], h[1]; traces.Get("b") != "3" || traces.Get("a") != "" || metrics.Get("a") != "1" || metrics.Get("b") != "2" {
		t.Errorf("traces sent a=%q b=%q, metrics a=%q b=%q; want traces b=3 only, metrics a=1 b=2",
			traces.Get("a"), traces.Get("b"), metrics.Get("a"), metrics.Get("b"))
	}
	for i, d := range dls {
		if d <= 0 || d > 2500*time.Millisecond {
			t.Errorf("call %d arrived with %s left of its deadline, want at most OTEL_EXPORTER_OTLP_TIMEOUT's 2.5s", i, d)
		}
	}
}
