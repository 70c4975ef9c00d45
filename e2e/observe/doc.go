// Package observe holds end-to-end tests of what operators watch the
// binary through: OpenTelemetry traces and metrics received by a real
// OTLP/HTTP endpoint from a launch and a backlog run, serve's /metrics
// scraped by a real Prometheus, and the outcome ledger (`usage
// --outcomes`) over real git history.
// They run the release build that e2etest.Run makes (see CONTRIBUTING.md).
package observe
