package config

import (
	"path/filepath"
	"testing"
)

// A lane's setting is traced to the line that set it, its own section
// before the top level; a variable beats the file; a default has none.
func TestLaneKeySourceNamesTheLineThatSetIt(t *testing.T) {
	dir := yamlRepo(t, "runtime:\n  timeoutMinutes: 30\npaths:\n  wavesDir: w\nlanes:\n  side:\n    paths:\n      wavesDir: side/w\n")
	file := filepath.Join(dir, "wave.config.yaml")
	c := mustLoad(t, dir, nil)
	if got, want := c.LaneKeySource("side", "paths.wavesDir"), file+":8 lanes.side.paths.wavesDir"; got != want {
		t.Errorf("lane section: %q, want %q", got, want)
	}
	if got, want := c.LaneKeySource("main", "paths.wavesDir"), file+":4 paths.wavesDir"; got != want {
		t.Errorf("lane without its own: %q, want %q", got, want)
	}
	if got, want := c.LaneKeySource("main", "runtime.timeoutMinutes"), file+":2 runtime.timeoutMinutes"; got != want {
		t.Errorf("top level: %q, want %q", got, want)
	}
	if got := c.LaneKeySource("main", "runtime.heartbeatIntervalMs"); got != "" {
		t.Errorf("default: %q, want none", got)
	}
	env := mustLoad(t, dir, map[string]string{"WAVE_RUNTIME_TIMEOUT_MINUTES": "9"})
	if got, want := env.LaneKeySource("main", "runtime.timeoutMinutes"), "env WAVE_RUNTIME_TIMEOUT_MINUTES"; got != want {
		t.Errorf("variable: %q, want %q", got, want)
	}
}
