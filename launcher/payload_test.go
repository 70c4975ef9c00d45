package launcher

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// TestAgentDeadlineComesFromTheRealClock: launch.json's deadline is read
// by the runner, another process on the real clock, so it is counted
// from the real clock whatever the launcher's own clock says; one from a
// clock two days back would have the runner stop the agent at once.
func TestAgentDeadlineComesFromTheRealClock(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "wave.config.yaml"), []byte("executors:\n  default: local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(root, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	lane, err := cfg.Lane(root, "main")
	if err != nil {
		t.Fatal(err)
	}
	w := &wave.Wave{Number: 0, Agents: []wave.Agent{{ID: "A1"}}}
	p, err := plan(w, lane, "", "")
	if err != nil {
		t.Fatal(err)
	}
	past := func() time.Time { return time.Now().Add(-48 * time.Hour) }
	l := &Launcher{opt: Options{Lane: lane, Layout: lanes.New(root, lane.StateRoot, "p", lane.Name), Self: "/bin/true", TimeoutMinutes: 30}, now: past}
	r := &waveRun{l: l, p: p, n: 0}
	pl, err := r.payload("A1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if pl.DeadlineAt == nil || !pl.DeadlineAt.After(time.Now()) {
		t.Fatalf("launch.json deadline %v is not ahead of the real clock", pl.DeadlineAt)
	}
}
