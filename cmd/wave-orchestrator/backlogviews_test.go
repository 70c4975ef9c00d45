package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/dashboard"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

// The backlog view joins the dashboard once the lane has a backlog run
// (or when asked), and comes first while a run is open unless --view
// says otherwise; a wave-only lane keeps its single view.
func TestBacklogViewsJoinTheDashboard(t *testing.T) {
	ctx := context.Background()
	layout := lanes.New(t.TempDir(), ".wave", "", "main")
	views := func(view string) (int, string) {
		cfg := dashboard.Config{}
		backlogViews(ctx, &cfg, &laneEnv{cfg: &config.Config{}, layout: layout}, view)
		return len(cfg.Views), cfg.First
	}
	if n, first := views(""); n != 0 || first != "" {
		t.Fatalf("no backlog run: %d extra views, first %q; want the wave view alone", n, first)
	}
	if n, first := views(viewBacklog); n != 1 || first != viewBacklog {
		t.Fatalf("--view backlog without a run: %d views, first %q", n, first)
	}
	run := filepath.Join(runlog.Root(layout.StateDir), "20260314T120000Z-backlog")
	start := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	if err := jsonfile.Append(filepath.Join(run, runlog.EventsFile), backlog.Event{At: start, Kind: backlog.EvRunStarted,
		Run: &backlog.RunInfo{ID: filepath.Base(run), Lane: "main", StartedAt: start}}); err != nil {
		t.Fatal(err)
	}
	for view, want := range map[string]string{"": viewBacklog, viewWaves: "", viewBacklog: viewBacklog} {
		if n, first := views(view); n != 1 || first != want {
			t.Errorf("open run, --view %q: %d views, first %q, want 1 and %q", view, n, first, want)
		}
	}
	if err := jsonfile.Append(filepath.Join(run, runlog.EventsFile), backlog.Event{At: start, Kind: backlog.EvRunFinished, Outcome: "finished"}); err != nil {
		t.Fatal(err)
	}
	if n, first := views(""); n != 1 || first != "" {
		t.Errorf("finished run: %d views, first %q; want the backlog tab behind the waves", n, first)
	}
}
