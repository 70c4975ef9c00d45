package runtime

import (
	"regexp"
	"time"
)

var rateLimitRe = regexp.MustCompile(`(?i)429 Too Many Requests|exceeded retry limit|last status: 429|rate limit`)

// rateLimitTail is how much of the previous chunk is kept so a match split
// across two reads is still found.
const rateLimitTail = 64

// rateLimitScanner watches one start's output for a rate-limit message.
type rateLimitScanner struct {
	tail    []byte
	matched bool
}

func (s *rateLimitScanner) Write(p []byte) {
	if s.matched {
		return
	}
	buf := append(s.tail, p...)
	if rateLimitRe.Match(buf) {
		s.matched = true
		return
	}
	if len(buf) > rateLimitTail {
		buf = buf[len(buf)-rateLimitTail:]
	}
	s.tail = append(s.tail[:0], buf...)
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
