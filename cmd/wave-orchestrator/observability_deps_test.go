package main

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// observability are the libraries the binary observes itself with:
// OpenTelemetry's own OTLP exporters (HTTP and gRPC) and the Prometheus
// Go client behind serve's /metrics, rather than copies of their wire
// formats (docs/observability.md).
var observability = []string{
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp",
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc",
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp",
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc",
	"github.com/prometheus/client_golang/prometheus",
	"github.com/prometheus/client_golang/prometheus/promhttp",
}

// wireRuntimes are the protobuf and gRPC runtimes. They are linked for
// the exporters and the Prometheus client, which speak them; any other
// importer — a package of ours, a new dependency — is a new cost in every
// process of the binary and needs a rule of its own here.
var wireRuntimes = []string{"google.golang.org/protobuf", "google.golang.org/grpc", "google.golang.org/genproto"}

// wireUsers are the module paths allowed to import the wire runtimes:
// OpenTelemetry's exporters and OTLP types (with the gRPC gateway the
// OTLP collector services are generated with), and the Prometheus client
// and its exposition formats.
var wireUsers = []string{"go.opentelemetry.io/", "github.com/grpc-ecosystem/grpc-gateway/", "github.com/prometheus/"}

func TestBinaryExportsThroughTheOfficialOTLPExportersAndPrometheusClient(t *testing.T) {
	linked, imports := binaryPackages(t)
	for _, pkg := range observability {
		if !linked[pkg] {
			t.Errorf("the binary does not link %s: telemetry and /metrics are made with the field's libraries, not copies of them", pkg)
		}
	}
	importers := map[string][]string{} // wire runtime package -> unexpected importers
	for pkg, imps := range imports {
		if hasPrefix(pkg, wireRuntimes) || hasPrefix(pkg, wireUsers) {
			continue
		}
		for _, imp := range imps {
			if hasPrefix(imp, wireRuntimes) {
				importers[imp] = append(importers[imp], pkg)
			}
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(importers)) {
		slices.Sort(importers[pkg])
		t.Errorf("the binary links %s through %s: protobuf and gRPC are for the OTLP exporters and the Prometheus client only", pkg, strings.Join(importers[pkg], ", "))
	}
}

func hasPrefix(pkg string, prefixes []string) bool {
	for _, p := range prefixes {
		if pkg == strings.TrimSuffix(p, "/") || strings.HasPrefix(pkg, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}
