package telemetry

import (
	"context"
	"crypto/sha256"

	"go.opentelemetry.io/otel/trace"
)

// Span and trace ids are derived from what the event logs name — the
// wave run's start event, the backlog run's id, the agent's run
// directory — so the process that ends a span (a launcher or supervisor
// restarted after a crash) gives it the id its children already name.

func traceID(traceKey string) trace.TraceID {
	h := sha256.Sum256([]byte("trace\x00" + traceKey))
	var id trace.TraceID
	copy(id[:], h[:])
	if !id.IsValid() {
		id[0] = 1
	}
	return id
}

func spanID(traceKey, key string) trace.SpanID {
	h := sha256.Sum256([]byte("span\x00" + traceKey + "\x00" + key))
	var id trace.SpanID
	copy(id[:], h[:])
	if !id.IsValid() {
		id[0] = 1
	}
	return id
}

type idsKey struct{}

type wantIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

// withIDs asks the ID generator for these ids for the next span started
// with ctx.
func withIDs(ctx context.Context, t trace.TraceID, s trace.SpanID) context.Context {
	return context.WithValue(ctx, idsKey{}, wantIDs{t, s})
}

// derivedIDs is the tracer provider's IDGenerator: the ids withIDs put in
// the context. Every span this package starts has them.
type derivedIDs struct{}

func (derivedIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	w, _ := ctx.Value(idsKey{}).(wantIDs)
	return w.trace, w.span
}

func (derivedIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	w, _ := ctx.Value(idsKey{}).(wantIDs)
	return w.span
}
