package launcher

import (
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

// A stop asked through RequestStop is the one a running launcher sees at
// its next look.
func TestRequestStopIsWhatTheLauncherLooksFor(t *testing.T) {
	root := t.TempDir()
	layout := lanes.New(root, "", "p", "main")
	if stopRequested(layout.ControlPath()) {
		t.Fatal("a stop is requested before anyone asked")
	}
	if err := RequestStop(layout); err != nil {
		t.Fatal(err)
	}
	if !stopRequested(layout.ControlPath()) {
		t.Fatalf("RequestStop wrote no request the launcher sees at %s", layout.ControlPath())
	}
}
