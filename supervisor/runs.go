package supervisor

import (
	"context"
	"log/slog"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// Runs is what the supervisor needs of the runtime: start worker runs,
// hear when one changes, observe and terminate them.
type Runs interface {
	Start(ctx context.Context, ps []*runtime.Payload) error
	Watch(runDir string)
	Changed() <-chan string
	Observe(ctx context.Context, runDir string, now time.Time) runtime.Observation
	Terminate(ctx context.Context, runDir string, grace time.Duration) error
	KillSession(ctx context.Context, name string) error
}

// TmuxRuns runs workers on the lane's tmux server, watched with fsnotify.
type TmuxRuns struct{ *runtime.WatchedRuns }

// NewTmuxRuns starts a watcher for worker runs on the lane's socket; it
// stops with ctx. Runs keep going.
func NewTmuxRuns(ctx context.Context, l lanes.Layout, self string, logger *slog.Logger) *TmuxRuns {
	tm := tmuxadapter.New(l.Socket(), tmuxadapter.WithLogger(logger))
	return &TmuxRuns{runtime.WatchRuns(ctx, tm, self, logger, 256)}
}

// Observe implements Runs.
func (r *TmuxRuns) Observe(ctx context.Context, runDir string, now time.Time) runtime.Observation {
	obs, _ := r.Backend.Observe(ctx, runDir, now)
	return obs
}

// Terminate implements Runs: TERM, grace, KILL; the session is killed.
func (r *TmuxRuns) Terminate(ctx context.Context, runDir string, grace time.Duration) error {
	return r.Backend.Terminate(ctx, runDir, grace, false)
}
