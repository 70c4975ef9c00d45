package forgetest

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"
)

type faultKind int

const (
	faultStatus    faultKind = iota // answer with a status, apply nothing
	faultPrimary                    // primary rate limit: 403, X-Ratelimit-Remaining 0, a reset
	faultSecondary                  // secondary limit: 403/429 with Retry-After
	faultDrop                       // apply the request, then drop the connection
	faultApplyFail                  // apply the request, then answer with a status
)

// fault is one pending injected failure. It fires on request number at
// (counted over all routes since the server started), or, when at is 0,
// on the next request (of route, when route is set).
type fault struct {
	kind       faultKind
	at         int
	route      string
	status     int
	reset      time.Time
	retryAfter time.Duration
}

func (s *Server) addFault(f *fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
}

// FailNth makes the n-th request from now (1 = the next) fail with status,
// applying nothing.
func (s *Server) FailNth(n int, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{kind: faultStatus, at: s.total + n, status: status})
}

// FailNextOn makes the next request to route fail with status, applying
// nothing.
func (s *Server) FailNextOn(route string, status int) {
	s.addFault(&fault{kind: faultStatus, route: route, status: status})
}

// Fail5xx makes the next n requests fail with 502 Bad Gateway.
func (s *Server) Fail5xx(n int) {
	for range n {
		s.addFault(&fault{kind: faultStatus, status: http.StatusBadGateway})
	}
}

// RateLimitNext makes the next request hit a rate limit. primary: 403
// with X-Ratelimit-Remaining 0 and X-Ratelimit-Reset = reset. Otherwise
// a secondary limit: 429 with Retry-After = the seconds until reset.
func (s *Server) RateLimitNext(primary bool, reset time.Time) {
	if primary {
		s.addFault(&fault{kind: faultPrimary, status: http.StatusForbidden, reset: reset})
		return
	}
	d := max(time.Until(reset).Round(time.Second), time.Second)
	s.SecondaryLimitNext(http.StatusTooManyRequests, d)
}

// SecondaryLimitNext makes the next request hit a secondary rate limit
// with status (403 or 429); retryAfter 0 sends no Retry-After (and no
// X-Ratelimit-* headers), so the client falls back to its default.
func (s *Server) SecondaryLimitNext(status int, retryAfter time.Duration) {
	s.addFault(&fault{kind: faultSecondary, status: status, retryAfter: retryAfter})
}

// DropResponseNext makes the next request to route be applied and its
// connection then closed without a response, like a network failure
// after the server committed the write.
func (s *Server) DropResponseNext(route string) {
	s.addFault(&fault{kind: faultDrop, route: route})
}

// ApplyThenFailNext makes the next request to route be applied and then
// answered with status (e.g. 502) instead of its result.
func (s *Server) ApplyThenFailNext(route string, status int) {
	s.addFault(&fault{kind: faultApplyFail, route: route, status: status})
}

// BeforeNext runs fn just before the next request to route is handled
// (after it is counted): a test's way to make something happen between a
// client's check and its write, e.g. a PR opened by someone else.
func (s *Server) BeforeNext(route string, fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks = append(s.hooks, hook{route: route, fn: fn})
}

type hook struct {
	route string
	fn    func()
}

// takeHook removes and returns the hook for route. Caller holds s.mu.
func (s *Server) takeHook(route string) func() {
	for k, h := range s.hooks {
		if h.route == route {
			s.hooks = append(s.hooks[:k], s.hooks[k+1:]...)
			return h.fn
		}
	}
	return nil
}

// takeFault removes and returns the fault for request number i on route.
// Caller holds s.mu.
func (s *Server) takeFault(i int, route string) *fault {
	for k, f := range s.faults {
		if (f.at == 0 || f.at == i) && (f.route == "" || f.route == route) {
			s.faults = append(s.faults[:k], s.faults[k+1:]...)
			return f
		}
	}
	return nil
}

// writeFault answers a request that a fault stops before it is applied.
func (s *Server) writeFault(w http.ResponseWriter, f *fault) {
	switch f.kind {
	case faultPrimary:
		h := w.Header()
		h.Set("X-Ratelimit-Limit", "5000")
		h.Set("X-Ratelimit-Remaining", "0")
		h.Set("X-Ratelimit-Used", "5000")
		h.Set("X-Ratelimit-Reset", strconv.FormatInt(f.reset.Unix(), 10))
		h.Set("X-Ratelimit-Resource", "core")
		writeJSON(w, f.status, map[string]any{
			"message":           "API rate limit exceeded for user.",
			"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
		})
	case faultSecondary:
		if f.retryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(f.retryAfter/time.Second)))
		}
		writeJSON(w, f.status, map[string]any{
			"message":           "You have exceeded a secondary rate limit.",
			"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
		})
	default:
		s.rateHeaders(w)
		writeJSON(w, f.status, map[string]any{"message": http.StatusText(f.status)})
	}
}

// Sleeper is an injectable forge Sleep that returns at once (or with
// ctx's error) and records every wait asked of it.
type Sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

// Sleep records d and returns without waiting.
func (z *Sleeper) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	z.waits = append(z.waits, d)
	return nil
}

// Waits are the waits asked for so far, in order.
func (z *Sleeper) Waits() []time.Duration {
	z.mu.Lock()
	defer z.mu.Unlock()
	return append([]time.Duration(nil), z.waits...)
}
