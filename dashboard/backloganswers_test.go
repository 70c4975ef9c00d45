package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// A run with nothing left but its workers' questions says in the backlog
// view's header that it waits for their answers, and until when.
func TestBacklogViewShowsTheWaitForAnswers(t *testing.T) {
	v := runningBacklog()
	since := time.Date(2026, 12, 1, 23, 40, 0, 0, time.UTC)
	until := since.Add(time.Hour)
	v.WaitingForAnswers = &backlog.AnswerWait{Since: since, Until: &until, Issues: []int{3, 5}}
	for _, frame := range []string{BacklogFrame(v, true, 200, false, clock),
		newBacklogModel(t, Config{}, &loader{views: []backlog.StatusView{v}}, 200, 40).View()} {
		if !strings.Contains(frame, "waiting for answers to #3 #5 since 2026-12-01T23:40:00Z (until 2026-12-02T00:40:00Z)") {
			t.Errorf("frame lacks the wait for answers:\n%s", frame)
		}
	}
}
