package runtime

import (
	"context"
	"log/slog"

	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// WatchedRuns is a lane's backend with a watcher over the runs it is
// told to watch: what package runs drives for both loops.
type WatchedRuns struct {
	Backend Backend
	watcher *Watcher
	changed chan string
}

// watchingBackend is a backend that also follows the runs it is told
// of (the kubernetes backend mirrors each into its files).
type watchingBackend interface{ Watch(runDir string) }

// WatchRuns starts the watcher of the runs on tm's server; it stops with
// ctx, the runs keep going. Each change's run dir goes to Changed, a
// channel of capacity buf; one that finds it full is dropped, as the
// caller's periodic sweep catches up.
func WatchRuns(ctx context.Context, tm *tmuxadapter.Client, self string, logger *slog.Logger, buf int) *WatchedRuns {
	return WatchRunsOn(ctx, NewTmuxBackend(tm, self, logger), logger, buf)
}

// WatchRunsOn is WatchRuns on any backend.
func WatchRunsOn(ctx context.Context, b Backend, logger *slog.Logger, buf int) *WatchedRuns {
	w := NewWatcher(logger, WithBackend(b))
	r := &WatchedRuns{Backend: b, watcher: w, changed: make(chan string, buf)}
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
				default:
				}
			}
		}
	}()
	return r
}

// Start starts the payloads' runs.
func (r *WatchedRuns) Start(ctx context.Context, ps []*Payload) error {
	return r.Backend.Start(ctx, ps)
}

// Watch adds a run dir to the watcher.
func (r *WatchedRuns) Watch(runDir string) {
	if wb, ok := r.Backend.(watchingBackend); ok {
		wb.Watch(runDir)
	}
	r.watcher.Add(runDir)
}

// Changed delivers the run dirs of watched runs that changed.
func (r *WatchedRuns) Changed() <-chan string { return r.changed }
