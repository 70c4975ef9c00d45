// Package launcher runs wave mode's loop. For each selected wave it plans
// the agents (executor, prompt, fingerprint), reuses proven ones, starts
// the rest through its Runs (package runs, on the lane's tmux or
// Kubernetes backend), waits on their changes, summarises and gates each
// result, sweeps closure one stage at a time, and runs again what
// retry.Next picks (on a fallback executor where policy allows) until the
// wave passes or its attempts are spent, recording every step in the
// lane's event log and state.json. Meanwhile it relaunches an agent a
// person answered or whose usage limit passed, stops runs past their
// deadline, budget or progress brake, and holds closure while a blocking
// coordination record is open. A launch adopts the runs of a launcher
// that died, so no result is lost.
//
// It also writes dry-run previews, says what a launch needs of the
// machine, loads a lane's wave state for `status`, and runs
// `autonomous`'s waves one submitted run each. What passes and what runs
// again are the decision packages' (gate, retry); the launcher reads and
// writes what they decide from.
package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/gate"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/notify"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/telemetry"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// Options select and tune a launch. The caller holds the lane lock.
type Options struct {
	Layout         lanes.Layout
	Lane           *config.Lane
	Waves          []*wave.Wave // all waves of the lane, parsed and validated
	StartWave      int
	EndWave        int // inclusive; <0 means the last wave
	AutoNext       bool
	Executor       string // --executor
	TimeoutMinutes int
	// TimeoutSource says where the per-agent timeout came from, for
	// launch-preview.json (TimeoutFrom*; derived when empty).
	TimeoutSource  string
	MaxRetries     int
	StaggerMs      int
	KeepSessions   bool
	Self           string // absolute path of this binary
	OrchestratorID string
	// ResumePhase, when set, re-runs that phase of StartWave and every
	// later closure stage (retry.Resume says which agents that is).
	ResumePhase string
	Resume      bool // resume without a phase: follow the resume plan
	// RerunAgents (resume --agent) rerun even when proven; RerunProven
	// (resume --rerun-proven) reuses no proven agent.
	RerunAgents []string
	RerunProven bool
	Out         io.Writer
	Logger      *slog.Logger
}

// Runs is what the launcher needs of the lane's agent runs (package
// runs provides them on the lane's backend): start runs, observe them,
// be woken when a run directory changes, terminate them, and clear what
// an earlier run left under a payload's names (several at once with
// DiscardAll).
type Runs interface {
	Start(ctx context.Context, ps []*runtime.Payload) error
	Watch(runDir string)
	Changed() <-chan string
	Observe(ctx context.Context, runDir string, now time.Time) runtime.Observation
	Terminate(ctx context.Context, runDir string, grace time.Duration, keepSession bool) error
	Discard(ctx context.Context, p *runtime.Payload) error
	DiscardAll(ctx context.Context, ps []*runtime.Payload) error
}

// Outcome is a run's state as the launcher sees it.
type Outcome struct {
	Done     bool
	State    string // state.Agent* value: completed, failed, terminated, lost, running, launching
	ExitCode *int
	Signal   string
	Detail   string
	// Terminate asks for the run to be terminated before anything else
	// (e.g. an agent that outlived its runner must not race a retry).
	Terminate bool
	// Limit is a usage-limited run's limit, Executor the run's executor.
	Limit    *runtime.UsageLimit
	Executor string
}

// Result is the verdict of a launch.
type Result struct {
	ExitCode int
	Failures []gate.Failure
	Waves    []int // waves completed
}

// ErrStopped is returned when `stop` asked the launcher to stop.
var ErrStopped = errors.New("stopped on request")

// Launcher runs waves.
type Launcher struct {
	opt  Options
	runs Runs
	now  func() time.Time
	log  *slog.Logger
	// current holds the events of the wave run in progress.
	current []state.Event
	// deferring > 0 holds state.json refreshes back until flush (see
	// deferRefresh); stale holds the waves whose refresh is owed.
	deferring int
	stale     map[int]bool
	outMu     sync.Mutex // one printf line at a time
	// pauses are the executors paused by a usage limit (usagelimit.go).
	pauses usagePauses
	// sandbox confines every agent run (runtime.sandbox), nil for none.
	sandbox *runtime.Sandbox
}

// New returns a launcher over runs.
func New(opt Options, runs Runs) *Launcher {
	if opt.Out == nil {
		opt.Out = io.Discard
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opt.TimeoutMinutes <= 0 {
		opt.TimeoutMinutes = opt.Lane.Runtime.TimeoutMinutes
	}
	if opt.TimeoutMinutes <= 0 {
		opt.TimeoutMinutes = 240
		opt.TimeoutSource = TimeoutFromDefault
	}
	if opt.TimeoutSource == "" {
		opt.TimeoutSource = TimeoutFromConfig
	}
	if opt.OrchestratorID == "" {
		opt.OrchestratorID = fmt.Sprintf("%s-orch-%d", opt.Lane.Name, os.Getpid())
	}
	return &Launcher{opt: opt, runs: runs, now: time.Now, log: opt.Logger}
}

// Run runs the selected waves in order and stops at the first that does
// not pass.
func (l *Launcher) Run(ctx context.Context) (Result, error) {
	sel, err := l.selectWaves()
	if err != nil {
		return Result{ExitCode: exitcode.Failed}, err
	}
	if len(sel) == 0 {
		fmt.Fprintln(l.opt.Out, "all waves are completed; nothing to run")
		return Result{}, nil
	}
	if err := l.decideSandbox(ctx); err != nil {
		return Result{ExitCode: exitcode.Failed}, err
	}
	nf, err := notify.FollowLane(l.opt.Layout, l.opt.Lane, notify.Options{Logger: l.log, Say: func(s string) { l.printf("%s", s) }})
	if err != nil {
		l.log.Warn("notify: not following the lane's events", "err", err)
	}
	defer nf.Stop(notify.DefaultFlush)
	tf := telemetry.FollowLane(l.opt.Layout, l.opt.Lane.Name, telemetry.Options{Logger: l.log})
	defer tf.Stop(telemetry.DefaultFlush)
	var res Result
	for _, w := range sel {
		out, err := l.runWave(ctx, w)
		res.Failures = out.Failures
		if err != nil {
			res.ExitCode = exitcode.Failed
			return res, err
		}
		if out.ExitCode != exitcode.OK {
			res.ExitCode = out.ExitCode
			return res, nil
		}
		res.Waves = append(res.Waves, w.Number)
		if err := l.markCompleted(w.Number); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (l *Launcher) selectWaves() ([]*wave.Wave, error) {
	start, end := l.opt.StartWave, l.opt.EndWave
	if l.opt.AutoNext {
		done, err := l.completedWaves()
		if err != nil {
			return nil, err
		}
		start = -1
		for _, w := range l.opt.Waves {
			if !done[w.Number] {
				start = w.Number
				break
			}
		}
		if start < 0 {
			return nil, nil
		}
	}
	var out []*wave.Wave
	for _, w := range l.opt.Waves {
		if w.Number >= start && (end < 0 || w.Number <= end) {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return nil, &SelectionError{Start: start, End: end, Have: numbers(l.opt.Waves)}
	}
	return out, nil
}

// Selected returns the waves Run would run (none when --auto-next finds
// every wave completed). A range holding no wave is a *SelectionError.
func (l *Launcher) Selected() ([]*wave.Wave, error) { return l.selectWaves() }

// SelectionError is a wave range that holds no wave of the lane: a usage
// error, reported before anything starts.
type SelectionError struct {
	Start, End int // End < 0: open-ended
	Have       []int
}

func (e *SelectionError) Error() string {
	what := fmt.Sprintf("no wave numbered %d or later", e.Start)
	switch {
	case e.End == e.Start:
		what = fmt.Sprintf("no wave %d", e.Start)
	case e.End >= 0:
		what = fmt.Sprintf("no wave in range %d..%d", e.Start, e.End)
	}
	if len(e.Have) == 0 {
		return what + "; the lane has no wave files"
	}
	return fmt.Sprintf("%s; the lane's waves are %s", what, rangesOf(e.Have))
}

func numbers(ws []*wave.Wave) []int {
	out := make([]int, len(ws))
	for i, w := range ws {
		out[i] = w.Number
	}
	return out
}

// rangesOf writes sorted numbers compactly: "0-3, 5".
func rangesOf(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(ns[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ns[i], ns[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// emit appends an event and refreshes the wave's state.json.
func (l *Launcher) emit(n int, entity, id, action string, attempt int, data any) {
	ev := state.NewEvent(l.opt.Lane.Name, n, entity, id, action, attempt, state.Data(data))
	if err := state.Append(l.opt.Layout.EventsPath(), ev); err != nil {
		l.log.Error("event log", "err", err)
	}
	if entity == state.EntityWaveRun && action == "started" {
		l.current = l.current[:0]
	}
	l.current = append(l.current, ev)
	if l.deferring > 0 {
		if l.stale == nil {
			l.stale = map[int]bool{}
		}
		l.stale[n] = true
		return
	}
	l.refresh(n)
}

// deferRefresh holds state.json refreshes back until the next flush (or
// the returned resume, which flushes), so events emitted together — 20
// runs started in one go, runs finishing at once, a closure stage's
// skips — cost one write of the reduced state instead of one each. Every
// event still reaches events.jsonl as it is emitted (status reads that);
// the launcher flushes before it waits on runs, so state.json is never
// behind for longer than the launcher is busy.
func (l *Launcher) deferRefresh() (resume func()) {
	l.deferring++
	return func() {
		if l.deferring--; l.deferring == 0 {
			l.flush()
		}
	}
}

// flush writes the state.json refreshes deferRefresh held back.
func (l *Launcher) flush() {
	for n := range l.stale {
		l.refresh(n)
	}
	clear(l.stale)
}

// refresh rewrites waves/<n>/state.json with the one reducer over the
// current wave run's events (kept in memory: a wave_run started event
// resets the wave's state, so earlier events never matter here).
func (l *Launcher) refresh(n int) {
	for _, w := range state.Reduce(l.current, nil, nil, l.now()) {
		if w.Wave == n {
			if err := jsonfile.Write(l.opt.Layout.StatePath(n), w); err != nil {
				l.log.Error("write state", "err", err)
			}
		}
	}
}

func (l *Launcher) printf(format string, args ...any) {
	// Agent ids, paths, details and coordination text are not ours to
	// trust on a terminal.
	msg := termtext.EscapeLines(fmt.Sprintf(format, args...))
	// The notifier prints from its own goroutines too.
	l.outMu.Lock()
	defer l.outMu.Unlock()
	fmt.Fprintf(l.opt.Out, "[%s] %s\n", l.now().Format("15:04:05"), msg)
}
