package otlptest

import (
	"context"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"

	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// NewGRPC starts an OTLP/gRPC receiver (the collector's trace and
// metrics services, without TLS) on a loopback port, stopped when t ends.
func NewGRPC(t *testing.T) *Receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Receiver{grpcAddr: ln.Addr().String()}
	srv := grpc.NewServer()
	colltrace.RegisterTraceServiceServer(srv, grpcTraces{r: r})
	collmetrics.RegisterMetricsServiceServer(srv, grpcMetrics{r: r})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return r
}

// received records one call's metadata as headers and what was left of
// its deadline, or refuses it as Status asks.
func (r *Receiver) received(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	h := http.Header{}
	for k, vs := range md {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.headers = append(r.headers, h)
	if dl, ok := ctx.Deadline(); ok {
		r.deadlines = append(r.deadlines, time.Until(dl))
	}
	if r.Status != 0 {
		return status.Error(codes.InvalidArgument, "refused by the test")
	}
	return nil
}

type grpcTraces struct {
	colltrace.UnimplementedTraceServiceServer
	r *Receiver
}

func (g grpcTraces) Export(ctx context.Context, m *colltrace.ExportTraceServiceRequest) (*colltrace.ExportTraceServiceResponse, error) {
	if err := g.r.received(ctx); err != nil {
		return nil, err
	}
	g.r.addSpans(m)
	return &colltrace.ExportTraceServiceResponse{}, nil
}

type grpcMetrics struct {
	collmetrics.UnimplementedMetricsServiceServer
	r *Receiver
}

func (g grpcMetrics) Export(ctx context.Context, m *collmetrics.ExportMetricsServiceRequest) (*collmetrics.ExportMetricsServiceResponse, error) {
	if err := g.r.received(ctx); err != nil {
		return nil, err
	}
	g.r.addPoints(m)
	return &collmetrics.ExportMetricsServiceResponse{}, nil
}

// Deadlines returns, for each gRPC call received that had a deadline,
// the time it had left when it arrived: at most the exporter's timeout.
func (r *Receiver) Deadlines() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.deadlines)
}
