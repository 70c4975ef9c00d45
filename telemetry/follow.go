package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/logtail"
	"github.com/wave-orchestrator/wave-orchestrator/internal/otelenv"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// DefaultFlush bounds how long Stop waits for the last spans and
// metrics to be sent.
const DefaultFlush = 10 * time.Second

// safetyTick re-reads the log in case a file event was missed.
const safetyTick = time.Second

// Options tune a follower; the zero value is production's.
type Options struct {
	Logger *slog.Logger
}

// Follower turns one event log into spans and metrics and exports them.
// A nil *Follower (export not configured) does nothing.
type Follower struct {
	log    *slog.Logger
	lane   string
	mode   string // wave | backlog: the runs' mode in metrics
	tail   logtail.Tail
	apply  func(line []byte, live bool) []op
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
	tracer trace.Tracer
	m      *meters

	mu   sync.Mutex
	open map[string]*openSpan

	stop, done chan struct{}
}

type openSpan struct {
	start    op
	span     trace.Span // nil while the log is replayed
	executor string
}

// FollowLane follows the lane's events.jsonl in the launcher: a trace per
// wave run. It returns nil when no OTLP endpoint is configured, or when
// export cannot start (said in the log).
func FollowLane(l lanes.Layout, lane string, o Options) *Follower {
	f := newFollower(lane, "wave", l.EventsPath(), true, o)
	if f == nil {
		return nil
	}
	model := newLaneModel(lane)
	f.apply = func(line []byte, live bool) []op {
		var ev state.Event
		if json.Unmarshal(line, &ev) != nil {
			return nil // a torn line: status reports it
		}
		if live && f.m != nil && ev.EntityType == state.EntityWaveRun && ev.Action != "started" {
			f.m.waves.Add(context.Background(), 1, metric.WithAttributes(attribute.String(otelenv.Lane, lane), attribute.String(attrOutcome, ev.Action)))
		}
		return model.apply(ev)
	}
	return f.start()
}

// FollowRun follows a backlog run's events.jsonl in the supervisor
// driving it: one trace for the run.
func FollowRun(runDir, lane string, o Options) *Follower {
	f := newFollower(lane, "backlog", filepath.Join(runDir, "events.jsonl"), false, o)
	if f == nil {
		return nil
	}
	model := newBacklogModel(lane, filepath.Base(runDir))
	run := backlog.Reduce(nil)
	f.apply = func(line []byte, live bool) []op {
		var ev backlog.Event
		if json.Unmarshal(line, &ev) != nil {
			return nil
		}
		waiting := run.OpenWait() != nil
		run.Apply(ev)
		if live && f.m != nil {
			f.recordBacklog(ev, run, waiting)
		}
		return model.apply(ev)
	}
	return f.start()
}

// newFollower builds the SDK and the exporters when the environment
// asks for export.
func newFollower(lane, mode, path string, rotates bool, o Options) *Follower {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	cfg := ConfigFromEnv(os.Getenv)
	for _, p := range cfg.Problems {
		o.Logger.Warn("telemetry: " + p)
	}
	if !cfg.Enabled() {
		return nil
	}
	f := &Follower{log: o.Logger, lane: lane, mode: mode, tail: logtail.Tail{Path: path, Rotates: rotates}, open: map[string]*openSpan{}}
	res := resourceFor(lane)
	// What the SDK and the exporters report goes to our log: failed
	// exports (the receiver's answer escaped, as all untrusted text), and
	// the variables they could not read (a certificate file, a timeout).
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		o.Logger.Warn("telemetry: export", "err", termtext.Escape(err.Error()))
	}))
	otel.SetLogger(logr.FromSlogHandler(o.Logger.Handler()))
	ctx := context.Background()
	if cfg.Traces != nil {
		exp, err := newSpanExporter(ctx, cfg.Traces)
		if err != nil {
			o.Logger.Warn("telemetry: traces are not exported", "err", err)
		} else {
			f.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res),
				sdktrace.WithIDGenerator(derivedIDs{}))
			f.tracer = f.tp.Tracer(scope, trace.WithInstrumentationVersion(version()))
		}
	}
	if cfg.Metrics != nil {
		exp, err := newMetricExporter(ctx, cfg.Metrics)
		if err != nil {
			o.Logger.Warn("telemetry: metrics are not exported", "err", err)
		} else {
			f.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
			if f.m, err = newMeters(f.mp.Meter(scope, metric.WithInstrumentationVersion(version()))); err != nil {
				o.Logger.Warn("telemetry: metrics are not exported", "err", err)
				f.m = nil
			}
		}
	}
	if f.tp == nil && f.m == nil {
		return nil
	}
	return f
}

// scope is the instrumentation scope of every span and metric.
const scope = "github.com/wave-orchestrator/wave-orchestrator"

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// resourceFor is the process's resource: service.name
// wave-orchestrator unless OTEL_SERVICE_NAME or the user's
// OTEL_RESOURCE_ATTRIBUTES (read by the SDK) name another, the user's
// attributes, then this build's service.version and the lane.
func resourceFor(lane string) *resource.Resource {
	r, _ := resource.Merge(resource.NewSchemaless(attribute.String("service.name", "wave-orchestrator")), resource.Environment())
	r, _ = resource.Merge(r, resource.NewSchemaless(attribute.String("service.version", version()), attribute.String(otelenv.Lane, lane)))
	return r
}

// start replays the log so far — spans it opened and did not close are
// opened again with their own times and ids, nothing is counted twice —
// then follows it.
func (f *Follower) start() *Follower {
	lines, err := f.tail.ReadAll()
	if err != nil {
		f.log.Warn("telemetry: read the log", "err", err)
	}
	f.tail.Pin() // no log yet: the one created next is followed from its start
	f.mu.Lock()
	for _, l := range lines {
		for _, o := range f.apply(l, false) {
			f.take(o, false)
		}
	}
	for _, s := range f.open {
		s.span = f.startSpan(s)
	}
	f.mu.Unlock()
	f.stop, f.done = make(chan struct{}), make(chan struct{})
	go f.watch()
	return f
}

// Stop reads what is left of the log, then sends the ended spans and the
// metrics, waiting at most flush. Spans still open are left for the
// process that ends them (a resumed run), which gives them the same ids.
func (f *Follower) Stop(flush time.Duration) {
	if f == nil {
		return
	}
	close(f.stop)
	<-f.done
	f.readNew()
	ctx, cancel := context.WithTimeout(context.Background(), flush)
	defer cancel()
	var errs []error
	if f.tp != nil {
		errs = append(errs, f.tp.Shutdown(ctx))
	}
	if f.mp != nil {
		errs = append(errs, f.mp.Shutdown(ctx))
	}
	if err := errors.Join(errs...); err != nil {
		f.log.Warn("telemetry: the last spans and metrics were not all sent", "err", err)
	}
}

func (f *Follower) watch() {
	defer close(f.done)
	w, err := fsnotify.NewWatcher()
	var events chan fsnotify.Event
	if err == nil {
		defer w.Close()
		if w.Add(filepath.Dir(f.tail.Path)) == nil {
			events = w.Events
		}
	}
	tick := time.NewTicker(safetyTick)
	defer tick.Stop()
	base := filepath.Base(f.tail.Path)
	for {
		select {
		case <-f.stop:
			return
		case ev := <-events:
			if filepath.Base(ev.Name) == base {
				f.readNew()
			}
		case <-tick.C:
			f.readNew()
		}
	}
}

func (f *Follower) readNew() {
	lines, err := f.tail.ReadNew()
	if err != nil {
		f.log.Warn("telemetry: read the log", "err", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range lines {
		for _, o := range f.apply(l, true) {
			f.take(o, true)
		}
	}
}

// take applies one op; live ops reach the SDK at once.
func (f *Follower) take(o op, live bool) {
	id := o.Trace + "\x00" + o.Key
	if !o.End {
		s := &openSpan{start: o}
		f.open[id] = s
		if live {
			s.span = f.startSpan(s)
		}
		return
	}
	s := f.open[id]
	if s == nil {
		return
	}
	delete(f.open, id)
	if live {
		f.endSpan(s, o)
	}
}

func (f *Follower) startSpan(s *openSpan) trace.Span {
	o := s.start
	attrs := o.Attrs
	if o.RunDir != "" {
		s.executor = attrString(attrs, otelenv.Executor)
		if s.executor == "" {
			// A worker's start is recorded before its launch.json is
			// written: then the executor is read when the run ends.
			if s.executor = runExecutor(o.RunDir); s.executor != "" {
				attrs = append(attrs, attribute.String(otelenv.Executor, s.executor))
			}
		}
	}
	if f.tracer == nil {
		return nil
	}
	tid := traceID(o.Trace)
	ctx := withIDs(context.Background(), tid, spanID(o.Trace, o.Key))
	if o.Parent != "" {
		ctx = trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: tid, SpanID: spanID(o.Trace, o.Parent), TraceFlags: trace.FlagsSampled, Remote: true}))
	}
	_, sp := f.tracer.Start(ctx, o.Name, trace.WithTimestamp(o.At), trace.WithAttributes(attrs...), trace.WithSpanKind(trace.SpanKindInternal))
	return sp
}

func (f *Follower) endSpan(s *openSpan, o op) {
	attrs := o.Attrs
	if s.start.RunDir != "" {
		attrs = append(attrs, f.recordRun(s, o)...)
	}
	if s.span == nil {
		return
	}
	s.span.SetAttributes(attrs...)
	if o.Err != "" {
		s.span.SetStatus(codes.Error, o.Err)
	}
	s.span.End(trace.WithTimestamp(o.At))
}

// recordRun counts an agent run that ended and returns its spend as
// span attributes.
func (f *Follower) recordRun(s *openSpan, end op) []attribute.KeyValue {
	var u usage.Usage
	rec, err := runtime.ReadRecord(filepath.Join(s.start.RunDir, lanes.RuntimeFile))
	if err == nil && rec.Usage != nil {
		u = *rec.Usage
	}
	attrs := usageAttrs(u)
	if s.executor == "" {
		if err == nil && rec.ExecutorID != "" {
			s.executor = rec.ExecutorID
		} else {
			s.executor = runExecutor(s.start.RunDir)
		}
		if s.executor != "" {
			attrs = append(attrs, attribute.String(otelenv.Executor, s.executor))
		}
	}
	if f.m == nil {
		return attrs
	}
	ctx := context.Background()
	common := []attribute.KeyValue{attribute.String(otelenv.Lane, f.lane), attribute.String(attrMode, f.mode),
		attribute.String(otelenv.Executor, s.executor)}
	f.m.runs.Add(ctx, 1, metric.WithAttributes(append(common, attribute.String(attrOutcome, attrString(end.Attrs, attrOutcome)))...))
	f.m.duration.Record(ctx, end.At.Sub(s.start.At).Seconds(), metric.WithAttributes(common...))
	model := ""
	if u.Model != nil {
		model = *u.Model
	}
	withModel := append(common, attribute.String(attrModel, model))
	for kind, n := range map[string]*int64{"input": u.InputTokens, "output": u.OutputTokens, "cache_read": u.CacheReadTokens, "cache_write": u.CacheWriteTokens} {
		if n != nil {
			f.m.tokens.Add(ctx, *n, metric.WithAttributes(append(withModel, attribute.String("wave.tokens.kind", kind))...))
		}
	}
	if u.CostUSD != nil {
		f.m.cost.Add(ctx, *u.CostUSD, metric.WithAttributes(withModel...))
	}
	return attrs
}

// runExecutor is the executor a run's launch.json names, "" when it is
// not written (yet).
func runExecutor(dir string) string {
	if p, err := runtime.ReadPayload(filepath.Join(dir, lanes.LaunchFile)); err == nil {
		return p.ExecutorID
	}
	return ""
}

func usageAttrs(u usage.Usage) []attribute.KeyValue {
	var out []attribute.KeyValue
	for k, n := range map[string]*int64{attrTokensIn: u.InputTokens, attrTokensOut: u.OutputTokens, attrTokensCR: u.CacheReadTokens, attrTokensCW: u.CacheWriteTokens} {
		if n != nil {
			out = append(out, attribute.Int64(k, *n))
		}
	}
	if u.CostUSD != nil {
		out = append(out, attribute.Float64(attrCost, *u.CostUSD))
	}
	if u.Model != nil {
		out = append(out, attribute.String(attrModel, *u.Model))
	}
	return out
}

// recordBacklog counts what one backlog event says besides spans:
// merges, parks, questions, GitHub calls and rate-limit waits, transient
// waits, and the queue's depth after it. waiting: a transient wait was
// open before ev.
func (f *Follower) recordBacklog(ev backlog.Event, run *backlog.Run, waiting bool) {
	ctx := context.Background()
	lane := metric.WithAttributes(attribute.String(otelenv.Lane, f.lane))
	if ev.Calls > 0 {
		f.m.ghCalls.Add(ctx, ev.Calls, lane)
	}
	if ev.RateWaits > 0 {
		f.m.rateWaits.Add(ctx, ev.RateWaits, lane)
	}
	switch ev.Kind {
	case backlog.EvMerged:
		f.m.merges.Add(ctx, 1, lane)
	case backlog.EvParked:
		f.m.parks.Add(ctx, 1, lane)
	case backlog.EvNeedsInput:
		f.m.needsInput.Add(ctx, 1, lane)
	case backlog.EvWaitStarted:
		if !waiting {
			f.m.transientWaits.Add(ctx, 1, metric.WithAttributes(attribute.String(otelenv.Lane, f.lane), attribute.String("wave.transient.cause", ev.Cause)))
		}
	case backlog.EvWaitEnded:
		if n := len(run.Waits); n > 0 && waiting {
			f.m.transientWaited.Add(ctx, ev.At.Sub(run.Waits[n-1].Since).Seconds(), lane)
		}
	}
	f.m.queue.Record(ctx, int64(len(run.Queue)), lane)
	f.m.inFlight.Record(ctx, int64(run.Tally().InFlight), lane)
}

func attrString(kvs []attribute.KeyValue, key string) string {
	for _, kv := range kvs {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}
