package forge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/go-github/v84/github"
)

// How hard a request is retried.
const (
	defaultMaxWait    = time.Hour
	defaultRetries    = 3                // transient failures retried, after the first attempt
	defaultAbuseWait  = 60 * time.Second // secondary limit without Retry-After
	resetBuffer       = time.Second      // clock skew between us and GitHub
	maxRateLimitWaits = 5                // per request: a limit that keeps coming back is an error
	maxBackoff        = 30 * time.Second
)

// countingTransport counts every HTTP request that leaves the process,
// which is what Calls reports: rate-limited and failed requests included,
// requests go-github refuses locally excluded.
type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.next.RoundTrip(r)
}

// do runs fn until it succeeds or fails for good. A rate-limited request
// was not applied by GitHub, so it is always waited out and repeated.
// Transient failures (5xx, transport errors) are repeated only when retry
// is set: for reads and for writes that are idempotent by nature.
func (g *GitHub) do(ctx context.Context, what string, retry bool, fn func(context.Context) error) error {
	_, err := g.attempt(ctx, what, retry, fn)
	return err
}

// attempt is do that also reports whether a final failure was transient,
// which for a create means its outcome is unknown: the caller re-reads
// before trying again.
func (g *GitHub) attempt(ctx context.Context, what string, retry bool, fn func(context.Context) error) (bool, error) {
	// We wait out limits ourselves (through the injectable Sleep), so
	// go-github's own local refusal, which compares against the wall
	// clock, must not second-guess us after a wait.
	ctx = context.WithValue(ctx, github.BypassRateLimitCheck, true)
	retries, waits := 0, 0
	for {
		err := fn(ctx)
		if err == nil {
			return false, nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return false, g.fail(what, cerr)
		}
		if d, limited, lerr := g.limitWait(what, err); limited {
			waits++
			if lerr == nil && waits > maxRateLimitWaits {
				lerr = fmt.Errorf("still rate limited after %d waits", maxRateLimitWaits)
			}
			if lerr != nil {
				return false, g.fail(what, fmt.Errorf("%w: %w", lerr, err))
			}
			g.rateWaits.Add(1)
			if serr := g.sleep(ctx, d); serr != nil {
				return false, g.fail(what, serr)
			}
			continue
		}
		transient := isTransient(err)
		if !transient || !retry || retries >= g.retries {
			return transient, g.fail(what, err)
		}
		d := backoff(retries)
		retries++
		g.log.Warn("GitHub request failed; retrying", "request", what, "attempt", retries,
			"in", d.String(), "err", g.redact(err).Error())
		if serr := g.sleep(ctx, d); serr != nil {
			return false, g.fail(what, serr)
		}
	}
}

// limitWait says whether err is a rate limit and, if so, how long to wait
// before repeating the request, or why not to wait.
func (g *GitHub) limitWait(what string, err error) (time.Duration, bool, error) {
	var rl *github.RateLimitError
	if errors.As(err, &rl) {
		reset := rl.Rate.Reset.Time
		if reset.IsZero() {
			reset = g.now().Add(defaultAbuseWait)
		}
		d := max(reset.Sub(g.now())+resetBuffer, resetBuffer)
		if d > g.maxWait {
			return 0, true, fmt.Errorf("GitHub rate limit resets at %s, beyond the %s we wait",
				reset.UTC().Format(time.RFC3339), g.maxWait)
		}
		g.log.Warn("GitHub rate limit reached; waiting until "+reset.UTC().Format(time.RFC3339),
			"request", what, "reset", reset.UTC(), "wait", d.String())
		return d, true, nil
	}
	var ab *github.AbuseRateLimitError
	if errors.As(err, &ab) {
		d := defaultAbuseWait
		if ab.RetryAfter != nil && *ab.RetryAfter > 0 {
			d = *ab.RetryAfter
		}
		if d > g.maxWait {
			return 0, true, fmt.Errorf("GitHub secondary rate limit asks for %s, beyond the %s we wait", d, g.maxWait)
		}
		g.log.Warn("GitHub secondary rate limit reached; waiting "+d.String(), "request", what, "wait", d.String())
		return d, true, nil
	}
	return 0, false, nil
}

// isTransient: a failure that may go away by itself, and whose write (if
// it was one) may or may not have been applied.
func isTransient(err error) bool {
	var er *github.ErrorResponse
	if errors.As(err, &er) {
		return er.Response != nil && er.Response.StatusCode >= 500
	}
	var acc *github.AcceptedError
	if errors.As(err, &acc) {
		return true
	}
	// Transport errors: connection refused or reset, a dropped response,
	// a truncated body.
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

func statusOf(err error) int {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	return 0
}

func backoff(retry int) time.Duration {
	return min(time.Second<<retry, maxBackoff)
}

// fail wraps a final error with what failed, marks 404 as ErrNotFound, and
// makes sure the token cannot be read from it.
func (g *GitHub) fail(what string, err error) error {
	cause := causeOf(err)
	switch statusOf(err) {
	case http.StatusNotFound:
		err = fmt.Errorf("github: %s: %w: %w", what, ErrNotFound, err)
	case http.StatusUnauthorized:
		err = fmt.Errorf("github: %s: GitHub rejected the token (check the variable named by github.tokenEnv): %w", what, err)
	default:
		err = fmt.Errorf("github: %s: %w", what, err)
	}
	return markTransient(g.redact(err), cause)
}

// redact replaces the token in err's text. go-github never puts it there
// (it travels in a header only); this guards against a transport that
// would, e.g. a URL with credentials in it.
func (g *GitHub) redact(err error) error {
	if err == nil || g.token == "" || !strings.Contains(err.Error(), g.token) {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), g.token, "[redacted]"), err: err}
}

// redactedError keeps errors.Is working (ErrNotFound) but does not unwrap,
// so no caller can print the unredacted original.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string        { return e.msg }
func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }

func defaultSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func loggerOrDefault(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}
