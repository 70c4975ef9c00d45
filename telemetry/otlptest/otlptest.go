// Package otlptest is an OTLP receiver for tests, over HTTP (an httptest
// server) or gRPC, that decodes what it is sent with the OTLP project's
// own protobuf types (go.opentelemetry.io/proto/otlp), so a test checks
// what a collector reads.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, flattened for assertions.
type Span struct {
	Name                    string
	TraceID, SpanID, Parent string // hex; Parent "" for a root
	Start, End              time.Time
	Attrs                   map[string]any
	Resource                map[string]any
	Error                   bool // status ERROR
	Message                 string
}

// Point is one received metric data point.
type Point struct {
	Metric string
	Kind   string // sum | gauge | histogram
	Attrs  map[string]any
	Value  float64 // a histogram's count
	Sum    float64 // a histogram's sum
}

// Receiver collects what it is sent.
type Receiver struct {
	// Srv is the OTLP/HTTP receiver; nil for a gRPC one (NewGRPC).
	Srv      *httptest.Server
	grpcAddr string
	// Status, when set, answers every request (a receiver refusing).
	Status int

	mu        sync.Mutex
	spans     []Span
	points    []Point
	headers   []http.Header
	deadlines []time.Duration
	bad       []string
}

// New starts a receiver, closed when t ends.
func New(t *testing.T) *Receiver {
	r := &Receiver{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var m colltrace.ExportTraceServiceRequest
		if r.decode(w, req, &m) {
			r.addSpans(&m)
			r.reply(w, &colltrace.ExportTraceServiceResponse{})
		}
	})
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		var m collmetrics.ExportMetricsServiceRequest
		if r.decode(w, req, &m) {
			r.addPoints(&m)
			r.reply(w, &collmetrics.ExportMetricsServiceResponse{})
		}
	})
	r.Srv = httptest.NewServer(mux)
	t.Cleanup(r.Srv.Close)
	return r
}

// Env is the environment that sends a process's telemetry here.
func (r *Receiver) Env() []string {
	if r.Srv == nil {
		return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + r.grpcAddr, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"}
	}
	return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + r.Srv.URL}
}

func (r *Receiver) decode(w http.ResponseWriter, req *http.Request, m proto.Message) bool {
	r.mu.Lock()
	r.headers = append(r.headers, req.Header.Clone())
	status := r.Status
	r.mu.Unlock()
	if status != 0 {
		http.Error(w, "refused by the test", status)
		return false
	}
	body := io.Reader(req.Body)
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			r.fail(w, "gzip: %v", err)
			return false
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		r.fail(w, "read: %v", err)
		return false
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		r.fail(w, "%s: Content-Type %q", req.URL.Path, ct)
		return false
	}
	if err := proto.Unmarshal(b, m); err != nil {
		r.fail(w, "%s: not an OTLP request: %v", req.URL.Path, err)
		return false
	}
	return true
}

func (r *Receiver) fail(w http.ResponseWriter, format string, args ...any) {
	r.mu.Lock()
	r.bad = append(r.bad, fmt.Sprintf(format, args...))
	r.mu.Unlock()
	http.Error(w, "bad request", http.StatusBadRequest)
}

func (r *Receiver) reply(w http.ResponseWriter, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

func (r *Receiver) addSpans(m *colltrace.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range m.ResourceSpans {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := Span{Name: s.Name, TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
					Parent: hex.EncodeToString(s.ParentSpanId), Start: time.Unix(0, int64(s.StartTimeUnixNano)),
					End: time.Unix(0, int64(s.EndTimeUnixNano)), Attrs: attrs(s.Attributes), Resource: res,
					Error: s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR, Message: s.GetStatus().GetMessage()}
				r.spans = append(r.spans, sp)
			}
		}
	}
}

func (r *Receiver) addPoints(m *collmetrics.ExportMetricsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rm := range m.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, mt := range sm.Metrics {
				switch d := mt.Data.(type) {
				case *metricspb.Metric_Sum:
					for _, p := range d.Sum.DataPoints {
						r.points = append(r.points, Point{Metric: mt.Name, Kind: "sum", Attrs: attrs(p.Attributes), Value: number(p)})
					}
				case *metricspb.Metric_Gauge:
					for _, p := range d.Gauge.DataPoints {
						r.points = append(r.points, Point{Metric: mt.Name, Kind: "gauge", Attrs: attrs(p.Attributes), Value: number(p)})
					}
				case *metricspb.Metric_Histogram:
					for _, p := range d.Histogram.DataPoints {
						r.points = append(r.points, Point{Metric: mt.Name, Kind: "histogram", Attrs: attrs(p.Attributes),
							Value: float64(p.Count), Sum: p.GetSum()})
					}
				}
			}
		}
	}
}

func number(p *metricspb.NumberDataPoint) float64 {
	switch v := p.Value.(type) {
	case *metricspb.NumberDataPoint_AsInt:
		return float64(v.AsInt)
	case *metricspb.NumberDataPoint_AsDouble:
		return v.AsDouble
	}
	return 0
}

func attrs(kvs []*commonpb.KeyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range kvs {
		out[kv.Key] = value(kv.Value)
	}
	return out
}

func value(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.Values {
			out = append(out, value(e))
		}
		return out
	}
	return nil
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// Points returns the metric points received so far.
func (r *Receiver) Points() []Point {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.points)
}

// Headers returns the headers of every request received.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.headers)
}

// Bad lists the requests that were not valid OTLP.
func (r *Receiver) Bad() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.bad)
}

// Named returns the received spans called name.
func Named(spans []Span, name string) []Span {
	var out []Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// Last returns the last point of metric whose attributes include
// every one of match (cumulative exports: the last is the total).
func Last(points []Point, metric string, match map[string]any) (Point, bool) {
	var found Point
	ok := false
	for _, p := range points {
		if p.Metric != metric {
			continue
		}
		all := true
		for k, v := range match {
			if p.Attrs[k] != v {
				all = false
			}
		}
		if all {
			found, ok = p, true
		}
	}
	return found, ok
}
