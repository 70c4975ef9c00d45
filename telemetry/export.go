package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

// How an export is retried: a receiver that is busy (429, 502, 503,
// 504) or unreachable gets tries attempts within the export's timeout.
const (
	tries        = 3
	firstBackoff = 500 * time.Millisecond
)

// client posts OTLP/HTTP protobuf requests to one endpoint.
type client struct {
	ep endpoint
	hc *http.Client
}

func newClient(ep endpoint) (*client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tc, err := ep.tlsConfig()
	if err != nil {
		return nil, err
	}
	if tc != nil {
		tr.TLSClientConfig = tc
	}
	return &client{ep: ep, hc: &http.Client{Transport: tr}}, nil
}

// post sends body, retrying what a receiver asks to be retried.
func (c *client) post(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, c.ep.Timeout)
	defer cancel()
	enc := "identity"
	if c.ep.Gzip {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body, enc = b.Bytes(), "gzip"
	}
	wait := firstBackoff
	var err error
	for try := 1; ; try++ {
		var retryAfter time.Duration
		retryAfter, err = c.once(ctx, body, enc)
		if err == nil || retryAfter < 0 || try == tries {
			return err
		}
		d := max(wait, retryAfter)
		wait *= 2
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (then %w)", err, ctx.Err())
		case <-time.After(d):
		}
	}
}

// once sends body once. retryAfter < 0: the failure is final.
func (c *client) once(ctx context.Context, body []byte, enc string) (retryAfter time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.ep.URL, bytes.NewReader(body))
	if err != nil {
		return -1, err
	}
	for k, v := range c.ep.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "wave-orchestrator")
	if enc != "identity" {
		req.Header.Set("Content-Encoding", enc)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("OTLP export to %s: %w", c.ep.URL, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 == 2 {
		return 0, nil
	}
	err = fmt.Errorf("OTLP export to %s: %s: %s", c.ep.URL, resp.Status, termtext.Escape(string(bytes.TrimSpace(msg))))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		s, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return time.Duration(s) * time.Second, err
	}
	return -1, err
}

// spanExporter is an sdktrace.SpanExporter over OTLP/HTTP.
type spanExporter struct {
	c    *client
	mu   sync.Mutex
	done bool
}

func (e *spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	e.mu.Lock()
	done := e.done
	e.mu.Unlock()
	if done {
		return errors.New("OTLP span exporter is shut down")
	}
	return e.c.post(ctx, encodeSpans(spans))
}

func (e *spanExporter) Shutdown(context.Context) error {
	e.mu.Lock()
	e.done = true
	e.mu.Unlock()
	return nil
}

// metricExporter is an sdkmetric.Exporter over OTLP/HTTP, cumulative
// (the specification's default preference).
type metricExporter struct{ c *client }

func (e *metricExporter) Temporality(sdkmetric.InstrumentKind) metricdata.Temporality {
	return metricdata.CumulativeTemporality
}

func (e *metricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

func (e *metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	if len(rm.ScopeMetrics) == 0 {
		return nil
	}
	return e.c.post(ctx, encodeMetrics(rm))
}

func (e *metricExporter) ForceFlush(context.Context) error { return nil }
func (e *metricExporter) Shutdown(context.Context) error   { return nil }
