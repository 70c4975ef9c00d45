package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// A supervisor waiting out a transient failure says so in the backlog
// view's header, with the cause and since when.
func TestBacklogViewShowsTheWait(t *testing.T) {
	v := runningBacklog()
	since := time.Date(2026, 12, 1, 21, 40, 5, 0, time.UTC)
	v.Waiting = &backlog.Waiting{Cause: "origin unreachable", Since: since, Tries: 3, GiveUpAt: since.Add(30 * time.Minute),
		Detail: "fetch from origin: \x1b[31mgone"}
	for _, frame := range []string{BacklogFrame(v, true, 200, false, clock),
		newBacklogModel(t, Config{}, &loader{views: []backlog.StatusView{v}}, 200, 40).View()} {
		if !strings.Contains(frame, "waiting: origin unreachable since 2026-12-01T21:40:05Z") {
			t.Errorf("frame lacks the wait:\n%s", frame)
		}
		if strings.Contains(frame, "\x1b[31m") {
			t.Errorf("raw escape from the detail in the frame: %q", frame)
		}
	}
}
