package state

import (
	"os"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

// A live launcher whose lock body is garbage still holds the lane: its
// open wave run is running (not interrupted) and the unreadable body is
// reported.
func TestLoadLiveLauncherWithUnreadableLockBody(t *testing.T) {
	l := lanes.New(t.TempDir(), ".wave", "p", "main")
	if err := Append(l.EventsPath(), NewEvent("main", 0, EntityWaveRun, "wave-0", "started", 0, Data(started("A1")))); err != nil {
		t.Fatal(err)
	}
	lk, err := lanes.AcquireLock(l.LockPath())
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release()
	if err := os.WriteFile(l.LockPath(), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Load(l, nil, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Launcher == nil || !got.Launcher.Alive || got.Waves[0].Status != WaveRunning {
		t.Fatalf("launcher %+v, wave status %s", got.Launcher, got.Waves[0].Status)
	}
	if len(got.Problems) != 1 || !strings.Contains(got.Problems[0], "unreadable lock body") {
		t.Fatalf("problems %v", got.Problems)
	}
}
