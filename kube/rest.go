package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// restClient sends the API requests of a Client: JSON over net/http,
// rate-limited, each bounded by the config's timeout, and the API's
// refusals decoded into *StatusError, which IsNotFound and its
// siblings read.
type restClient struct {
	base    *url.URL
	rt      http.RoundTripper
	limit   *tokenBucket
	timeout time.Duration
}

// apiRequest is one request to the API server.
type apiRequest struct {
	method string
	path   string // from the server's root: /api/v1/namespaces/ns/pods
	query  url.Values
	body   []byte
	// contentType of body (JSON when empty).
	contentType string
	// what the request is about, for errors without a Status.
	resource groupResource
	name     string
	// invalid: the request cannot be made (a name that is no path
	// segment).
	invalid error
}

func (c *restClient) url(r apiRequest) *url.URL {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + r.path
	u.RawQuery = r.query.Encode()
	return &u
}

// send makes the request and returns the response whose status is 2xx
// (the caller closes its body), or the API's error. A 429 or 5xx that
// says when to come back (Retry-After) is retried a few times, as
// client-go does.
func (c *restClient) send(ctx context.Context, r apiRequest) (*http.Response, error) {
	if r.invalid != nil {
		return nil, r.invalid
	}
	for attempt := 0; ; attempt++ {
		resp, err := c.sendOnce(ctx, r)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return resp, nil
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		wait, retry := retryAfter(resp)
		if retry && attempt < 3 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
			continue
		}
		return nil, decodeError(resp.StatusCode, resp.Header.Get("Content-Type"), body, r, int(wait/time.Second))
	}
}

func (c *restClient) sendOnce(ctx context.Context, r apiRequest) (*http.Response, error) {
	if err := c.limit.wait(ctx); err != nil {
		return nil, err
	}
	cancel := context.CancelFunc(func() {})
	if c.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, c.url(r).String(), body)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if r.body != nil {
		ct := r.contentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelBody ends a request's timeout when its body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func retryAfter(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
		return 0, false
	}
	s, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil || s < 0 {
		return 0, false
	}
	return time.Duration(min(s, 10)) * time.Second, true
}

// do sends r and decodes a JSON answer into out (unless nil).
func (c *restClient) do(ctx context.Context, r apiRequest, out any) error {
	resp, err := c.send(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", r.method, r.path, err)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: decode the answer: %w", r.method, r.path, err)
	}
	return nil
}

// tokenBucket limits a client to qps requests a second on average and
// burst at once (client-go's default limiter, without its packages).
type tokenBucket struct {
	qps, burst float64

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

func newTokenBucket(qps float32, burst int) *tokenBucket {
	if burst < 1 {
		burst = 1
	}
	return &tokenBucket{qps: float64(qps), burst: float64(burst), tokens: float64(burst)}
}

// wait takes a token, waiting until one is due (or ctx is done).
func (b *tokenBucket) wait(ctx context.Context) error {
	if b == nil || b.qps <= 0 {
		return nil
	}
	b.mu.Lock()
	now := time.Now()
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.qps)
	}
	b.last = now
	b.tokens--
	var d time.Duration
	if b.tokens < 0 {
		d = time.Duration(-b.tokens / b.qps * float64(time.Second))
	}
	b.mu.Unlock()
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		b.mu.Lock()
		b.tokens++ // not taken after all
		b.mu.Unlock()
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
