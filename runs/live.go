package runs

import (
	"path/filepath"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// Live is the lane's wave runs still launching or running, of agent
// only when it is not empty, whatever backend each is on. Run records,
// not events, say what is in flight: a run whose launcher died before
// recording it is still found.
func Live(layout lanes.Layout, agent string) []*runtime.Record {
	dirs, _ := filepath.Glob(filepath.Join(layout.StateDir, "waves", "*", "runs", "*"))
	var live []*runtime.Record
	for _, d := range dirs {
		rec, err := runtime.ReadRecord(filepath.Join(d, lanes.RuntimeFile))
		if err != nil || agent != "" && rec.AgentID != agent {
			continue
		}
		if rec.TerminalDisposition == runtime.Running || rec.TerminalDisposition == runtime.Launching {
			live = append(live, rec)
		}
	}
	return live
}
