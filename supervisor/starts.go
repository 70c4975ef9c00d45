package supervisor

import (
	"context"
	"errors"
	"slices"

	"github.com/wave-orchestrator/wave-orchestrator/internal/coalesce"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// The run starts of the jobs (jobs.go), which prepare their workers side
// by side, are coalesced: while one Runs.Start runs, the runs whose jobs
// got to their start meanwhile wait and then start together, in one
// Start (one tmux call for all their sessions, after one look for stale
// sessions under their names). No job waits for a batch to fill: a start
// asked for while none runs goes at once.
type starts = coalesce.Queue[*runtime.Payload, error]

// startRun clears what an earlier run left under p's names and starts p,
// in the next batch.
func (s *Supervisor) startRun(ctx context.Context, p *runtime.Payload) error {
	return s.starts.Do(ctx, p)
}

// startBatch starts a batch's runs. A batch stops at its first session
// that fails to start, and the runs after it did not start either: each
// of those is started again alone, so one bad run fails only itself.
func (s *Supervisor) startBatch(ctx context.Context, batch []*runtime.Payload) []error {
	_ = s.o.Runs.DiscardAll(ctx, batch)
	err := s.o.Runs.Start(ctx, batch)
	var se *runtime.StartError
	// Known started: tmux listed the sessions that came up.
	listed := errors.As(err, &se) && len(se.NotStarted) > 0
	errs := make([]error, len(batch))
	for i, p := range batch {
		switch {
		case err == nil, listed && !slices.Contains(se.NotStarted, p.RunDir):
		case len(batch) > 1:
			errs[i] = s.o.Runs.Start(ctx, []*runtime.Payload{p})
		default:
			errs[i] = err
		}
	}
	return errs
}
