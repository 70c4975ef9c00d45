// Package tmuxadapter is the only code that runs tmux. Every invocation goes
// through one argv builder that adds -L <socket>, -f /dev/null and -u, removes TMUX and
// TMUX_PANE from the child's environment, bounds the call with a timeout,
// retries transient failures and classifies errors from stderr.
package tmuxadapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Client talks to one tmux server (one -L socket).
type Client struct {
	socket  string
	binary  string
	timeout time.Duration
	env     []string
	logger  *slog.Logger
	// mu serialises mutations (new/kill/set/send): concurrent mutating
	// clients on one server are where tmux has raced for peers.
	mu sync.Mutex
}

// transientRetries is how many times a transient failure is retried.
const transientRetries = 3

// Option configures a Client.
type Option func(*Client)

// WithBinary sets the tmux executable (default "tmux", looked up on PATH).
func WithBinary(path string) Option { return func(c *Client) { c.binary = path } }

// WithTimeout bounds each tmux invocation (default 10s).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithLogger sets the logger for retries and slow calls.
func WithLogger(l *slog.Logger) Option { return func(c *Client) { c.logger = l } }

// WithEnv adds KEY=VALUE entries to the environment of every tmux call
// (and so to a server started by this client).
func WithEnv(kv ...string) Option { return func(c *Client) { c.env = append(c.env, kv...) } }

// New returns a client for the tmux server on socket (tmux -L socket).
func New(socket string, opts ...Option) *Client {
	c := &Client{socket: socket, binary: "tmux", timeout: 10 * time.Second, logger: slog.Default()}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Socket returns the -L name of the server.
func (c *Client) Socket() string { return c.socket }

// argv is the single place a tmux command line is built. -f /dev/null
// keeps the user's tmux.conf (destroy-unattached, default-shell, hooks)
// away from our servers; a client talking to a running server ignores it.
func (c *Client) argv(args ...string) []string {
	return append(c.clientArgv("-f", "/dev/null"), args...)
}

// clientArgv is the tmux command prefix: binary, -u, -L socket, then flags.
func (c *Client) clientArgv(flags ...string) []string {
	return append([]string{c.binary, "-u", "-L", c.socket}, flags...)
}

// environ is the caller's environment without TMUX/TMUX_PANE (a bare tmux
// with $TMUX set talks to the outer server), plus the client's extras.
func (c *Client) environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TMUX=") || strings.HasPrefix(kv, "TMUX_PANE=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, c.env...)
}

// run executes tmux with args and returns its stdout. shown is the argv used
// in errors (with -e values elided); nil means args.
func (c *Client) run(ctx context.Context, mutate bool, shown []string, args ...string) (string, error) {
	if mutate {
		c.mu.Lock()
		defer c.mu.Unlock()
	}
	if shown == nil {
		shown = args
	}
	var err error
	backoff := 20 * time.Millisecond
	for attempt := 0; ; attempt++ {
		var out string
		out, err = c.once(ctx, shown, args)
		if err == nil || attempt >= transientRetries || !retryable(err, mutate) || ctx.Err() != nil {
			return out, err
		}
		d := backoff + time.Duration(rand.Int64N(int64(backoff)))
		c.logger.Debug("tmux_retry", "socket", c.socket, "cmd", shown[0], "attempt", attempt+1, "wait", d, "err", err)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", err
		case <-t.C:
		}
		backoff *= 2
	}
}

// retryable reports whether a failed call may be repeated. A mutation that
// timed out may have been done (a slow new-session batch that succeeded
// would fail again as "duplicate session"), so only queries retry timeouts.
func retryable(err error, mutate bool) bool {
	return errors.Is(err, errTransient) || !mutate && errors.Is(err, ErrTimeout)
}

func (c *Client) once(ctx context.Context, shown, args []string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	full := c.argv(args...)
	cmd := exec.CommandContext(cctx, full[0], full[1:]...)
	cmd.Env = c.environ()
	// A pane child that inherits tmux's stdout would otherwise keep Wait
	// blocked on EOF long after tmux itself exited.
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.String(), nil
	}
	e := &Error{Args: shown, Stderr: stderr.String()}
	switch {
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist):
		e.Err = fmt.Errorf("%w: %w", ErrBinaryMissing, err)
	case cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		e.Err = ErrTimeout
	case ctx.Err() != nil:
		e.Err = ctx.Err()
	default:
		if k := classify(stderr.String()); k != nil {
			e.Err = k
		} else {
			e.Err = err
		}
	}
	return stdout.String(), e
}
