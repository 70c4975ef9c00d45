package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The official OTLP exporters read their endpoint, headers, timeout,
// compression and certificates from the OTEL_EXPORTER_OTLP_* variables
// themselves; ConfigFromEnv only decided that ep's signal is exported
// and over which protocol. Neither connects before its first export.

func newSpanExporter(ctx context.Context, ep *endpoint) (sdktrace.SpanExporter, error) {
	if ep.Protocol == protocolGRPC {
		return otlptracegrpc.New(ctx)
	}
	return otlptracehttp.New(ctx)
}

func newMetricExporter(ctx context.Context, ep *endpoint) (sdkmetric.Exporter, error) {
	if ep.Protocol == protocolGRPC {
		return otlpmetricgrpc.New(ctx)
	}
	return otlpmetrichttp.New(ctx)
}
