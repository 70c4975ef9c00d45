package forge

import (
	"bytes"
	"container/list"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// Bounds of the conditional-request cache: enough for every page a run
// re-reads (issue listings, comments, reviews, checks), small next to
// the process.
const (
	condMaxEntries = 1024
	condMaxBytes   = 32 << 20
	condMaxBody    = 4 << 20 // a larger body is not kept
)

// conditionalTransport makes every repeated GET a conditional request:
// it keeps the ETag and body of each successful GET and sends the ETag
// back as If-None-Match; GitHub answers 304 when nothing changed, and a
// 304 does not count against the rate limit. The 304 is handed to
// go-github as the kept 200 (with the fresh rate-limit headers), so
// callers never see it.
//
// It never answers from the cache without asking: GitHub marks its
// responses fresh for 60 s (Cache-Control max-age), and an RFC 9111 cache
// would serve them unasked — a comment posted, a label removed or a
// check concluded in that minute would go unseen, and a marker looked
// for would be missed. Here every read reaches GitHub; only an unchanged
// answer is free.
type conditionalTransport struct {
	next        http.RoundTripper
	notModified *atomic.Int64

	mu    sync.Mutex
	byKey map[string]*list.Element // of *condEntry
	lru   list.List                // front: most recently used
	bytes int
}

type condEntry struct {
	key    string
	etag   string
	header http.Header
	body   []byte
}

func newConditionalTransport(next http.RoundTripper, notModified *atomic.Int64) *conditionalTransport {
	return &conditionalTransport{next: next, notModified: notModified, byKey: map[string]*list.Element{}}
}

// condKey: the same URL asked for in another media type (check runs are
// asked for in their own) is another resource.
func condKey(r *http.Request) string {
	return r.URL.String() + "\x00" + r.Header.Get("Accept")
}

func (t *conditionalTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet || r.Header.Get("If-None-Match") != "" || r.Header.Get("Range") != "" {
		return t.next.RoundTrip(r)
	}
	key := condKey(r)
	kept := t.get(key)
	if kept != nil {
		r = r.Clone(r.Context())
		r.Header.Set("If-None-Match", kept.etag)
	}
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && kept != nil:
		t.notModified.Add(1)
		resp.Body.Close()
		return kept.response(r, resp.Header), nil
	case resp.StatusCode == http.StatusOK:
		return t.keep(key, resp)
	}
	return resp, nil
}

// keep remembers a 200 that carries an ETag and hands back a response
// with the same body.
func (t *conditionalTransport) keep(key string, resp *http.Response) (*http.Response, error) {
	etag := resp.Header.Get("ETag")
	if etag == "" || resp.ContentLength > condMaxBody {
		t.drop(key)
		return resp, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, condMaxBody+1))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if len(body) > condMaxBody {
		t.drop(key)
		return resp, nil
	}
	t.put(&condEntry{key: key, etag: etag, header: resp.Header.Clone(), body: body})
	return resp, nil
}

// response is the kept answer to r, with fresh's rate-limit headers (a
// 304 carries the current quota) in place of the kept ones.
func (e *condEntry) response(r *http.Request, fresh http.Header) *http.Response {
	h := e.header.Clone()
	for k, v := range fresh {
		if strings.HasPrefix(strings.ToLower(k), "x-ratelimit-") || k == "Date" {
			h[k] = v
		}
	}
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(e.body)), ContentLength: int64(len(e.body)), Request: r,
	}
}

func (t *conditionalTransport) get(key string) *condEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	el, ok := t.byKey[key]
	if !ok {
		return nil
	}
	t.lru.MoveToFront(el)
	return el.Value.(*condEntry)
}

func (t *conditionalTransport) put(e *condEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.remove(e.key)
	t.byKey[e.key] = t.lru.PushFront(e)
	t.bytes += len(e.body)
	for t.lru.Len() > condMaxEntries || t.bytes > condMaxBytes {
		t.remove(t.lru.Back().Value.(*condEntry).key)
	}
}

func (t *conditionalTransport) drop(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.remove(key)
}

// remove forgets key. Caller holds t.mu.
func (t *conditionalTransport) remove(key string) {
	if el, ok := t.byKey[key]; ok {
		t.bytes -= len(el.Value.(*condEntry).body)
		t.lru.Remove(el)
		delete(t.byKey, key)
	}
}
