package launcher

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// RuntimeRuns is Runs over the tmux runtime backend and its watcher.
type RuntimeRuns struct {
	tm      *tmuxadapter.Client
	backend *runtime.TmuxBackend
	watcher *runtime.Watcher
	changed chan string
	cancel  context.CancelFunc
}

// NewRuntimeRuns starts a watcher for the lane's runs on its tmux socket.
func NewRuntimeRuns(ctx context.Context, l lanes.Layout, self string, logger *slog.Logger) (*RuntimeRuns, error) {
	tm := tmuxadapter.New(l.Socket(), tmuxadapter.WithLogger(logger))
	b := runtime.NewTmuxBackend(tm, self, logger)
	w := runtime.NewWatcher(logger, runtime.WithBackend(b))
	ctx, cancel := context.WithCancel(ctx)
	r := &RuntimeRuns{tm: tm, backend: b, watcher: w, changed: make(chan string, 4096), cancel: cancel}
	go func() { _ = w.Run(ctx) }()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case ch := <-w.Changes():
				select {
				case r.changed <- ch.RunDir:
				default: // the launcher's 1 s sweep catches up
				}
			}
		}
	}()
	return r, nil
}

// Close stops the watcher. Runs keep going.
func (r *RuntimeRuns) Close() { r.cancel() }

// Start implements Runs.
func (r *RuntimeRuns) Start(ctx context.Context, ps []*runtime.Payload) error {
	return r.backend.Start(ctx, ps)
}

// Watch implements Runs.
func (r *RuntimeRuns) Watch(runDir string) { r.watcher.Add(runDir) }

// Changed implements Runs.
func (r *RuntimeRuns) Changed() <-chan string { return r.changed }

// Terminate implements Runs.
func (r *RuntimeRuns) Terminate(ctx context.Context, runDir string, grace time.Duration, keep bool) error {
	return r.backend.Terminate(ctx, runDir, grace, keep)
}

// KillSession implements Runs; a session already gone is fine.
func (r *RuntimeRuns) KillSession(ctx context.Context, name string) error {
	if err := r.tm.KillSession(ctx, name); err != nil && !tmuxadapter.IsGone(err) {
		return err
	}
	return nil
}

// Outcome implements Runs from the runtime's liveness verdict.
func (r *RuntimeRuns) Outcome(ctx context.Context, runDir string, now time.Time) Outcome {
	obs, _ := r.backend.Observe(ctx, runDir, now)
	return outcomeOf(obs)
}

func outcomeOf(obs runtime.Observation) Outcome {
	v := obs.Verdict
	o := Outcome{Done: v.Done, State: string(v.State), ExitCode: v.ExitCode, Signal: v.Signal, Terminate: v.Terminate}
	var detail []string
	if v.Reason != "" {
		detail = append(detail, v.Reason)
	}
	detail = append(detail, v.Warnings...)
	if obs.Err != nil {
		detail = append(detail, obs.Err.Error())
	}
	o.Detail = strings.Join(detail, "; ")
	return o
}

// StartDashboard runs argv in the dashboard session of tm's lane server,
// respawning the pane of one that exists (its clients stay attached) or
// creating it. `launch` and `backlog run` both start their dashboard so.
func StartDashboard(ctx context.Context, tm *tmuxadapter.Client, cwd string, argv []string) error {
	spec := tmuxadapter.SessionSpec{Name: lanes.DashboardSession, Window: lanes.DashboardSession, Argv: argv, Cwd: cwd,
		Width: 200, Height: 50, Options: map[string]string{"@wave_run": "dashboard"}}
	if ok, err := tm.HasSession(ctx, lanes.DashboardSession); err == nil && ok {
		if err := tm.RespawnPane(ctx, spec); err == nil || !tmuxadapter.IsGone(err) {
			return err
		}
	}
	return tm.NewSession(ctx, spec)
}
