package supervisor

import (
	"context"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// Runs is what the supervisor needs of the lane's agent runs (package
// runs provides them on the lane's backend): start worker and reviewer
// runs, hear when one changes, observe and terminate them, and clear what
// an earlier run left under a payload's names.
type Runs interface {
	Start(ctx context.Context, ps []*runtime.Payload) error
	Watch(runDir string)
	Changed() <-chan string
	Observe(ctx context.Context, runDir string, now time.Time) runtime.Observation
	Terminate(ctx context.Context, runDir string, grace time.Duration, keep bool) error
	Discard(ctx context.Context, p *runtime.Payload) error
	// DiscardAll is Discard for many finished runs at once (the end).
	DiscardAll(ctx context.Context, ps []*runtime.Payload) error
}
