package telemetry

import (
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Field numbers below are those of the OTLP protobuf definitions
// (opentelemetry-proto, v1): collector/{trace,metrics}/v1 requests,
// trace/v1, metrics/v1, resource/v1 and common/v1.

// encodeSpans is an ExportTraceServiceRequest of spans, grouped by
// resource and scope as the SDK hands them over (one of each here).
func encodeSpans(spans []sdktrace.ReadOnlySpan) []byte {
	var req pb
	for i := 0; i < len(spans); {
		j := i
		for j < len(spans) && spans[j].Resource() == spans[i].Resource() && spans[j].InstrumentationScope() == spans[i].InstrumentationScope() {
			j++
		}
		group := spans[i:j]
		req.msg(1, true, func(rs *pb) { // ResourceSpans
			rs.msg(1, true, func(r *pb) { resourceMsg(r, group[0].Resource()) })
			rs.msg(2, true, func(ss *pb) { // ScopeSpans
				ss.msg(1, true, func(s *pb) { scopeMsg(s, group[0].InstrumentationScope()) })
				for _, sp := range group {
					ss.msg(2, true, func(s *pb) { spanMsg(s, sp) })
				}
			})
			rs.string(3, group[0].Resource().SchemaURL())
		})
		i = j
	}
	return req.b
}

func spanMsg(p *pb, s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	p.bytes(1, tid[:])
	p.bytes(2, sid[:])
	p.string(3, sc.TraceState().String())
	if par := s.Parent(); par.IsValid() {
		psid := par.SpanID()
		p.bytes(4, psid[:])
	}
	p.string(5, s.Name())
	p.uint(6, uint64(s.SpanKind()))
	p.fixed64(7, unixNano(s.StartTime().UnixNano()))
	p.fixed64(8, unixNano(s.EndTime().UnixNano()))
	for _, kv := range s.Attributes() {
		p.msg(9, true, func(k *pb) { keyValueMsg(k, kv) })
	}
	p.uint(10, uint64(s.DroppedAttributes()))
	for _, ev := range s.Events() {
		p.msg(11, true, func(e *pb) {
			e.fixed64(1, unixNano(ev.Time.UnixNano()))
			e.string(2, ev.Name)
			for _, kv := range ev.Attributes {
				e.msg(3, true, func(k *pb) { keyValueMsg(k, kv) })
			}
		})
	}
	p.uint(12, uint64(s.DroppedEvents()))
	p.msg(15, false, func(st *pb) {
		st.string(2, s.Status().Description)
		st.uint(3, uint64(statusCode(s.Status().Code)))
	})
	p.fixed32(16, uint32(sc.TraceFlags()))
}

// statusCode maps the API's codes (Unset, Error, Ok) to OTLP's
// (UNSET 0, OK 1, ERROR 2).
func statusCode(c codes.Code) int {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

func unixNano(n int64) uint64 {
	if n < 0 {
		return 0
	}
	return uint64(n)
}

func resourceMsg(p *pb, r *resource.Resource) {
	for _, kv := range r.Attributes() {
		p.msg(1, true, func(k *pb) { keyValueMsg(k, kv) })
	}
}

func scopeMsg(p *pb, s instrumentation.Scope) {
	p.string(1, s.Name)
	p.string(2, s.Version)
}

func keyValueMsg(p *pb, kv attribute.KeyValue) {
	p.string(1, string(kv.Key))
	p.msg(2, true, func(v *pb) { anyValueMsg(v, kv.Value) })
}

// anyValueMsg writes an AnyValue: string 1, bool 2, int 3, double 4,
// array 5 (ArrayValue: values 1).
func anyValueMsg(p *pb, v attribute.Value) {
	switch v.Type() {
	case attribute.BOOL:
		p.tag(2, wireVarint)
		if v.AsBool() {
			p.varint(1)
		} else {
			p.varint(0)
		}
	case attribute.INT64:
		p.tag(3, wireVarint)
		p.varint(uint64(v.AsInt64()))
	case attribute.FLOAT64:
		p.double(4, v.AsFloat64())
	case attribute.STRING:
		p.tag(1, wireLen)
		p.varint(uint64(len(v.AsString())))
		p.b = append(p.b, v.AsString()...)
	case attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE, attribute.STRINGSLICE:
		p.msg(5, true, func(a *pb) {
			for _, e := range sliceValues(v) {
				a.msg(1, true, func(x *pb) { anyValueMsg(x, e) })
			}
		})
	default:
		p.tag(1, wireLen)
		p.varint(uint64(len(v.Emit())))
		p.b = append(p.b, v.Emit()...)
	}
}

func sliceValues(v attribute.Value) []attribute.Value {
	var out []attribute.Value
	switch v.Type() {
	case attribute.BOOLSLICE:
		for _, e := range v.AsBoolSlice() {
			out = append(out, attribute.BoolValue(e))
		}
	case attribute.INT64SLICE:
		for _, e := range v.AsInt64Slice() {
			out = append(out, attribute.Int64Value(e))
		}
	case attribute.FLOAT64SLICE:
		for _, e := range v.AsFloat64Slice() {
			out = append(out, attribute.Float64Value(e))
		}
	case attribute.STRINGSLICE:
		for _, e := range v.AsStringSlice() {
			out = append(out, attribute.StringValue(e))
		}
	}
	return out
}

// encodeMetrics is an ExportMetricsServiceRequest of one collection.
func encodeMetrics(rm *metricdata.ResourceMetrics) []byte {
	var req pb
	req.msg(1, true, func(r *pb) { // ResourceMetrics
		r.msg(1, true, func(res *pb) { resourceMsg(res, rm.Resource) })
		for _, sm := range rm.ScopeMetrics {
			r.msg(2, true, func(s *pb) { // ScopeMetrics
				s.msg(1, true, func(sc *pb) { scopeMsg(sc, sm.Scope) })
				for _, m := range sm.Metrics {
					s.msg(2, true, func(mp *pb) { metricMsg(mp, m) })
				}
			})
		}
		r.string(3, rm.Resource.SchemaURL())
	})
	return req.b
}

// metricMsg writes a Metric: name 1, description 2, unit 3, then the
// data as gauge 5, sum 7 or histogram 9.
func metricMsg(p *pb, m metricdata.Metrics) {
	p.string(1, m.Name)
	p.string(2, m.Description)
	p.string(3, m.Unit)
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		p.msg(7, true, func(s *pb) { sumMsg(s, d.DataPoints, d.Temporality, d.IsMonotonic) })
	case metricdata.Sum[float64]:
		p.msg(7, true, func(s *pb) { sumMsg(s, d.DataPoints, d.Temporality, d.IsMonotonic) })
	case metricdata.Gauge[int64]:
		p.msg(5, true, func(g *pb) { pointsMsg(g, d.DataPoints) })
	case metricdata.Gauge[float64]:
		p.msg(5, true, func(g *pb) { pointsMsg(g, d.DataPoints) })
	case metricdata.Histogram[float64]:
		p.msg(9, true, func(h *pb) {
			for _, dp := range d.DataPoints {
				h.msg(1, true, func(x *pb) { histogramPointMsg(x, dp) })
			}
			h.uint(2, temporality(d.Temporality))
		})
	}
}

func sumMsg[N int64 | float64](p *pb, dps []metricdata.DataPoint[N], t metricdata.Temporality, monotonic bool) {
	pointsMsg(p, dps)
	p.uint(2, temporality(t))
	p.bool(3, monotonic)
}

// pointsMsg writes NumberDataPoints (field 1 of Gauge and Sum):
// attributes 7, start 2, time 3, as_double 4 or as_int 6.
func pointsMsg[N int64 | float64](p *pb, dps []metricdata.DataPoint[N]) {
	for _, dp := range dps {
		p.msg(1, true, func(x *pb) {
			for _, kv := range dp.Attributes.ToSlice() {
				x.msg(7, true, func(k *pb) { keyValueMsg(k, kv) })
			}
			x.fixed64(2, unixNano(dp.StartTime.UnixNano()))
			x.fixed64(3, unixNano(dp.Time.UnixNano()))
			switch v := any(dp.Value).(type) {
			case int64:
				x.fixed64Always(6, uint64(v))
			case float64:
				x.double(4, v)
			}
		})
	}
}

// histogramPointMsg writes a HistogramDataPoint: attributes 9, start 2,
// time 3, count 4, sum 5, bucket_counts 6, explicit_bounds 7, min 11,
// max 12.
func histogramPointMsg(p *pb, dp metricdata.HistogramDataPoint[float64]) {
	for _, kv := range dp.Attributes.ToSlice() {
		p.msg(9, true, func(k *pb) { keyValueMsg(k, kv) })
	}
	p.fixed64(2, unixNano(dp.StartTime.UnixNano()))
	p.fixed64(3, unixNano(dp.Time.UnixNano()))
	p.fixed64Always(4, dp.Count)
	p.double(5, dp.Sum)
	p.packedFixed64(6, dp.BucketCounts)
	bounds := make([]uint64, len(dp.Bounds))
	for i, b := range dp.Bounds {
		bounds[i] = math.Float64bits(b)
	}
	p.packedFixed64(7, bounds)
	if v, ok := dp.Min.Value(); ok {
		p.double(11, v)
	}
	if v, ok := dp.Max.Value(); ok {
		p.double(12, v)
	}
}

// temporality maps the SDK's to OTLP's (DELTA 1, CUMULATIVE 2).
func temporality(t metricdata.Temporality) uint64 {
	switch t {
	case metricdata.DeltaTemporality:
		return 1
	case metricdata.CumulativeTemporality:
		return 2
	}
	return 0
}
