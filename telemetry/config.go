package telemetry

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// signal is one OTLP signal this package exports.
type signal struct {
	env  string // TRACES | METRICS, in the variables' names
	path string // appended to OTEL_EXPORTER_OTLP_ENDPOINT
}

var (
	tracesSignal  = signal{"TRACES", "/v1/traces"}
	metricsSignal = signal{"METRICS", "/v1/metrics"}
)

// endpoint is where one signal is sent and how.
type endpoint struct {
	URL     string
	Headers map[string]string
	Timeout time.Duration
	Gzip    bool
	// CA, ClientCert and ClientKey are PEM files (the *_CERTIFICATE,
	// *_CLIENT_CERTIFICATE and *_CLIENT_KEY variables).
	CA, ClientCert, ClientKey string
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

// defaultTimeout is the specification's default export timeout.
const defaultTimeout = 10 * time.Second

// ConfigFromEnv reads the standard variables (the OpenTelemetry
// specification's "OTLP Exporter Configuration"): a signal is exported
// when OTEL_EXPORTER_OTLP_ENDPOINT or its own _ENDPOINT is set, it is not
// turned off (OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none,
// OTEL_METRICS_EXPORTER=none), and its protocol is http/protobuf, the
// one this package speaks. Pure: getenv is os.Getenv in production.
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
	ep := endpoint{Timeout: defaultTimeout}
	own := "OTEL_EXPORTER_OTLP_" + s.env + "_ENDPOINT"
	if v := strings.TrimSpace(getenv(own)); v != "" {
		ep.URL = v
	} else if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); v != "" {
		ep.URL = strings.TrimRight(v, "/") + s.path
		own = "OTEL_EXPORTER_OTLP_ENDPOINT"
	} else {
		return nil
	}
	refuse := func(format string, args ...any) *endpoint {
		*problems = append(*problems, fmt.Sprintf(format, args...))
		return nil
	}
	switch v := strings.ToLower(strings.TrimSpace(getenv("OTEL_" + s.env + "_EXPORTER"))); v {
	case "", "otlp":
	case "none":
		return nil
	default:
		return refuse("OTEL_%s_EXPORTER=%s: only otlp (or none) is supported; %s are not exported", s.env, v, strings.ToLower(s.env))
	}
	if u, err := url.Parse(ep.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return refuse("%s=%q: want an http:// or https:// URL; %s are not exported", own, ep.URL, strings.ToLower(s.env))
	}
	if v, name := pick("PROTOCOL"); v != "" && v != "http/protobuf" {
		return refuse("%s=%s: only http/protobuf is supported (an OTLP/HTTP receiver, port 4318 by default); %s are not exported",
			name, v, strings.ToLower(s.env))
	}
	ep.Headers = map[string]string{}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_" + s.env + "_HEADERS"} {
		if err := parseHeaders(getenv(name), ep.Headers); err != nil {
			return refuse("%s: %v; %s are not exported", name, err, strings.ToLower(s.env))
		}
	}
	if v, name := pick("TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			*problems = append(*problems, fmt.Sprintf("%s=%q: want milliseconds above 0; using %s", name, v, defaultTimeout))
		} else {
			ep.Timeout = time.Duration(ms) * time.Millisecond
		}
	}
	switch v, name := pick("COMPRESSION"); strings.ToLower(v) {
	case "", "none":
	case "gzip":
		ep.Gzip = true
	default:
		*problems = append(*problems, fmt.Sprintf("%s=%q: want gzip or none; sending uncompressed", name, v))
	}
	ep.CA, _ = pick("CERTIFICATE")
	ep.ClientCert, _ = pick("CLIENT_CERTIFICATE")
	ep.ClientKey, _ = pick("CLIENT_KEY")
	return &ep
}

// parseHeaders adds "k=v,k2=v2" (values percent-encoded) to into.
func parseHeaders(s string, into map[string]string) error {
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("an entry without key=value (entries are name=value, separated by commas)")
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("header %s: a value that is not percent-encoded correctly", k)
		}
		into[k] = dv
	}
	return nil
}

// tlsConfig is the endpoint's TLS settings, nil when it uses the
// system's roots and no client certificate.
func (e *endpoint) tlsConfig() (*tls.Config, error) {
	if e.CA == "" && e.ClientCert == "" {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if e.CA != "" {
		pem, err := os.ReadFile(e.CA)
		if err != nil {
			return nil, fmt.Errorf("OTLP certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("OTLP certificate %s: no PEM certificate in it", e.CA)
		}
		c.RootCAs = pool
	}
	if e.ClientCert != "" || e.ClientKey != "" {
		cert, err := tls.LoadX509KeyPair(e.ClientCert, e.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("OTLP client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}
