package dashboard

import (
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// TestBacklogShowsTheMergePipeline: the backlog view and `backlog
// status` say what the merge train is verifying, on top of what, and
// what waits; an issue verified on top of others says which.
func TestBacklogShowsTheMergePipeline(t *testing.T) {
	v := runningBacklog()
	line := "merge train: verifying 2 of 4 (#12, #14 on top of #12) · queued 1 (#15) · waiting on checks: #16"
	v.Train = &backlog.TrainView{Parallel: 4, Line: line}
	is := &v.Issues[1]
	is.Verify, is.VerifyAhead = backlog.VerifyRunning, []int{12}
	frame := BacklogFrame(v, true, 200, false, clock)
	if !strings.Contains(frame, line) {
		t.Errorf("the backlog view does not show the merge train:\n%s", frame)
	}
	var b strings.Builder
	RenderBacklogStatus(&b, v)
	if !strings.Contains(b.String(), line+"\n") || !strings.Contains(b.String(), "verify running on top of #12") {
		t.Errorf("backlog status does not show the merge train:\n%s", b.String())
	}
}
