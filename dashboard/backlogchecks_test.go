package dashboard

import (
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// TestBacklogShowsAnIssueWaitingOnItsChecks: a queued issue whose
// required CI checks are pending says so in the table, and `backlog
// status` says since when and which.
func TestBacklogShowsAnIssueWaitingOnItsChecks(t *testing.T) {
	v := runningBacklog()
	is := &v.Issues[1]
	is.Checks = &backlog.ChecksState{Commit: "abc123", Outcome: backlog.ChecksPending, Detail: "pending: ci", Since: clock}
	frame := BacklogFrame(v, true, 200, false, clock)
	if !strings.Contains(frame, "CHECKS") || !strings.Contains(frame, "pending") {
		t.Errorf("the table does not show the pending checks:\n%s", frame)
	}
	var b strings.Builder
	RenderBacklogStatus(&b, v)
	if !strings.Contains(b.String(), "checks pending since ") || !strings.Contains(b.String(), "(pending: ci)") {
		t.Errorf("backlog status does not show the pending checks:\n%s", b.String())
	}
}

// An issue whose worker waits for its executor's usage limit to reset is
// drawn yellow, as waiting, not dim as if nothing held it.
func TestABacklogIssuePausedByAUsageLimitIsDrawnWaiting(t *testing.T) {
	v := runningBacklog()
	is := &v.Issues[1]
	is.State, is.LastOutputSec = backlog.ViewPaused, nil
	frame := BacklogFrame(v, true, 200, true, clock)
	p := newPalette(true)
	if !strings.Contains(frame, p.warn.pre+backlog.ViewPaused+" ") {
		t.Errorf("the paused issue is not drawn waiting (%q):\n%q", p.warn.pre, frame)
	}
}
