package runs

import (
	"context"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// StartDashboard runs argv in the dashboard session of the lane's tmux
// server (on every backend: the dashboard runs here), respawning the pane
// of one that exists (its clients stay attached) or creating it.
// `launch` and `backlog run` both start their dashboard so.
func StartDashboard(ctx context.Context, layout lanes.Layout, cwd string, argv []string) error {
	tm := tmuxadapter.New(layout.Socket())
	spec := tmuxadapter.SessionSpec{Name: lanes.DashboardSession, Window: lanes.DashboardSession, Argv: argv, Cwd: cwd,
		Width: 200, Height: 50, Options: map[string]string{"@wave_run": "dashboard"}}
	if ok, err := tm.HasSession(ctx, lanes.DashboardSession); err == nil && ok {
		if err := tm.RespawnPane(ctx, spec); err == nil || !tmuxadapter.IsGone(err) {
			return err
		}
	}
	return tm.NewSession(ctx, spec)
}
