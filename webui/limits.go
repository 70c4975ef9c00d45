package webui

import (
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"
)

// MinTokenBytes is the shortest token serve accepts: 16 bytes, what
// `openssl rand -hex 16` prints half of. A shorter one falls to guessing
// even at the rate failed logins are held to.
const MinTokenBytes = 16

// CheckToken refuses a token too short to stand guessing; env names the
// variable it came from, for the fix.
func CheckToken(token, env string) error {
	if token == "" || len(token) >= MinTokenBytes {
		return nil
	}
	return fmt.Errorf("--token-env %s: the token is %d bytes, a token needs at least %d; set a random one, e.g. %s=$(openssl rand -hex 16)",
		env, len(token), MinTokenBytes, env)
}

// limits bound what any client can hold of the server. None of them
// refuses a request carrying the token: the connection cap only bounds
// how many connections are open at once (one over it waits in the
// kernel's queue), and the timeouts end only slow or idle ones.
type limits struct {
	// readHeader and read bound reading a request's header and all of
	// it; the API's requests are small (an answer is a few KiB).
	readHeader, read time.Duration
	// write bounds writing an answer; the event stream lifts it.
	write time.Duration
	// idle closes a kept-alive connection nobody uses.
	idle time.Duration
	// conns caps open connections (see connCap).
	conns int
	// streams caps open event streams: each holds a connection and a
	// buffer for as long as its page is open.
	streams int
	// heartbeat is the event stream's keep-alive comment period.
	heartbeat time.Duration
}

func defaultLimits() limits {
	return limits{readHeader: 10 * time.Second, read: 30 * time.Second, write: 60 * time.Second, idle: 60 * time.Second,
		conns: connCap(), streams: 64, heartbeat: 15 * time.Second}
}

// maxConns is the connection cap under a generous file limit.
const maxConns = 256

// connCap is how many connections serve keeps open at once: maxConns, or
// half the file limit when that is lower, leaving room for the files
// serve itself opens (logs, records, the watcher), so accept never fails
// with "too many open files" and a flood of connections can only queue.
func connCap() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur > maxConns*2 {
		return maxConns
	}
	return max(int(lim.Cur)/2, 8)
}

// Failed logins: a client (by IP address) may get the token wrong
// loginBurst times at once, then once per loginRefill. Over that, a
// request carrying a token from it is answered 429 without the token
// being looked at, so guessing runs at a few tries a minute. A client
// that presents no token is never counted: a flood of bare connections
// (or another client's guessing) cannot lock out the token holder.
const (
	loginBurst  = 10
	loginRefill = 6 * time.Second
	// maxClients bounds the table; past it, clients not in it share one
	// bucket, so many addresses cannot grow it (or guess faster).
	maxClients = 4096
)

type bucket struct {
	tokens float64
	at     time.Time
}

// loginLimiter counts failed logins per client.
type loginLimiter struct {
	now func() time.Time
	mu  sync.Mutex
	by  map[string]*bucket
	all bucket // the clients past maxClients
}

func newLoginLimiter(now func() time.Time) *loginLimiter {
	return &loginLimiter{now: now, by: map[string]*bucket{}, all: bucket{tokens: loginBurst, at: now()}}
}

// refill brings b up to now; it reports whether b is full.
func (b *bucket) refill(now time.Time) bool {
	b.tokens = min(loginBurst, b.tokens+float64(now.Sub(b.at))/float64(loginRefill))
	b.at = now
	return b.tokens >= loginBurst
}

// bucketOf is client's bucket, created full; the caller holds mu.
func (l *loginLimiter) bucketOf(client string, now time.Time) *bucket {
	if b, ok := l.by[client]; ok {
		return b
	}
	if len(l.by) >= maxClients {
		for c, b := range l.by { // forget whoever has nothing held against them
			if b.refill(now) {
				delete(l.by, c)
			}
		}
	}
	if len(l.by) >= maxClients {
		return &l.all
	}
	b := &bucket{tokens: loginBurst, at: now}
	l.by[client] = b
	return b
}

// allow reports whether client may try a token now, and if not, in how
// long it may.
func (l *loginLimiter) allow(client string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.bucketOf(client, now)
	b.refill(now)
	if b.tokens >= 1 {
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) * float64(loginRefill))
}

// failed counts a wrong token from client.
func (l *loginLimiter) failed(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.bucketOf(client, now)
	b.refill(now)
	b.tokens = max(b.tokens-1, 0)
}

// clientOf is a request's client address without its port.
func clientOf(remoteAddr string) string {
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return h
	}
	return remoteAddr
}
