package dashboard

import (
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// The final PR of a local run is a file path often longer than the
// window: the end frame shows it whole, on lines of its own.
func TestBacklogEndFrameShowsTheWholeFinalPRPath(t *testing.T) {
	v := finishedBacklog()
	path := "/tmp/tmp.bMxne46s87/repo/.wave/backlog-local/prs/wave_2026-12-01-backlog-with-a-long-slug--main.md"
	v.FinalPR = &backlog.PRRef{URL: path}
	frame := BacklogFrame(v, true, 80, false, clock)
	for _, l := range strings.Split(frame, "\n") {
		if w := len([]rune(l)); w > 80 {
			t.Errorf("line wider than 80 columns (%d): %q", w, l)
		}
	}
	if joined := strings.ReplaceAll(frame, "\n", ""); !strings.Contains(joined, "final PR: "+path) {
		t.Errorf("the final PR path is not whole in the frame:\n%s", frame)
	}
}

func TestBacklogNoteNamesFilesOutsideTheSurface(t *testing.T) {
	is := issueView(3, "Parser", backlog.StateMerged)
	is.Outside = []string{".github/workflows/x.yml"}
	if got := noteCell(is, false); got != "outside its surface: .github/workflows/x.yml" {
		t.Errorf("note = %q", got)
	}
	stopped := issueView(4, "Paused", backlog.ViewStopped)
	if got := outputAge(stopped, 0); got != "-" {
		t.Errorf("a stopped worker's output age = %q, want -", got)
	}
}
