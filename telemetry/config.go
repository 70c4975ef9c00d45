package telemetry

import (
	"fmt"
	"net/url"
	"strings"
)

// Protocols of OTLP this package exports with (the specification's
// names, as OTEL_EXPORTER_OTLP_PROTOCOL takes them).
const (
	protocolHTTP = "http/protobuf"
	protocolGRPC = "grpc"
)

// signal is one OTLP signal this package exports.
type signal struct {
	env  string // TRACES | METRICS, in the variables' names
	path string // appended to OTEL_EXPORTER_OTLP_ENDPOINT over HTTP
}

var (
	tracesSignal  = signal{"TRACES", "/v1/traces"}
	metricsSignal = signal{"METRICS", "/v1/metrics"}
)

// endpoint is where one signal goes and by which protocol. The
// exporters read every other setting (headers, timeout, compression,
// certificates) from the same variables themselves.
type endpoint struct {
	URL      string
	Protocol string // protocolHTTP | protocolGRPC
}

// Config is what the OTEL_* variables ask for: a signal left nil is not
// exported. Problems are the settings that were refused, in words, for
// the caller to warn about once.
type Config struct {
	Traces, Metrics *endpoint
	Problems        []string
}

// Enabled reports whether anything is exported.
func (c Config) Enabled() bool { return c.Traces != nil || c.Metrics != nil }

// ConfigFromEnv decides from the standard variables (the OpenTelemetry
// specification's "OTLP Exporter Configuration") which signals are
// exported and how: a signal is exported when OTEL_EXPORTER_OTLP_ENDPOINT
// or its own _ENDPOINT is set, it is not turned off (OTEL_SDK_DISABLED=true,
// OTEL_TRACES_EXPORTER=none, OTEL_METRICS_EXPORTER=none), and its
// protocol is http/protobuf or grpc. What the official exporters would
// quietly skip or replace by a default — an endpoint that is no URL, a
// header list they cannot parse — turns the signal off with a problem
// saying why, so nothing is sent to a collector the user did not name
// or without the credentials they meant. Pure: getenv is os.Getenv in
// production, which the exporters read too.
func ConfigFromEnv(getenv func(string) string) Config {
	var c Config
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return c
	}
	c.Traces = signalConfig(getenv, tracesSignal, &c.Problems)
	c.Metrics = signalConfig(getenv, metricsSignal, &c.Problems)
	return c
}

func signalConfig(getenv func(string) string, s signal, problems *[]string) *endpoint {
	pick := func(name string) (string, string) {
		own := "OTEL_EXPORTER_OTLP_" + s.env + "_" + name
		if v := strings.TrimSpace(getenv(own)); v != "" {
			return v, own
		}
		all := "OTEL_EXPORTER_OTLP_" + name
		return strings.TrimSpace(getenv(all)), all
	}
	own := "OTEL_EXPORTER_OTLP_" + s.env + "_ENDPOINT"
	base := strings.TrimSpace(getenv(own))
	if base == "" {
		own = "OTEL_EXPORTER_OTLP_ENDPOINT"
		if base = strings.TrimSpace(getenv(own)); base == "" {
			return nil
		}
	}
	signalName := strings.ToLower(s.env)
	refuse := func(format string, args ...any) *endpoint {
		*problems = append(*problems, fmt.Sprintf(format, args...)+"; "+signalName+" are not exported")
		return nil
	}
	switch v := strings.ToLower(strings.TrimSpace(getenv("OTEL_" + s.env + "_EXPORTER"))); v {
	case "", "otlp":
	case "none":
		return nil
	default:
		return refuse("OTEL_%s_EXPORTER=%s: only otlp (or none) is supported", s.env, v)
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return refuse("%s=%q: want an http:// or https:// URL", own, base)
	}
	ep := endpoint{URL: base, Protocol: protocolHTTP}
	switch v, name := pick("PROTOCOL"); v {
	case "", protocolHTTP:
		if own == "OTEL_EXPORTER_OTLP_ENDPOINT" {
			ep.URL = strings.TrimRight(base, "/") + s.path
		}
	case protocolGRPC:
		ep.Protocol = protocolGRPC
	default:
		return refuse("%s=%s: only http/protobuf (an OTLP/HTTP receiver, port 4318 by default) and grpc (port 4317) are supported", name, v)
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_" + s.env + "_HEADERS"} {
		if err := checkHeaders(getenv(name)); err != nil {
			return refuse("%s: %v", name, err)
		}
	}
	return &ep
}

// checkHeaders checks a "k=v,k2=v2" list (values percent-encoded) as
// the exporters will read it, which skip an entry they cannot read.
func checkHeaders(s string) error {
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("an entry without key=value (entries are name=value, separated by commas)")
		}
		if _, err := url.PathUnescape(v); err != nil {
			return fmt.Errorf("header %s: a value that is not percent-encoded correctly", k)
		}
	}
	return nil
}
