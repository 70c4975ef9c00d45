package localagent

import (
	"bytes"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// What the simulated worker prints for each CLI is read as that CLI's
// usage limit, with the reset it names (to the minute where the CLI
// prints minutes, to the second in claude's stream-json).
func TestTheSimulatedLimitsReadAsTheCLIsOwn(t *testing.T) {
	now := time.Date(2026, 12, 6, 4, 47, 57, 0, time.UTC)
	reset := now.Add(65 * time.Minute)
	for _, kind := range limitKinds {
		var b bytes.Buffer
		printUsageLimit(&b, kind, reset)
		got, ok := runtime.DetectUsageLimit(b.Bytes(), now, time.Local)
		if !ok {
			t.Errorf("%s: %q is not read as a usage limit", kind, b.String())
			continue
		}
		switch kind {
		case "api-key", "opencode":
			if got.ResetAt != nil {
				t.Errorf("%s names no reset, read %s", kind, got.ResetAt)
			}
		case "claude-stream-json":
			if got.ResetAt == nil || !got.ResetAt.Equal(reset) {
				t.Errorf("%s: reset %v, want %s", kind, got.ResetAt, reset)
			}
		default:
			if got.ResetAt == nil || !got.ResetAt.Equal(reset.Truncate(time.Minute)) {
				t.Errorf("%s: reset %v, want %s", kind, got.ResetAt, reset.Truncate(time.Minute))
			}
		}
	}
}
