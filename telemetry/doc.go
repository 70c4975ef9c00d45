// Package telemetry owns OpenTelemetry export: spans and metrics of the
// lane's waves and backlog runs, sent over OTLP when the standard
// OTEL_EXPORTER_OTLP_* variables name an endpoint, and nothing at all
// otherwise (no SDK is built, no goroutine started).
//
// Spans and metrics are derived from the event logs the loops already
// write — the lane's events.jsonl and each backlog run's — by a Follower
// living in the process that owns the log (the launcher, the supervisor),
// as notify's is. The loops stay as they are and the log stays the one
// truth: a span's times are the events' times, and span and trace ids
// are derived from the run and the event, so a launcher or supervisor
// restarted after kill -9 ends the spans its predecessor opened under
// the same ids. The names are in docs/observability.md.
//
// Export is the OpenTelemetry project's own OTLP exporters, over HTTP
// (protobuf) or gRPC as OTEL_EXPORTER_OTLP_PROTOCOL says, configured by
// the same variables as any OpenTelemetry SDK; ConfigFromEnv only decides
// whether a signal is exported at all.
package telemetry
