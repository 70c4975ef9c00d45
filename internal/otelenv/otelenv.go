// Package otelenv names the attributes this tool puts on its spans, its
// metrics and every agent's OTEL_RESOURCE_ATTRIBUTES, and merges the
// agent's attributes into a value the user set themselves. It is pure:
// the runner calls it while building an agent's environment, with or
// without OpenTelemetry export configured (docs/observability.md).
package otelenv

import (
	"strings"
)

// ResourceAttributesEnv is the standard variable OpenTelemetry SDKs (and
// the agent CLIs built on them) read extra resource attributes from.
const ResourceAttributesEnv = "OTEL_RESOURCE_ATTRIBUTES"

// Attribute keys, shared by spans, metrics and agents' resources so that
// an agent CLI's own telemetry joins this tool's on the same keys.
const (
	Lane       = "wave.lane"
	Wave       = "wave.number"
	Agent      = "wave.agent"
	Attempt    = "wave.attempt"
	Issue      = "wave.issue"
	RunID      = "wave.run_id"         // one agent run: w<n>-<agent>-a<k>, or i<n>-a<k> for a backlog worker
	BacklogRun = "wave.backlog.run_id" // the backlog run
	Executor   = "wave.executor"
)

// KV is one attribute of an agent's resource.
type KV struct{ Key, Value string }

// Merge returns user's OTEL_RESOURCE_ATTRIBUTES value with ours added:
// the user's entries are kept as written, in their order, except those
// whose key ours sets (an agent started from inside another agent
// inherits that agent's wave.* keys; the run's own values are the true
// ones). Ours are appended percent-encoded as the specification asks
// (W3C Baggage value characters), empty values skipped.
func Merge(user string, ours []KV) string {
	set := map[string]bool{}
	for _, kv := range ours {
		if kv.Value != "" {
			set[kv.Key] = true
		}
	}
	var out []string
	for _, part := range strings.Split(user, ",") {
		p := strings.TrimSpace(part)
		if p == "" {
			continue
		}
		k, _, _ := strings.Cut(p, "=")
		if set[strings.TrimSpace(k)] {
			continue
		}
		out = append(out, p)
	}
	for _, kv := range ours {
		if kv.Value != "" {
			out = append(out, kv.Key+"="+Escape(kv.Value))
		}
	}
	return strings.Join(out, ",")
}

// Escape percent-encodes what may not stand in a resource attribute
// value: anything outside printable ASCII, space, '"', ',', ';', '\\' and
// '%' itself.
func Escape(v string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c > 0x20 && c < 0x7f && c != '"' && c != ',' && c != ';' && c != '\\' && c != '%' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
