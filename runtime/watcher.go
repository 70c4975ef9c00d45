package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Change is a run whose observed state changed.
type Change struct {
	RunDir string
	Obs    Observation
}

// Watcher turns run-directory file events into typed run-state changes:
// fsnotify on every added run directory (debounced; every event re-reads the
// files), a full rescan when the kernel queue overflows, and a slow sweep
// for what makes no file event (a SIGKILLed runner, stale heartbeats,
// deadlines, a pane that died before its runner wrote a record).
//
// File events are classified from the run's files and /proc alone: they
// come from a writer that just acted, so asking the backend would add
// nothing but latency (a tmux call waits behind a server busy creating
// sessions). Only the sweep, in its own goroutine, and a run the files
// call lost ask the backend.
type Watcher struct {
	logger   *slog.Logger
	observe  observeFunc // may ask the backend
	files    observeFunc // files and /proc only
	sweep    time.Duration
	debounce time.Duration
	changes  chan Change

	mu      sync.Mutex
	dirs    map[string]*watched
	added   []string
	seq     uint64 // orders observations, so a slow sweep never undoes an event
	wakeAdd chan struct{}
}

type observeFunc func(ctx context.Context, runDir string, now time.Time) Observation

type watched struct {
	last  string // key of the last delivered observation
	seq   uint64 // sequence of the newest observation considered
	final bool
	// From the newest observation, when its runner was alive: what the
	// sweep needs to tell that nothing changed without observing again.
	live     *Record
	deadline *time.Time
	file     fileID // runtime.json as it was before that observation
}

// seen is one observation, the sequence number taken before it was made
// and the identity runtime.json had then.
type seen struct {
	seq  uint64
	dir  string
	obs  Observation
	file fileID
}

// WatcherOption configures a Watcher.
type WatcherOption func(*Watcher)

// WithBackend observes through b (tmux pane facts for lost and
// never-started runs) instead of files alone.
func WithBackend(b Backend) WatcherOption {
	return func(w *Watcher) {
		w.observe = func(ctx context.Context, dir string, now time.Time) Observation {
			obs, _ := b.Observe(ctx, dir, now)
			return obs
		}
	}
}

// WithSweep sets the slow sweep interval (default 1s).
func WithSweep(d time.Duration) WatcherOption { return func(w *Watcher) { w.sweep = d } }

// NewWatcher returns a watcher with no directories; Add them as runs start.
func NewWatcher(logger *slog.Logger, opts ...WatcherOption) *Watcher {
	if logger == nil {
		logger = slog.Default()
	}
	launches := &launchCache{}
	files := func(ctx context.Context, dir string, now time.Time) Observation {
		return observeRun(ctx, nil, launches.read, dir, now, DefaultLaunchGrace)
	}
	w := &Watcher{
		logger:   logger,
		observe:  files,
		files:    files,
		sweep:    time.Second,
		debounce: 5 * time.Millisecond,
		changes:  make(chan Change, 256),
		dirs:     map[string]*watched{},
		wakeAdd:  make(chan struct{}, 1),
	}
	for _, o := range opts {
		o(w)
	}
	return w
}

// Changes delivers run-state changes; it is closed when Run returns.
func (w *Watcher) Changes() <-chan Change { return w.changes }

// Add watches a run directory (which should exist). Safe at any time; the
// directory is checked once its watch is in place, so nothing written
// before is missed.
func (w *Watcher) Add(runDir string) {
	w.mu.Lock()
	w.added = append(w.added, filepath.Clean(runDir))
	w.mu.Unlock()
	select {
	case w.wakeAdd <- struct{}{}:
	default:
	}
}

// Run watches until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	defer close(w.changes)
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch runs: %w", err)
	}
	defer fsw.Close()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	swept := make(chan []seen)
	wg.Go(func() { w.sweeper(ctx, swept) })

	pending := map[string]bool{}
	flush := time.NewTimer(time.Hour)
	flush.Stop()
	w.addPending(ctx, fsw)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.wakeAdd:
			w.addPending(ctx, fsw)
		case ev, ok := <-fsw.Events:
			if !ok {
				return nil
			}
			if relevant(ev.Name) {
				if len(pending) == 0 {
					flush.Reset(w.debounce)
				}
				pending[filepath.Dir(ev.Name)] = true
			}
		case err, ok := <-fsw.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.logger.Warn("run_watch_overflow", "action", "rescan")
				for _, d := range w.dirList(true) {
					w.check(ctx, d)
				}
			} else {
				w.logger.Warn("run_watch_error", "err", err)
			}
		case <-flush.C:
			for dir := range pending {
				w.check(ctx, dir)
			}
			clear(pending)
		case batch := <-swept:
			for _, s := range batch {
				w.deliver(ctx, s)
			}
		}
	}
}

// relevant reports whether a file event can change a run's state; the
// writers' temp files are skipped (the rename brings the real name).
func relevant(name string) bool {
	b := filepath.Base(name)
	return b == runtimeFile || b == statusFile || b == launchFile
}

func (w *Watcher) addPending(ctx context.Context, fsw *fsnotify.Watcher) {
	w.mu.Lock()
	dirs := w.added
	w.added = nil
	for _, d := range dirs {
		if w.dirs[d] == nil {
			w.dirs[d] = &watched{}
		}
	}
	w.mu.Unlock()
	for _, d := range dirs {
		if err := fsw.Add(d); err != nil {
			// The sweep still covers it.
			w.logger.Warn("run_watch_add_failed", "dir", d, "err", err)
		}
		w.check(ctx, d)
	}
}

// sweeper observes every unfinished run through the backend each sweep
// interval and hands the observations to Run, which alone delivers.
func (w *Watcher) sweeper(ctx context.Context, out chan<- []seen) {
	t := time.NewTicker(w.sweep)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var batch []seen
		for _, d := range w.dirList(false) {
			seq, file, now := w.nextSeq(), runtimeID(d), time.Now()
			if w.unchanged(d, file, now) {
				continue
			}
			batch = append(batch, seen{seq, d, w.observe(ctx, d, now), file})
		}
		select {
		case out <- batch:
		case <-ctx.Done():
			return
		}
	}
}

// dirList returns the watched directories (all, or only those not final).
func (w *Watcher) dirList(all bool) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var dirs []string
	for d, s := range w.dirs {
		if all || !s.final {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

func (w *Watcher) nextSeq() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	return w.seq
}

// check observes dir from its files (through the backend only when the
// files say the runner is lost, for the pane's exit status) and delivers a
// Change when its state changed.
func (w *Watcher) check(ctx context.Context, dir string) {
	seq, file := w.nextSeq(), runtimeID(dir)
	obs := w.files(ctx, dir, time.Now())
	if obs.Verdict.State == StateLost {
		obs = w.observe(ctx, dir, time.Now())
	}
	w.deliver(ctx, seen{seq, dir, obs, file})
}

func runtimeID(dir string) fileID {
	id, _ := statID(filepath.Join(dir, runtimeFile))
	return id
}

// unchanged reports whether observing dir now would repeat the last
// observation of a live run: same runtime.json, runner alive, heartbeat
// fresh, deadline ahead. It costs a stat and a /proc read instead of an
// observation, which kept an idle launcher of 100 runs over 2 % of a core.
func (w *Watcher) unchanged(dir string, file fileID, now time.Time) bool {
	w.mu.Lock()
	d := w.dirs[dir]
	if d == nil || d.live == nil || d.file != file || file == (fileID{}) {
		w.mu.Unlock()
		return false
	}
	rec, deadline := d.live, d.deadline
	w.mu.Unlock()
	if _, _, stale := heartbeatStale(rec, now); stale || deadline != nil && !now.Before(*deadline) {
		return false
	}
	return ProcAlive(rec.RunnerPid, rec.RunnerStartTime)
}

// liveRecord returns the record of an observation whose runner was alive
// and whose files were readable, or nil.
func liveRecord(o Observation) *Record {
	v, r := o.Verdict, o.Record
	if o.Err != nil || o.Status != nil || r == nil || r.RunnerPid == 0 || isTerminal(r.TerminalDisposition) {
		return nil
	}
	if v.State != StateRunning && v.State != StateLaunching {
		return nil
	}
	return r
}

// deliver sends the observation unless it is older than one already
// considered for its directory, or not a change.
func (w *Watcher) deliver(ctx context.Context, s seen) {
	obs := s.obs
	if finishing(obs) {
		// status.json is written just before the terminal record; deliver
		// one final change, from the record, unless the runner died between.
		return
	}
	key := obsKey(obs)
	w.mu.Lock()
	d := w.dirs[s.dir]
	if d == nil || s.seq < d.seq {
		w.mu.Unlock()
		return
	}
	d.seq = s.seq
	d.live, d.deadline, d.file = liveRecord(obs), obs.Deadline, s.file
	if d.last == key {
		w.mu.Unlock()
		return
	}
	d.last, d.final = key, obs.Verdict.Done
	w.mu.Unlock()
	if obs.Err != nil {
		w.logger.Warn("run_record_unreadable", "dir", s.dir, "err", obs.Err)
	}
	select {
	case w.changes <- Change{RunDir: s.dir, Obs: obs}:
	case <-ctx.Done():
	}
}

// finishing reports a run whose status file exists while its live runner
// has not yet written the terminal record, or has written it (and exited)
// since the observation read the record: the record's own event follows.
func finishing(o Observation) bool {
	r := o.Record
	if o.Status == nil || r == nil || isTerminal(r.TerminalDisposition) {
		return false
	}
	if ProcAlive(r.RunnerPid, r.RunnerStartTime) {
		return true
	}
	now, err := ReadRecord(filepath.Join(o.RunDir, runtimeFile))
	return err == nil && isTerminal(now.TerminalDisposition)
}

// obsKey is what a consumer cares about in an observation; heartbeats alone
// are not a change.
func obsKey(o Observation) string {
	v := o.Verdict
	code := ""
	if v.ExitCode != nil {
		code = fmt.Sprint(*v.ExitCode)
	}
	errs := ""
	if o.Err != nil {
		errs = o.Err.Error()
	}
	disp := ""
	if o.Record != nil {
		disp = o.Record.TerminalDisposition
	}
	return strings.Join([]string{string(v.State), fmt.Sprint(v.Done), disp, code, v.Signal, fmt.Sprint(v.Terminate), errs, strings.Join(v.Warnings, "|")}, "\x00")
}
