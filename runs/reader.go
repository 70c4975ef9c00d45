package runs

import (
	"context"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// Reader judges a lane's runs from their records without watching,
// starting or stopping any: what the read models (`status`, the
// dashboard) need. A tmux run is also looked for on the lane's server; a
// kubernetes run's records are its launcher's mirror, read as they are.
type Reader struct{ b *runtime.TmuxBackend }

// NewReader reads the runs of layout's lane.
func NewReader(layout lanes.Layout) Reader {
	return Reader{runtime.NewTmuxBackend(tmuxadapter.New(layout.Socket()), "", nil)}
}

// Observe reads one run's records and liveness as of now.
func (r Reader) Observe(ctx context.Context, runDir string, now time.Time) (runtime.Observation, error) {
	return r.b.Observe(ctx, runDir, now)
}
