package localagent

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// The simulated worker can stand for an agent CLI whose account is out
// (usage-limit=KIND, while WAVE_ATTEMPT <= limit-attempts, the reset
// reset-in from now) or for an agent that keeps printing without ever
// changing a file (busy-attempts=N): what the supervisor's usage-limit
// pause and no-progress brake are for. The texts are what the pinned CLI
// builds print (claude 2.1.197, codex 0.171.0, opencode 1.18.33).

// Kinds of usage-limit=.
var limitKinds = []string{"claude", "claude-json", "claude-stream-json", "codex", "api-key", "opencode"}

// printUsageLimit prints kind's usage-limit message for a reset at reset.
func printUsageLimit(out io.Writer, kind string, reset time.Time) {
	session := "You've hit your session limit · resets " + claudeClock(reset)
	result := func() string {
		b, _ := json.Marshal(map[string]any{"type": "result", "subtype": "success", "is_error": true, "api_error_status": 429,
			"num_turns": 1, "result": session, "total_cost_usd": 0})
		return string(b)
	}
	switch kind {
	case "claude":
		fmt.Fprintln(out, session)
	case "claude-json":
		fmt.Fprintln(out, result())
	case "claude-stream-json":
		b, _ := json.Marshal(map[string]any{"type": "rate_limit_event", "rate_limit_info": map[string]any{"status": "rejected",
			"resetsAt": reset.Unix(), "rateLimitType": "five_hour", "isUsingOverage": false}})
		fmt.Fprintln(out, string(b))
		fmt.Fprintln(out, result())
	case "codex":
		fmt.Fprintln(out, "ERROR: You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit "+
			"https://chatgpt.com/codex/settings/usage to purchase more credits or try again at "+reset.Local().Format("3:04 PM")+".")
	case "api-key":
		fmt.Fprintln(out, "API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again later.")
	case "opencode":
		fmt.Fprintln(out, "Error: This request would exceed your account's rate limit. Please try again later.")
	}
}

// claudeClock is a reset as claude prints it: "3:54am (UTC)", "3am
// (UTC)" on the hour.
func claudeClock(t time.Time) string {
	t = t.UTC()
	minutes := ""
	if t.Minute() != 0 {
		minutes = t.Format(":04")
	}
	return t.Format("3") + minutes + strings.ToLower(t.Format("PM")) + " (UTC)"
}

// busy prints a line every tenth of a second for ever, changing nothing.
func busy(out io.Writer, issue int) {
	for i := 1; ; i++ {
		fmt.Fprintf(out, "[local-worker] still thinking about #%d (%d)\n", issue, i)
		time.Sleep(100 * time.Millisecond)
	}
}

// resetIn is reset-in, 3 s by default.
func resetIn(d time.Duration) time.Duration {
	if d <= 0 {
		return 3 * time.Second
	}
	return d
}
