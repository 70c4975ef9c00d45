package runtime

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The texts in testdata/usagelimit are what the pinned CLI builds print
// when their account is out (claude 2.1.197 run against a fake API here;
// codex 0.171.0 and opencode 1.18.33 as they print them): each is read as
// a usage limit, with the reset it names.
func TestEveryPinnedCLIsUsageLimitTextIsReadWithItsReset(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 4, 47, 57, 0, time.UTC)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skipf("no zone data: %v", err)
	}
	at := func(s string) *time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return &v
	}
	for _, c := range []struct {
		file  string
		reset *time.Time
		exact bool
		line  string
	}{
		{"claude-text-session.txt", at("2026-12-06T05:47:00Z"), false, "You've hit your session limit · resets 5:47am (UTC)"},
		{"claude-text-weekly.txt", at("2026-12-07T05:47:00Z"), false, ""},
		{"claude-text-opus.txt", at("2026-12-07T05:47:00Z"), false, ""},
		{"claude-text-sonnet.txt", at("2026-12-07T05:47:00Z"), false, ""},
		{"claude-text-credits.txt", at("2026-12-06T06:11:00Z"), false, ""},
		{"claude-text-spend.txt", nil, false, ""},
		{"claude-text-berlin.txt", at("2026-12-06T06:47:00Z"), false, ""},
		{"claude-text-newyork.txt", at("2026-12-07T05:47:00Z"), false, ""},
		{"claude-json-session.txt", at("2026-12-06T05:47:00Z"), false, "You've hit your session limit · resets 5:47am (UTC)"},
		{"claude-stream-json-session.txt", at("2026-12-06T05:47:48Z"), true, ""},
		{"claude-apikey-429.txt", nil, false, ""},
		{"claude-apikey-credit.txt", nil, false, "Credit balance is too low"},
		// codex prints its machine's local time, without a zone.
		{"codex-text.txt", at("2026-12-06T08:55:00Z"), false, ""},
		{"codex-json.txt", at("2026-12-09T19:54:00Z"), false, ""},
		{"opencode-429.txt", nil, false, "Error: This request would exceed your account's rate limit. Please try again later."},
	} {
		t.Run(c.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "usagelimit", c.file))
			if err != nil {
				t.Fatal(err)
			}
			got, ok := DetectUsageLimit(b, now, ny)
			if !ok {
				t.Fatalf("not read as a usage limit:\n%s", b)
			}
			if c.line != "" && got.Line != c.line {
				t.Errorf("line %q, want %q", got.Line, c.line)
			}
			switch {
			case c.reset == nil && got.ResetAt != nil:
				t.Errorf("reset %s, want none", got.ResetAt)
			case c.reset != nil && (got.ResetAt == nil || !got.ResetAt.Equal(*c.reset)):
				t.Errorf("reset %v, want %s", got.ResetAt, c.reset)
			}
			if got.Exact != c.exact {
				t.Errorf("exact %v, want %v", got.Exact, c.exact)
			}
		})
	}
}

// An agent that wrote about limits while working, or that failed because
// the service was busy (not the account), is not usage-limited.
func TestOutputThatOnlyMentionsALimitIsNoUsageLimit(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 4, 47, 57, 0, time.UTC)
	for _, out := range []string{
		"added the message `You've hit your session limit` to the parser\nrunning the tests\nFAIL parser_test.go:12\n",
		"API Error: Server is temporarily limiting requests (not your usage limit) · try again\n",
		`{"type":"result","is_error":false,"result":"Done. You've hit your session limit is now handled."}` + "\n",
		"rate limit the client to 10 requests a second\nexit status 1\n",
		// A transient 429, for the runner's rate-limit retries.
		"error: 429 Too Many Requests\n",
		"stream error: last status: 429; retrying\n",
	} {
		if got, ok := DetectUsageLimit([]byte(out), now, time.UTC); ok {
			t.Errorf("read as a usage limit (%+v):\n%s", got, out)
		}
	}
}

func TestAResetTimeOfDayAlreadyPastIsTomorrows(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 23, 50, 0, 0, time.UTC)
	got, ok := DetectUsageLimit([]byte("You've hit your session limit · resets 3am (UTC)\n"), now, time.UTC)
	if !ok || got.ResetAt == nil || !got.ResetAt.Equal(time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)) {
		t.Fatalf("got %+v, want a reset at 03:00 the next day", got)
	}
	if r := got.ResumeAt(); !r.Equal(got.ResetAt.Add(time.Minute)) {
		t.Errorf("resume at %s, want a minute after a minutes-only reset", r)
	}
}

// An agent whose CLI says its account is out is not started again by the
// runner's rate-limit retries (each would fail the same way until the
// reset): the run ends usage-limited, with the reset in its record.
func TestUsageLimitedAgentIsNotRetriedAndItsRunSaysUntilWhen(t *testing.T) {
	t.Parallel()
	for _, fixture := range []string{"claude-stream-json-session.txt", "claude-apikey-429.txt"} {
		t.Run(fixture, func(t *testing.T) { usageLimitedRun(t, fixture) })
	}
}

func usageLimitedRun(t *testing.T, fixture string) {
	root := t.TempDir()
	counter := filepath.Join(root, "starts")
	p := (&harness{}).payload(t, root, "A1")
	p.ExecutorID = "claude"
	p.Argv = []string{"sh", "-c", `echo x >> "$0"; cat "$1"; exit 1`, counter, filepath.Join("testdata", "usagelimit", fixture)}
	abs, _ := filepath.Abs(p.Argv[4])
	p.Argv[4] = abs
	p.RateLimit = RateLimit{Retries: 3, BaseDelayMs: 10, MaxDelayMs: 100}
	code, waits := runInProcess(t, p)
	if code != 1 || len(waits) != 0 {
		t.Fatalf("code %d after %d waits, want 1 and no retry", code, len(waits))
	}
	if b, _ := os.ReadFile(counter); string(b) != "x\n" {
		t.Fatalf("started %q, want once", b)
	}
	rec, err := ReadRecord(p.RuntimePath)
	if err != nil {
		t.Fatal(err)
	}
	switch u := rec.UsageLimit; {
	case u == nil:
		t.Fatalf("record %+v has no usage limit", rec)
	case fixture == "claude-apikey-429.txt" && u.ResetAt != nil:
		t.Fatalf("record usage limit %+v, want no reset (the API key's 429 names none)", u)
	case fixture != "claude-apikey-429.txt" && (u.ResetAt == nil || u.ResetAt.Unix() != 1796536068 || !u.Exact):
		t.Fatalf("record usage limit %+v, want the stream's exact reset", u)
	}
	v := Classify(Facts{Now: time.Now(), Record: rec})
	if v.State != StateUsageLimited || !v.Done || v.UsageLimit == nil {
		t.Fatalf("verdict %+v, want usage-limited", v)
	}
}
