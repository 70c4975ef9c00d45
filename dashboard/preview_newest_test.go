package dashboard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The selected agent relaunched (with an answer, or as a retry) runs in a
// new run directory: the preview shows that newest run's output, not the
// first run's, without the selection moving.
func TestPreviewShowsTheNewestRunOfTheSelectedAgent(t *testing.T) {
	l := laneWithLogs(t)
	m := press(t, newTestModel(t, Config{}, l, 100, 40), "j")
	if v := m.View(); !strings.Contains(v, "A2 line 60") {
		t.Fatalf("preview of A2's first run:\n%s", v)
	}
	next := filepath.Join(t.TempDir(), "A2-a2.log")
	if err := os.WriteFile(next, []byte("relaunched with the answer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l2 := laneWithLogs(t)
	l2.Waves[0].Agents[1].LogPath, l2.Waves[0].Agents[1].Attempt = next, 2
	m = drive(t, m, StateMsg{Lane: l2})
	if a, _ := m.Selected(); a.ID != "A2" {
		t.Fatalf("selection moved to %s", a.ID)
	}
	v := m.View()
	if !strings.Contains(v, "relaunched with the answer") || strings.Contains(v, "A2 line 60") {
		t.Fatalf("preview after A2's relaunch shows the old run:\n%s", v)
	}
}
