package runtime

import (
	"context"
	"os"
	"path/filepath"
	"time"
)

// Reporter publishes what the runner writes to runtime.json somewhere
// else as well: a kubernetes run's launcher is on another machine, so the
// runner renews the run's Lease with its record and leaves its terminal
// record in the container's termination message (package kube).
type Reporter interface {
	// Report publishes a live record (the first, every heartbeat, every
	// change). It must return within a few seconds.
	Report(ctx context.Context, rec Record) error
	// Final publishes the terminal record and status, before the runner
	// exits.
	Final(ctx context.Context, rec Record, st Status) error
}

// ReporterFunc makes the Reporter of a payload; nil, nil for none.
type ReporterFunc func(p *Payload) (Reporter, error)

// ReportTimeout bounds one Reporter call, so a slow API server delays a
// heartbeat and never stops the runner.
const ReportTimeout = 5 * time.Second

// podPaths points a kubernetes run's own record and status at the pod's
// scratch directory: the run directory is shared with the launcher, which
// alone writes the records there.
func podPaths(p *Payload) {
	if p.Kubernetes == nil {
		return
	}
	dir := os.Getenv("WAVE_POD_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	p.RuntimePath = filepath.Join(dir, runtimeFile)
	p.StatusPath = filepath.Join(dir, statusFile)
}
