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
type TmuxRuns struct {
	tm      *tmuxadapter.Client
	backend *runtime.TmuxBackend
	watcher *runtime.Watcher
	changed chan string
}

// NewTmuxRuns starts a watcher for worker runs on the lane's socket; it
// stops with ctx. Runs keep going.
func NewTmuxRuns(ctx context.Context, l lanes.Layout, self string, logger *slog.Logger) *TmuxRuns {
	tm := tmuxadapter.New(l.Socket(), tmuxadapter.WithLogger(logger))
	b := runtime.NewTmuxBackend(tm, self, logger)
	w := runtime.NewWatcher(logger, runtime.WithBackend(b))
	r := &TmuxRuns{tm: tm, backend: b, watcher: w, changed: make(chan string, 256)}
	go func() { _ = w.Run(ctx) }()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case ch, ok := <-w.Changes():
				if !ok {
					return
				}
				select {
				case r.changed <- ch.RunDir:
				default: // the supervisor's sweep catches up
				}
			}
		}
	}()
	return r
}

// Start implements Runs.
func (r *TmuxRuns) Start(ctx context.Context, ps []*runtime.Payload) error {
	return r.backend.Start(ctx, ps)
}

// Watch implements Runs.
func (r *TmuxRuns) Watch(runDir string) { r.watcher.Add(runDir) }

// Changed implements Runs.
func (r *TmuxRuns) Changed() <-chan string { return r.changed }

// Observe implements Runs.
func (r *TmuxRuns) Observe(ctx context.Context, runDir string, now time.Time) runtime.Observation {
	obs, _ := r.backend.Observe(ctx, runDir, now)
	return obs
}

// Terminate implements Runs: TERM, grace, KILL; the session is killed.
func (r *TmuxRuns) Terminate(ctx context.Context, runDir string, grace time.Duration) error {
	return r.backend.Terminate(ctx, runDir, grace, false)
}

// KillSession implements Runs; a session already gone is fine.
func (r *TmuxRuns) KillSession(ctx context.Context, name string) error {
	if err := r.tm.KillSession(ctx, name); err != nil && !tmuxadapter.IsGone(err) {
		return err
	}
	return nil
}
