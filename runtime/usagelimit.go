package runtime

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"regexp"
)

// UsageLimit is what an agent CLI said when its account ran out: the
// subscription's session or weekly limit, spent usage credits, a monthly
// spend cap, an API key's 429 after the CLI's own retries, a credit
// balance too low. Such a run did not fail at its work: it could not
// work, and a relaunch before the limit resets would fail the same way
// (docs/run-records.md, "usage-limited").
type UsageLimit struct {
	// Line is the CLI's words, one line, bounded.
	Line string `json:"line"`
	// ResetAt is when the limit resets, when the CLI said (nil: it did
	// not; the caller backs off). Exact: to the second (claude's
	// stream-json event); otherwise the CLI printed minutes only, and
	// the limit may last up to a minute past ResetAt.
	ResetAt *time.Time `json:"resetAt,omitempty"`
	Exact   bool       `json:"exact,omitempty"`
}

// ResumeAt is when a run held by this limit may start again: the reset,
// a minute later when the CLI printed minutes only; zero when no reset
// is known.
func (u UsageLimit) ResumeAt() time.Time {
	switch {
	case u.ResetAt == nil:
		return time.Time{}
	case u.Exact:
		return u.ResetAt.Add(time.Second)
	}
	return u.ResetAt.Add(time.Minute)
}

// The end of a start's output searched for a usage-limit message: a CLI
// prints it last, but claude's stream-json puts a few long lines (the
// synthetic assistant message, the result) after its rate-limit event.
const (
	usageTailBytes = 16 << 10
	usageTailLines = 12
	maxLimitLine   = 240
)

// The CLIs' own words. Each is anchored at the start of a line (after a
// CLI's prefix): an agent that merely printed such a sentence mid-line
// while working (say, while writing a usage-limit parser) is not limited.
var (
	// Claude Code's subscriber and API-key texts, and codex's ("You’ve",
	// with a curly apostrophe, after "ERROR: ").
	limitLineRe = regexp.MustCompile(`^(?:ERROR: |■ )?(?:You['’]ve hit your |You['’]ve reached your |You['’]re out of (?:usage credits|extra usage|credits)|Your org is out of usage|API Error: Request rejected \(429\)|Credit balance is too low)`)
	// OpenCode prints the provider's message after "Error: " once its
	// own retries are spent.
	// Its own lower-case "error: 429 Too Many Requests" and the like are
	// transient, left to the runner's rate-limit retries.
	opencodeLimitRe = regexp.MustCompile(`^Error: (?i:.*(?:rate limit|usage limit|exceeded your current quota|credit balance is too low|insufficient_quota))`)
	claudeResetRe   = regexp.MustCompile(` · resets (.+?)(?: · |$)`)
	codexAtRe       = regexp.MustCompile(`try again at (.+?)\.?$`)
	codexInRe       = regexp.MustCompile(`try again in ((?:\d+ (?:days?|hours?|minutes?|seconds?) ?)+)`)
	ansiRe          = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)
)

// DetectUsageLimit looks at the end of an agent's output (tail, as the
// pty gave it) for the usage-limit message of a known CLI, and parses the
// reset time it names. now is when the agent exited; local is the zone a
// time without one is in (codex prints its machine's local time).
func DetectUsageLimit(tail []byte, now time.Time, local *time.Location) (UsageLimit, bool) {
	var found UsageLimit
	var ok bool
	var epoch *time.Time // claude stream-json's exact reset
	for _, raw := range bytes.Split(lastLines(tail, usageTailBytes, usageTailLines), []byte{'\n'}) {
		line := strings.TrimSpace(ansiRe.ReplaceAllString(string(raw), ""))
		if line == "" {
			continue
		}
		text := line
		if line[0] == '{' {
			var isLimit bool
			text, isLimit = jsonLimitText(line, &epoch)
			if !isLimit {
				continue
			}
		}
		if !limitLineRe.MatchString(text) && !opencodeLimitRe.MatchString(text) {
			continue
		}
		found, ok = UsageLimit{Line: boundLine(text)}, true
		if at, parsed := resetOf(text, now, local); parsed {
			found.ResetAt = &at
		}
	}
	if ok && epoch != nil {
		found.ResetAt, found.Exact = epoch, true
	}
	return found, ok
}

// jsonLimitText is the text of a JSON event line that reports an error
// (claude's is_error result, codex's error and turn.failed events); a
// claude rate_limit_event that rejected the request leaves its exact
// reset in *epoch.
func jsonLimitText(line string, epoch **time.Time) (string, bool) {
	var ev struct {
		Type    string `json:"type"`
		IsError bool   `json:"is_error"`
		Result  string `json:"result"`
		Message string `json:"message"`
		Error   *struct {
			Message string `json:"message"`
		} `json:"error"`
		Info *struct {
			Status   string `json:"status"`
			ResetsAt int64  `json:"resetsAt"`
		} `json:"rate_limit_info"`
	}
	if json.Unmarshal([]byte(line), &ev) != nil {
		return "", false
	}
	switch {
	case ev.Type == "rate_limit_event" && ev.Info != nil && ev.Info.Status == "rejected" && ev.Info.ResetsAt > 0:
		t := time.Unix(ev.Info.ResetsAt, 0)
		*epoch = &t
	case ev.Type == "result" && ev.IsError:
		return ev.Result, true
	case ev.Type == "error":
		return ev.Message, true
	case ev.Type == "turn.failed" && ev.Error != nil:
		return ev.Error.Message, true
	}
	return "", false
}

func boundLine(s string) string {
	if len(s) <= maxLimitLine {
		return s
	}
	cut := maxLimitLine
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// resetOf parses the reset a limit line names: claude's "· resets
// 3:54am (UTC)" or "· resets Dec 9, 2:54pm (UTC)", codex's "try again at
// 3:55 AM." or "try again at Mar 18th, 2026 4:51 PM." (its machine's
// local time) or "try again in 2 hours 5 minutes.".
func resetOf(line string, now time.Time, local *time.Location) (time.Time, bool) {
	if m := claudeResetRe.FindStringSubmatch(line); m != nil {
		return parseClaudeReset(m[1], now)
	}
	if m := codexInRe.FindStringSubmatch(line); m != nil {
		return now.Add(parseSpan(m[1])), true
	}
	if m := codexAtRe.FindStringSubmatch(line); m != nil {
		return parseCodexReset(m[1], now, local)
	}
	return time.Time{}, false
}

// parseClaudeReset reads "3:54am (UTC)", "3am (Europe/Berlin)", "Dec 9,
// 2:54pm (UTC)" or "Jan 2, 2027, 3pm (UTC)". A zone Go cannot load leaves
// the reset unknown (the caller backs off) rather than guessed.
func parseClaudeReset(s string, now time.Time) (time.Time, bool) {
	s = strings.TrimSpace(s)
	loc := time.UTC
	if i := strings.LastIndexByte(s, '('); i >= 0 && strings.HasSuffix(s, ")") {
		l, err := time.LoadLocation(s[i+1 : len(s)-1])
		if err != nil {
			return time.Time{}, false
		}
		loc, s = l, strings.TrimSpace(s[:i])
	} else {
		loc = now.Location()
	}
	s = strings.ToUpper(s) // "3:54AM": Go's layouts want the upper case
	for _, layout := range []string{"3:04PM", "3PM"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return nextClock(t, now.In(loc)), true
		}
	}
	for _, layout := range []string{"Jan 2, 2006, 3:04PM", "Jan 2, 2006, 3PM"} {
		if t, err := time.ParseInLocation(layout, titleMonth(s), loc); err == nil {
			return t, true
		}
	}
	for _, layout := range []string{"Jan 2, 3:04PM", "Jan 2, 3PM"} {
		if t, err := time.ParseInLocation(layout, titleMonth(s), loc); err == nil {
			return inYear(t, now.In(loc)), true
		}
	}
	return time.Time{}, false
}

// parseCodexReset reads "3:55 AM" or "Mar 18th, 2026 4:51 PM" in local.
func parseCodexReset(s string, now time.Time, local *time.Location) (time.Time, bool) {
	if local == nil {
		local = time.Local
	}
	s = strings.TrimSpace(s)
	if t, err := time.ParseInLocation("3:04 PM", s, local); err == nil {
		return nextClock(t, now.In(local)), true
	}
	// Drop the day's ordinal suffix: "18th" → "18".
	fields := strings.Fields(s)
	if len(fields) >= 2 {
		d := strings.TrimRight(fields[1], ",")
		d = strings.TrimRight(d, "stndrh")
		fields[1] = d + ","
	}
	if t, err := time.ParseInLocation("Jan 2, 2006 3:04 PM", strings.Join(fields, " "), local); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// titleMonth turns an upper-cased "DEC 9, …" back into what Go's month
// layout reads ("Dec").
func titleMonth(s string) string {
	if len(s) < 3 {
		return s
	}
	return s[:1] + strings.ToLower(s[1:3]) + s[3:]
}

// nextClock is the next time at t's clock reading on or after now's day:
// today, or tomorrow when that moment passed more than a minute ago.
func nextClock(t, now time.Time) time.Time {
	at := time.Date(now.Year(), now.Month(), now.Day(), t.Hour(), t.Minute(), 0, 0, now.Location())
	if at.Before(now.Add(-time.Minute)) {
		at = at.AddDate(0, 0, 1)
	}
	return at
}

// inYear puts a date read without a year in now's year, or the next one
// when it lies more than a day back.
func inYear(t, now time.Time) time.Time {
	at := time.Date(now.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), 0, 0, now.Location())
	if at.Before(now.Add(-24 * time.Hour)) {
		at = at.AddDate(1, 0, 0)
	}
	return at
}

// parseSpan reads "4 days 2 hours", "2 hours 5 minutes".
func parseSpan(s string) time.Duration {
	var d time.Duration
	f := strings.Fields(s)
	for i := 0; i+1 < len(f); i += 2 {
		n, err := strconv.Atoi(f[i])
		if err != nil {
			continue
		}
		unit := time.Second
		switch {
		case strings.HasPrefix(f[i+1], "day"):
			unit = 24 * time.Hour
		case strings.HasPrefix(f[i+1], "hour"):
			unit = time.Hour
		case strings.HasPrefix(f[i+1], "minute"):
			unit = time.Minute
		}
		d += time.Duration(n) * unit
	}
	return d
}

// UsageBackoff is how long an executor is paused after its k-th (0-based)
// usage limit that named no reset: 5 minutes doubling, capped at an hour.
// Backlog and wave mode both wait it.
func UsageBackoff(k int) time.Duration {
	return min(5*time.Minute<<min(k, 8), time.Hour)
}

// usageLimitNotice is the runner's line in the log for a run that ended
// on its account's limit.
func usageLimitNotice(executor string, u UsageLimit) string {
	when := "no reset time given"
	if u.ResetAt != nil {
		when = "resets " + u.ResetAt.Format(time.RFC3339)
	}
	return "[wave] " + executor + " usage limit (" + when + "): not retried; the run waits for the reset"
}
