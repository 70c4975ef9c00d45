package runtime

import (
	"bytes"
	"time"

	"regexp"
)

var rateLimitRe = regexp.MustCompile(`(?i)429 Too Many Requests|exceeded retry limit|last status: 429|rate limit`)

// Only the end of a start's output is searched for a rate-limit message:
// an agent that failed for another reason may well have mentioned rate
// limits earlier (say, while writing rate-limiter code).
const (
	rateLimitTailBytes = 4 << 10
	rateLimitTailLines = 20
)

// rateLimitScanner keeps the end of one start's output.
type rateLimitScanner struct {
	tail []byte
}

func (s *rateLimitScanner) Write(p []byte) {
	s.tail = append(s.tail, p...)
	// Trim in amortised steps, not on every write; the usage-limit
	// search reads the longest tail.
	if len(s.tail) > 2*usageTailBytes {
		s.tail = append(s.tail[:0], s.tail[len(s.tail)-usageTailBytes:]...)
	}
}

// matched reports whether the last rateLimitTailLines lines (at most
// rateLimitTailBytes) of the output name a rate limit.
func (s *rateLimitScanner) matched() bool {
	return rateLimitRe.Match(lastLines(s.tail, rateLimitTailBytes, rateLimitTailLines))
}

// usageLimit reports the usage limit the end of the output names (see
// DetectUsageLimit), nil when none; at is when the agent exited.
func (s *rateLimitScanner) usageLimit(at time.Time) *UsageLimit {
	if u, ok := DetectUsageLimit(s.tail, at, time.Local); ok {
		return &u
	}
	return nil
}

// lastLines returns the last n lines of b, ignoring trailing blank space,
// within its last maxBytes.
func lastLines(b []byte, maxBytes, n int) []byte {
	b = bytes.TrimRight(b, " \t\r\n")
	if len(b) > maxBytes {
		b = b[len(b)-maxBytes:]
	}
	end := len(b)
	for range n {
		i := bytes.LastIndexByte(b[:end], '\n')
		if i < 0 {
			return b
		}
		end = i
	}
	return b[end+1:]
}

// rateLimitDelay is the wait before retry k (1-based): min(base·2^(k-1),
// max) plus jitter in [0, 25%) of that, jitter01 being a number in [0,1).
func rateLimitDelay(rl RateLimit, k int, jitter01 float64) time.Duration {
	base := time.Duration(rl.BaseDelayMs) * time.Millisecond
	if base <= 0 {
		base = 5 * time.Second
	}
	maxD := time.Duration(rl.MaxDelayMs) * time.Millisecond
	if maxD <= 0 {
		maxD = 5 * time.Minute
	}
	d := base
	for i := 1; i < k && d < maxD; i++ {
		d *= 2
	}
	d = min(d, maxD)
	return d + time.Duration(float64(d)*0.25*jitter01)
}
