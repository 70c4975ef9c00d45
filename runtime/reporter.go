package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
	if p.Checkout != nil {
		// The clone and the run dir are the pod's own volumes, at the
		// payload's paths in a real container; the env says where they
		// are (as $WAVE_POD_DIR does), so a node that maps mounts
		// elsewhere, as the test suite's does, runs the payload unchanged.
		relocate(p, p.Checkout.Dir, os.Getenv(EnvCheckoutDir))
		relocate(p, p.RunDir, os.Getenv(EnvRunDir))
	}
}

// The container env naming where a checkout run's volumes are mounted.
const (
	EnvCheckoutDir = "WAVE_CHECKOUT_DIR"
	EnvRunDir      = "WAVE_RUN_DIR_MOUNT"
)

// relocate moves every path of p at or under from to the same place
// under to; nothing when to is empty or from.
func relocate(p *Payload, from, to string) {
	if to == "" || from == "" || to == from {
		return
	}
	move := func(s string) string {
		if s == from {
			return to
		}
		if rest, ok := strings.CutPrefix(s, from+"/"); ok {
			return to + "/" + rest
		}
		return s
	}
	for _, f := range []*string{&p.RunDir, &p.Cwd, &p.PromptPath, &p.LogPath, &p.Stdin, &p.Checkout.Dir} {
		*f = move(*f)
	}
	for i, a := range p.Argv {
		p.Argv[i] = move(a)
	}
	for i, f := range p.PrivateFiles {
		p.PrivateFiles[i] = move(f)
	}
	for k, v := range p.Env {
		p.Env[k] = move(v)
	}
}
