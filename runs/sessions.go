package runs

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// StartDashboard runs argv in the dashboard session of the lane's tmux
// server (on every backend: the dashboard runs here), respawning the pane
// of one that exists (its clients stay attached) or creating it.
// `launch` and `backlog run` both start their dashboard so.
func StartDashboard(ctx context.Context, layout lanes.Layout, cwd string, argv []string) error {
	return startSession(ctx, layout, tmuxadapter.SessionSpec{Name: lanes.DashboardSession, Window: lanes.DashboardSession,
		Argv: argv, Cwd: cwd, Width: 200, Height: 50, Options: map[string]string{"@wave_run": "dashboard"}})
}

// StartWatcher runs argv, the lane's submitted-run watcher, in the
// launcher session of the lane's tmux server, replacing the dead pane a
// finished watcher left there: it survives the exit of the shell that
// submitted, and `tmux attach -t launcher` shows its launchers' console.
func StartWatcher(ctx context.Context, layout lanes.Layout, cwd string, argv []string) error {
	return startSession(ctx, layout, tmuxadapter.SessionSpec{Name: lanes.LauncherSession, Window: lanes.LauncherSession,
		Argv: argv, Cwd: cwd, Width: 200, Height: 50,
		Options: map[string]string{"@wave_run": lanes.LauncherSession, "@wave_lane": layout.Lane}})
}

// startSession respawns the pane of the session that exists (its
// clients stay attached) or creates it.
func startSession(ctx context.Context, layout lanes.Layout, spec tmuxadapter.SessionSpec) error {
	tm := tmuxadapter.New(layout.Socket())
	if ok, err := tm.HasSession(ctx, spec.Name); err == nil && ok {
		if err := tm.RespawnPane(ctx, spec); err == nil || !tmuxadapter.IsGone(err) {
			return err
		}
	}
	return tm.NewSession(ctx, spec)
}

// KillSessions kills every session on the lane's tmux server but those
// named in keep (the runs' sessions are terminated first; these are what
// is left: of runs already over, or kept), with one list and one batched
// kill. No tmux server, or no tmux at all, is nothing to kill.
func KillSessions(ctx context.Context, layout lanes.Layout, keep ...string) error {
	tm := tmuxadapter.New(layout.Socket())
	ss, err := tm.ListSessions(ctx)
	if err != nil {
		if tmuxadapter.IsGone(err) || errors.Is(err, tmuxadapter.ErrBinaryMissing) {
			return nil
		}
		return fmt.Errorf("list sessions on tmux socket %s: %w", tm.Socket(), err)
	}
	var names []string
	for _, s := range ss {
		if !slices.Contains(keep, s.Name) {
			names = append(names, s.Name)
		}
	}
	if err := tm.KillSessions(context.WithoutCancel(ctx), names); err != nil {
		return fmt.Errorf("kill %d session(s) on tmux socket %s: %w", len(names), tm.Socket(), err)
	}
	return nil
}
