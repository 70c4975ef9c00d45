package forge

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-github/v84/github"
)

// Causes of transient GitHub failures, in the words the supervisor shows.
// A failure is transient when it may pass by itself (a 5xx, a refused or
// dropped connection) once the client's own retries are spent; a refused
// token or permission (401, 403), a missing issue and a rate limit we
// chose not to wait out are permanent.
const (
	CauseGitHubUnreachable = "GitHub unreachable"
	CauseGitHubServer      = "GitHub answered with a server error"
)

// TransientCause reports, in words, why err may pass by itself; ok is
// false for a permanent failure (or one that is not GitHub's).
func TransientCause(err error) (string, bool) {
	var te *transientError
	if errors.As(err, &te) {
		return te.cause, true
	}
	return "", false
}

// transientError marks a final GitHub error as transient. It wraps the
// already redacted error, so unwrapping it exposes no token.
type transientError struct {
	cause string
	err   error
}

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// causeOf is the transient cause of a raw go-github error, "" when it is
// permanent.
func causeOf(err error) string {
	var rl *github.RateLimitError
	var ab *github.AbuseRateLimitError
	if errors.As(err, &rl) || errors.As(err, &ab) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ""
	}
	if !isTransient(err) {
		return ""
	}
	if s := statusOf(err); s >= 500 {
		return fmt.Sprintf("%s (HTTP %d)", CauseGitHubServer, s)
	}
	var acc *github.AcceptedError
	if errors.As(err, &acc) {
		return CauseGitHubServer + " (HTTP 202, not done yet)"
	}
	return CauseGitHubUnreachable
}

func markTransient(err error, cause string) error {
	if err == nil || cause == "" {
		return err
	}
	return &transientError{cause: cause, err: err}
}
