// Package telemetry owns OpenTelemetry export: spans and metrics of the
// lane's waves and backlog runs, sent over OTLP (protobuf over HTTP) when
// the standard OTEL_EXPORTER_OTLP_* variables name an endpoint, and
// nothing at all otherwise (no SDK is built, no goroutine started).
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
// The OTLP encoding is ours (wire.go): the official exporters link gRPC
// and the protobuf runtime into every process of the binary, agent
// runners included, and their package initialisation costs more than
// the whole binary's today. The tests decode what we send with the
// OTLP project's own protobuf types.
package telemetry
