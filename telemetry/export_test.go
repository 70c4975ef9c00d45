package telemetry

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/wave-orchestrator/wave-orchestrator/telemetry/otlptest"
)

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// setEnv sets the OTEL_* variables the exporters read to kv (name,
// value pairs) for the test, every other OTEL_* variable of the
// environment blanked (an empty variable is an unset one to them).
func setEnv(t *testing.T, kv ...string) func(string) string {
	t.Helper()
	for _, e := range os.Environ() {
		if k, _, _ := strings.Cut(e, "="); strings.HasPrefix(k, "OTEL_") {
			t.Setenv(k, "")
		}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		t.Setenv(kv[i], kv[i+1])
	}
	return os.Getenv
}

// pairs turns KEY=VALUE entries into setEnv's name, value pairs.
func pairs(environ []string) []string {
	var out []string
	for _, e := range environ {
		k, v, _ := strings.Cut(e, "=")
		out = append(out, k, v)
	}
	return out
}

func testSpanExporter(t *testing.T, getenv func(string) string) sdktrace.SpanExporter {
	t.Helper()
	cfg := ConfigFromEnv(getenv)
	if cfg.Traces == nil {
		t.Fatalf("no traces endpoint from the environment: %v", cfg.Problems)
	}
	exp, err := newSpanExporter(context.Background(), cfg.Traces)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) }) // a second shutdown is harmless
	return exp
}

func testMetricExporter(t *testing.T, getenv func(string) string) sdkmetric.Exporter {
	t.Helper()
	cfg := ConfigFromEnv(getenv)
	if cfg.Metrics == nil {
		t.Fatalf("no metrics endpoint from the environment: %v", cfg.Problems)
	}
	exp, err := newMetricExporter(context.Background(), cfg.Metrics)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	return exp
}

func TestSpansReachACollectorAsOTLPProtobuf(t *testing.T) {
	rcv := otlptest.New(t)
	getenv := setEnv(t, "OTEL_EXPORTER_OTLP_ENDPOINT", rcv.Srv.URL, "OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20abc,x-team=infra",
		"OTEL_EXPORTER_OTLP_COMPRESSION", "gzip", "OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci")
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(testSpanExporter(t, getenv)),
		sdktrace.WithIDGenerator(derivedIDs{}), sdktrace.WithResource(resourceFor("main")))
	tr := tp.Tracer(scope)
	t0 := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	tid, root, child := traceID("t"), spanID("t", rootKey), spanID("t", "child")
	_, sp := tr.Start(withIDs(context.Background(), tid, root), "wave", trace.WithTimestamp(t0),
		trace.WithAttributes(attribute.String("wave.lane", "main"), attribute.Int("wave.number", 2), attribute.Bool("b", true),
			attribute.Float64("f", 0.25), attribute.StringSlice("s", []string{"x", "y"})))
	ctx := trace.ContextWithRemoteSpanContext(withIDs(context.Background(), tid, child),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: root, TraceFlags: trace.FlagsSampled, Remote: true}))
	_, csp := tr.Start(ctx, "wave.agent", trace.WithTimestamp(t0.Add(time.Second)))
	csp.SetStatus(codes.Error, "agent run failed: exit 3")
	csp.End(trace.WithTimestamp(t0.Add(2 * time.Second)))
	sp.End(trace.WithTimestamp(t0.Add(3 * time.Second)))
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if bad := rcv.Bad(); len(bad) > 0 {
		t.Fatalf("the receiver could not read: %v", bad)
	}
	spans := rcv.Spans()
	if len(spans) != 2 {
		t.Fatalf("received %d spans, want 2: %+v", len(spans), spans)
	}
	w, a := otlptest.Named(spans, "wave")[0], otlptest.Named(spans, "wave.agent")[0]
	if w.TraceID != tid.String() || w.SpanID != root.String() || w.Parent != "" {
		t.Errorf("root ids %s/%s parent %q, want %s/%s and none", w.TraceID, w.SpanID, w.Parent, tid, root)
	}
	if a.TraceID != tid.String() || a.SpanID != child.String() || a.Parent != root.String() {
		t.Errorf("child ids %s/%s parent %s, want %s/%s under %s", a.TraceID, a.SpanID, a.Parent, tid, child, root)
	}
	if !w.Start.Equal(t0) || !w.End.Equal(t0.Add(3*time.Second)) {
		t.Errorf("root times %s..%s, want the events' %s..%s", w.Start, w.End, t0, t0.Add(3*time.Second))
	}
	for k, want := range map[string]any{"wave.lane": "main", "wave.number": int64(2), "b": true, "f": 0.25} {
		if w.Attrs[k] != want {
			t.Errorf("attribute %s = %#v, want %#v", k, w.Attrs[k], want)
		}
	}
	if s, _ := w.Attrs["s"].([]any); len(s) != 2 || s[1] != "y" {
		t.Errorf("slice attribute = %#v", w.Attrs["s"])
	}
	if !a.Error || a.Message != "agent run failed: exit 3" || w.Error {
		t.Errorf("statuses: child error %v %q, root error %v", a.Error, a.Message, w.Error)
	}
	for k, want := range map[string]any{"service.name": "wave-orchestrator", "wave.lane": "main", "deployment.environment": "ci"} {
		if w.Resource[k] != want {
			t.Errorf("resource %s = %#v, want %#v", k, w.Resource[k], want)
		}
	}
	h := rcv.Headers()[0]
	if h.Get("Authorization") != "Bearer abc" || h.Get("X-Team") != "infra" || h.Get("Content-Encoding") != "gzip" {
		t.Errorf("headers %v: want the decoded OTEL_EXPORTER_OTLP_HEADERS and gzip", h)
	}
}

func TestMetricsReachACollectorAsOTLPProtobuf(t *testing.T) {
	rcv := otlptest.New(t)
	getenv := setEnv(t, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", rcv.Srv.URL+"/v1/metrics")
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(testMetricExporter(t, getenv))))
	m, err := newMeters(mp.Meter(scope))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lane := metric.WithAttributes(attribute.String("wave.lane", "main"))
	m.runs.Add(ctx, 2, metric.WithAttributes(attribute.String("wave.lane", "main"), attribute.String("wave.outcome", "completed")))
	m.cost.Add(ctx, 0.5, lane)
	m.cost.Add(ctx, 0.25, lane)
	m.queue.Record(ctx, 3, lane)
	m.duration.Record(ctx, 12, lane)
	m.duration.Record(ctx, 40, lane)
	m.ghCalls.Add(ctx, 0, lane) // a zero point is still a point
	if err := mp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if bad := rcv.Bad(); len(bad) > 0 {
		t.Fatalf("the receiver could not read: %v", bad)
	}
	pts := rcv.Points()
	for _, c := range []struct {
		metric, kind string
		value, sum   float64
	}{
		{MetricRuns, "sum", 2, 0}, {MetricCost, "sum", 0.75, 0}, {MetricQueueDepth, "gauge", 3, 0},
		{MetricRunDuration, "histogram", 2, 52}, {MetricGitHubCalls, "sum", 0, 0},
	} {
		p, ok := otlptest.Last(pts, c.metric, map[string]any{"wave.lane": "main"})
		if !ok || p.Kind != c.kind || p.Value != c.value || p.Sum != c.sum {
			t.Errorf("%s: got %+v (found %v), want a %s of %v (sum %v)", c.metric, p, ok, c.kind, c.value, c.sum)
		}
	}
}

func TestARefusingReceiverIsAnErrorNamingIt(t *testing.T) {
	rcv := otlptest.New(t)
	rcv.Status = 400
	exp := testSpanExporter(t, setEnv(t, "OTEL_EXPORTER_OTLP_ENDPOINT", rcv.Srv.URL))
	err := exp.ExportSpans(context.Background(), tracetest.SpanStubs{{Name: "wave"}}.Snapshots())
	if err == nil || !strings.Contains(err.Error(), rcv.Srv.URL+"/v1/traces") || !strings.Contains(err.Error(), "400") {
		t.Fatalf("post to a receiver answering 400: %v, want an error naming the URL and status", err)
	}
}
