package dashboard

import (
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// TestBacklogShowsReworkRounds: an issue sent back for rework says so in
// its note (with the feedback, escaped) while its worker reworks, and the
// selection line counts its rounds.
func TestBacklogShowsReworkRounds(t *testing.T) {
	v := runningBacklog()
	is := &v.Issues[1] // #15, running
	is.Reworks, is.ReworkFrom, is.Feedback = 1, backlog.ReworkVerify, "The verify step failed: \x1b[31mTestCart\x1b[0m"
	frame := BacklogFrame(v, true, 200, false, clock)
	if strings.ContainsAny(frame, "\x1b") {
		t.Fatalf("raw escapes in the frame: %q", frame)
	}
	if !strings.Contains(frame, "rework 1: The verify step failed:") {
		t.Errorf("the reworking issue's note does not say its round:\n%s", frame)
	}
	m := newBacklogModel(t, Config{}, &loader{views: []backlog.StatusView{v}}, 200, 40)
	if f := m.View(); !strings.Contains(f, "1 rework round (verify)") {
		t.Errorf("the selected issue does not show its rework round:\n%s", f)
	}
}
