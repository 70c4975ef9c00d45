package lanes

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The lane's waves are its numbered wave directories, in numeric order;
// stray files and names are not waves, and a lane that never ran has none.
func TestWavesAreTheNumberedWaveDirectoriesInOrder(t *testing.T) {
	l := Layout{StateDir: t.TempDir(), Lane: "main"}
	if ws, err := l.Waves(); err != nil || ws != nil {
		t.Fatalf("fresh lane: %v, %v; want none", ws, err)
	}
	for _, n := range []int{10, 2, 0} {
		if err := os.MkdirAll(l.WaveDir(n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, stray := range []string{"notes", "-1"} {
		if err := os.MkdirAll(filepath.Join(l.StateDir, "waves", stray), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(l.StateDir, "waves", "3"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if ws, err := l.Waves(); err != nil || !slices.Equal(ws, []int{0, 2, 10}) {
		t.Errorf("waves %v, %v; want [0 2 10]", ws, err)
	}
}
