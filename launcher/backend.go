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
	*runtime.WatchedRuns
	cancel context.CancelFunc
}

// NewRuntimeRuns starts a watcher for the lane's runs on its tmux socket.
func NewRuntimeRuns(ctx context.Context, l lanes.Layout, self string, logger *slog.Logger) (*RuntimeRuns, error) {
	ctx, cancel := context.WithCancel(ctx)
	tm := tmuxadapter.New(l.Socket(), tmuxadapter.WithLogger(logger))
	return &RuntimeRuns{WatchedRuns: runtime.WatchRuns(ctx, tm, self, logger, 4096), cancel: cancel}, nil
}

// NewBackendRuns is NewRuntimeRuns on another backend (kubernetes).
func NewBackendRuns(ctx context.Context, b runtime.Backend, logger *slog.Logger) *RuntimeRuns {
	ctx, cancel := context.WithCancel(ctx)
	return &RuntimeRuns{WatchedRuns: runtime.WatchRunsOn(ctx, b, logger, 4096), cancel: cancel}
}

// Close stops the watcher. Runs keep going.
func (r *RuntimeRuns) Close() { r.cancel() }

// Terminate implements Runs.
func (r *RuntimeRuns) Terminate(ctx context.Context, runDir string, grace time.Duration, keep bool) error {
	return r.Backend.Terminate(ctx, runDir, grace, keep)
}

// Outcome implements Runs from the runtime's liveness verdict.
func (r *RuntimeRuns) Outcome(ctx context.Context, runDir string, now time.Time) Outcome {
	obs, _ := r.Backend.Observe(ctx, runDir, now)
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
