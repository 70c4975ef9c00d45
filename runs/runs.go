// Package runs owns the agent runs of a lane, for both loops (the wave
// launcher and the backlog supervisor): it chooses the lane's backend
// once (a tmux session per run, or a Kubernetes Job per run when
// runtime.backend is kubernetes), builds the one launch payload both
// loops start, and starts, watches, observes, terminates and discards
// runs on that backend. It also starts the lane's dashboard session and
// stops a lane's live runs whatever backend each was started on (`stop`).
//
// The loops never name a backend: each keeps a small Runs interface of
// its own that *Runs satisfies, so neither imports tmuxadapter or kube.
package runs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// changedBuffer is the capacity of Changed: a change that finds it full
// is dropped, as each loop's periodic sweep catches up.
const changedBuffer = 4096

// Runs are the agent runs of one lane on its backend, with a watcher
// over the runs it is told to watch.
type Runs struct {
	watched *runtime.WatchedRuns
	tm      *tmuxadapter.Client // nil on kubernetes
	binary  string
	cancel  context.CancelFunc
}

// Option changes how Open sets the runs up.
type Option func(*options)

type options struct {
	backend string
}

// On runs the lane's agents on backend (config.BackendTmux or
// config.BackendKubernetes) whatever its runtime.backend says: `stop`
// reaches each run on the backend its record names.
func On(backend string) Option { return func(o *options) { o.backend = backend } }

// Open chooses the lane's backend and starts watching: tmux on the
// lane's socket, or kubernetes when lane.Runtime.UsesKubernetes(). self is
// this binary (sessions run `self agent-run`; on kubernetes an agent
// command naming it runs the image's binary). The watcher stops with ctx
// or Close; runs keep going.
func Open(ctx context.Context, lane *config.Lane, layout lanes.Layout, self string, logger *slog.Logger, opts ...Option) (*Runs, error) {
	o := options{backend: config.BackendTmux}
	if lane.Runtime.UsesKubernetes() {
		o.backend = config.BackendKubernetes
	}
	for _, opt := range opts {
		opt(&o)
	}
	if logger == nil {
		logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(ctx)
	switch o.backend {
	case config.BackendTmux:
		tm := tmuxadapter.New(layout.Socket(), tmuxadapter.WithLogger(logger))
		return &Runs{watched: runtime.WatchRuns(ctx, tm, self, logger, changedBuffer), tm: tm, binary: self, cancel: cancel}, nil
	case config.BackendKubernetes:
		b, err := kubeBackend(ctx, lane, self, logger)
		if err != nil {
			cancel()
			return nil, err
		}
		return &Runs{watched: runtime.WatchRunsOn(ctx, b, logger, changedBuffer), binary: AgentBinary(lane, self), cancel: cancel}, nil
	}
	cancel()
	return nil, fmt.Errorf("lane %s: runtime.backend %q: want %s or %s", lane.Name, o.backend, config.BackendTmux, config.BackendKubernetes)
}

// Start starts the payloads' runs.
func (r *Runs) Start(ctx context.Context, ps []*runtime.Payload) error {
	return r.watched.Start(ctx, ps)
}

// Watch adds a run dir to the watcher (and, on kubernetes, has the
// backend mirror the run: adoption).
func (r *Runs) Watch(runDir string) { r.watched.Watch(runDir) }

// Changed delivers the run dirs of watched runs that changed.
func (r *Runs) Changed() <-chan string { return r.watched.Changed() }

// Observe is the run's record and the runtime's verdict on it; an error
// reading it is in Observation.Err.
func (r *Runs) Observe(ctx context.Context, runDir string, now time.Time) runtime.Observation {
	obs, _ := r.watched.Backend.Observe(ctx, runDir, now)
	return obs
}

// Terminate stops the run: TERM, grace, KILL (on kubernetes the pod is
// deleted with that grace). keep leaves a tmux run's session for
// inspection.
func (r *Runs) Terminate(ctx context.Context, runDir string, grace time.Duration, keep bool) error {
	return r.watched.Backend.Terminate(ctx, runDir, grace, keep)
}

// Discard clears what is left of an earlier run under p's names before p
// starts (or once a finished run's remains are of no more use): its tmux
// session, which outlives the run for inspection. On kubernetes there is
// nothing to clear: a run's objects are named for its run id, which no
// other run shares, and Start adopts a Job of the same run instead of
// creating it twice.
func (r *Runs) Discard(ctx context.Context, p *runtime.Payload) error {
	if r.tm == nil || p.SessionName == "" {
		return nil
	}
	if err := r.tm.KillSession(ctx, p.SessionName); err != nil && !tmuxadapter.IsGone(err) {
		return fmt.Errorf("run %s: %w", p.RunID, err)
	}
	return nil
}

// DiscardAll is Discard for many finished runs at once: on tmux one
// list-sessions and one kill of those still there, however many.
func (r *Runs) DiscardAll(ctx context.Context, ps []*runtime.Payload) error {
	if r.tm == nil {
		return nil
	}
	var names []string
	for _, p := range ps {
		if p.SessionName != "" {
			names = append(names, p.SessionName)
		}
	}
	if err := r.tm.KillSessions(ctx, names); err != nil {
		return fmt.Errorf("discard %d finished run(s): %w", len(names), err)
	}
	return nil
}

// Kubernetes reports whether the lane's runs are pods.
func (r *Runs) Kubernetes() bool { return r.tm == nil }

// AgentBinary is wave-orchestrator's path as the agents' commands and
// prompts name it: self on tmux, the image's binary in a pod.
func (r *Runs) AgentBinary() string { return r.binary }

// Close stops the watcher (and a kubernetes backend's watches). Runs
// keep going.
func (r *Runs) Close() { r.cancel() }
