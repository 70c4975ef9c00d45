package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runInProcess runs the runner in this process with an injected wait, so
// the backoff is checked without sleeping.
func runInProcess(t *testing.T, p *Payload) (code int, waits []time.Duration) {
	t.Helper()
	p.FillPaths()
	if err := os.MkdirAll(p.RunDir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(p.RunDir, launchFile)
	if err := WriteJSON(path, p); err != nil {
		t.Fatal(err)
	}
	r := &Runner{
		Now:    time.Now,
		Jitter: func() float64 { return 0.5 },
		After: func(d time.Duration) <-chan time.Time {
			waits = append(waits, d)
			c := make(chan time.Time, 1)
			c <- time.Now()
			return c
		},
		Logger: nil,
	}
	r.Logger = slogDiscard()
	return r.Run(context.Background(), path, Stdio{}), waits
}

func TestRateLimitRetriesThenSucceeds(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	counter := filepath.Join(root, "starts")
	p := (&harness{}).payload(t, root, "A1", "ratelimit", counter, "2")
	p.RateLimit = RateLimit{Retries: 3, BaseDelayMs: 1000, MaxDelayMs: 1500}
	code, waits := runInProcess(t, p)
	if code != 0 {
		t.Fatalf("code %d, want 0", code)
	}
	if n, _ := os.ReadFile(counter); string(n) != "3" {
		t.Fatalf("starts = %s, want 3", n)
	}
	// base·2^(k-1) capped at max, plus 12.5% jitter (half of 25%).
	want := []time.Duration{1125 * time.Millisecond, 1687500 * time.Microsecond}
	if len(waits) != 2 || waits[0] != want[0] || waits[1] != want[1] {
		t.Fatalf("waits %v, want %v", waits, want)
	}
	log, _ := os.ReadFile(p.LogPath)
	if c := strings.Count(string(log), "[wave] rate-limit detected for A1; retry"); c != 2 {
		t.Fatalf("%d retry lines in log:\n%s", c, log)
	}
	if !strings.Contains(string(log), "retry 2/3 after 1.7s") {
		t.Fatalf("log:\n%s", log)
	}
	rec, _ := ReadRecord(p.RuntimePath)
	if rec.TerminalDisposition != Completed {
		t.Fatalf("record %+v", rec)
	}
}

func TestRateLimitGivesUpWithLastCode(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	counter := filepath.Join(root, "starts")
	p := (&harness{}).payload(t, root, "A1", "ratelimit", counter, "100")
	p.RateLimit = RateLimit{Retries: 2, BaseDelayMs: 10, MaxDelayMs: 100}
	code, waits := runInProcess(t, p)
	if code != 1 || len(waits) != 2 {
		t.Fatalf("code %d waits %v; want 1 after 2 waits", code, waits)
	}
	if n, _ := os.ReadFile(counter); string(n) != "3" {
		t.Fatalf("starts = %s, want 3", n)
	}
	if st, _ := ReadStatus(p.StatusPath); st == nil || st.Code != 1 {
		t.Fatalf("status %+v", st)
	}
}

func TestNoRetryWithoutRateLimitText(t *testing.T) {
	t.Parallel()
	p := (&harness{}).payload(t, t.TempDir(), "A1", "exit", "5")
	p.RateLimit = RateLimit{Retries: 3, BaseDelayMs: 10, MaxDelayMs: 100}
	if code, waits := runInProcess(t, p); code != 5 || len(waits) != 0 {
		t.Fatalf("code %d waits %v", code, waits)
	}
}

// An agent that failed after writing rate-limiter code mentions "rate
// limit" early in its output; that is not a rate-limited start.
func TestNoRetryForEarlyMention(t *testing.T) {
	t.Parallel()
	p := (&harness{}).payload(t, t.TempDir(), "A1")
	p.Argv = []string{"sh", "-c", `echo "added a rate limit to the client"; seq 1 50; echo "tests failed"; exit 1`}
	p.RateLimit = RateLimit{Retries: 3, BaseDelayMs: 10, MaxDelayMs: 100}
	if code, waits := runInProcess(t, p); code != 1 || len(waits) != 0 {
		t.Fatalf("code %d waits %v; want 1 without retry", code, waits)
	}
}
