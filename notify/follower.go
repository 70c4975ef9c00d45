package notify

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/wave-orchestrator/wave-orchestrator/internal/logtail"
)

// Delivery bounds: each try has tryTimeout; a failing sink is
// retried retries times, waiting backoff(try) before each.
const (
	tryTimeout = 5 * time.Second
	retries    = 3
	// safetyTick re-reads the log in case a file event was missed (a
	// rotation under the watch, an overflowing event queue).
	safetyTick = 2 * time.Second
)

// DefaultFlush bounds how long a follower's Stop waits for deliveries in
// flight at exit (a try each: no retry waits out a backoff then); a sink
// that hangs is cut off and its delivery left owed.
const DefaultFlush = 10 * time.Second

func defaultBackoff(try int) time.Duration { return 500 * time.Millisecond << try }

// Options tune a follower; the zero value is production's.
type Options struct {
	Logger *slog.Logger
	// Backoff is the wait before the try-th retry (0-based).
	Backoff func(try int) time.Duration
	// Say prints one line among the owning process's own (the launch's
	// "[15:04:05] …", the backlog run's "backlog: …"): a sink that cannot
	// deliver, and each delivery that fails, show there as they happen.
	// Nil: they go to Logger.
	Say func(line string)
}

// entry is what one log line means to a follower.
type entry struct {
	notice *Notice
	rec    *record
	marker string // a lane follower's markers (state.NotifyFollowing, ...)
}

// record is a delivery's intent or outcome.
type record struct {
	Action string // state.NotifyIntent | state.NotifyDelivered | state.NotifyFailed
	Notice Notice
	Sink   string
	Tries  int
	Err    string
}

func (r record) key() string { return r.Notice.ID + "/" + r.Sink }

// journal is the log a follower reads and records in.
type journal interface {
	path() string
	rotates() bool
	decode(line []byte) entry
	record(r record) error
	marker(action string) error
	// scopeAll: every notice of the log is the follower's (a backlog
	// run's own log). Otherwise (the lane's log, shared by every launch)
	// the scope starts where the last follower that did not stop cleanly
	// started, or at the end.
	scopeAll() bool
}

// Follower tells the sinks about the notices of one log, exactly once each.
type Follower struct {
	j     journal
	sinks []Sink
	o     Options
	log   *slog.Logger
	tail  logtail.Tail

	mu       sync.Mutex
	down     map[string]string // sink → why its last delivery failed every try
	done     map[string]bool   // outcome recorded
	intended map[string]bool
	queued   map[string]bool
	queues   map[string]chan record
	inflight sync.WaitGroup // queued deliveries not yet finished
	workers  sync.WaitGroup

	sendCtx    context.Context
	cancelSend context.CancelFunc
	// flushing is closed when Stop begins: no retry waits out its backoff
	// after it, and a sink that is down is not tried again.
	flushing  chan struct{}
	stopWatch chan struct{}
	watchDone chan struct{}
}

func newFollower(j journal, sinks []Sink, o Options) *Follower {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Backoff == nil {
		o.Backoff = defaultBackoff
	}
	return &Follower{j: j, sinks: sinks, o: o, log: o.Logger, tail: logtail.Tail{Path: j.path(), Rotates: j.rotates()},
		down: map[string]string{}, done: map[string]bool{}, intended: map[string]bool{}, queued: map[string]bool{},
		queues: map[string]chan record{}, flushing: make(chan struct{})}
}

// say tells the person running the process, in its own line style when
// it has one.
func (f *Follower) say(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if f.o.Say != nil {
		f.o.Say(msg)
		return
	}
	f.log.Warn(msg)
}

// start reads the log so far, takes on what is owed, and follows the log
// until Stop. It returns once the follower's scope is fixed, so every
// event appended after it returns is delivered.
func (f *Follower) start() error {
	lines, err := f.tail.ReadAll()
	if err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	entries := make([]entry, len(lines))
	for i, l := range lines {
		entries[i] = f.j.decode(l)
	}
	from := 0
	if !f.j.scopeAll() {
		from = scopeStart(entries)
	}
	f.sendCtx, f.cancelSend = context.WithCancel(context.Background())
	for _, s := range f.sinks {
		q := make(chan record, 1024)
		f.queues[s.Name()] = q
		f.workers.Add(1)
		go f.work(s, q)
	}
	for _, e := range entries {
		if e.rec != nil {
			f.note(*e.rec)
		}
	}
	if !f.j.scopeAll() {
		if err := f.j.marker(followingMarker); err != nil {
			return err
		}
	}
	f.tail.Pin()
	for _, e := range entries[from:] {
		f.take(e)
	}
	f.stopWatch, f.watchDone = make(chan struct{}), make(chan struct{})
	go f.watch()
	return nil
}

// scopeStart is the index of the first entry a new lane follower owns:
// the first follower start after the last clean stop (a follower that
// died left deliveries owed), else the end of the log.
func scopeStart(es []entry) int {
	lastStop := -1
	for i, e := range es {
		if e.marker == stoppedMarker {
			lastStop = i
		}
	}
	for i := lastStop + 1; i < len(es); i++ {
		if es[i].marker == followingMarker {
			return i
		}
	}
	return len(es)
}

// note applies a delivery record read from the log.
func (f *Follower) note(r record) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.Action {
	case intentAction:
		f.intended[r.key()] = true
	case deliveredAction, failedAction:
		f.done[r.key()] = true
	}
}

// take queues a notice for every sink that wants it and has not had it.
func (f *Follower) take(e entry) {
	if e.rec != nil {
		f.note(*e.rec)
	}
	if e.notice == nil {
		return
	}
	var owed []record
	f.mu.Lock()
	for _, s := range f.sinks {
		r := record{Notice: *e.notice, Sink: s.Name()}
		if !s.Wants(r.Notice.Event) || f.done[r.key()] || f.queued[r.key()] {
			continue
		}
		f.queued[r.key()] = true
		f.inflight.Add(1)
		owed = append(owed, r)
	}
	f.mu.Unlock()
	// Sent outside the lock: a full queue waits for its worker, which
	// needs the lock to finish a delivery.
	for _, r := range owed {
		f.queues[r.Sink] <- r
	}
}

func (f *Follower) readNew() {
	lines, err := f.tail.ReadNew()
	if err != nil {
		f.log.Warn("notify: read log", "err", err)
	}
	for _, l := range lines {
		f.take(f.j.decode(l))
	}
}

// watch reads the log whenever its directory changes.
func (f *Follower) watch() {
	defer close(f.watchDone)
	w, err := fsnotify.NewWatcher()
	var events chan fsnotify.Event
	if err == nil {
		defer w.Close()
		if err := w.Add(filepath.Dir(f.j.path())); err == nil {
			events = w.Events
		}
	}
	tick := time.NewTicker(safetyTick)
	defer tick.Stop()
	base := filepath.Base(f.j.path())
	for {
		select {
		case <-f.stopWatch:
			return
		case ev := <-events:
			if filepath.Base(ev.Name) == base {
				f.readNew()
			}
		case <-tick.C:
			f.readNew()
		}
	}
}

// work delivers one sink's notices in order.
func (f *Follower) work(s Sink, q chan record) {
	defer f.workers.Done()
	for r := range q {
		f.deliver(s, r)
		f.inflight.Done()
	}
}

func (f *Follower) deliver(s Sink, r record) {
	f.mu.Lock()
	intended := f.intended[r.key()]
	why, down := f.down[r.Sink]
	f.mu.Unlock()
	if f.sendCtx.Err() != nil {
		return // past the flush bound: owed to the next follower
	}
	if down && f.isFlushing() {
		// The process is ending: a sink whose last delivery failed every
		// try is not waited on again. Recorded, so status and doctor
		// show it.
		r.Action, r.Err = failedAction, "not sent at exit: the sink's previous delivery failed ("+why+")"
		f.say("notify: sink %s: %s not sent at exit (its previous delivery failed)", r.Sink, r.Notice.Event)
		f.outcome(r)
		return
	}
	if !intended {
		r.Action = intentAction
		if err := f.j.record(r); err != nil {
			// Without the intent on disk a crash could not tell whether
			// it was sent: do not send.
			f.log.Error("notify: record intent", "sink", r.Sink, "event", r.Notice.Event, "err", err)
			return
		}
	}
	retrying := func(try int, err error) {
		if try == 0 && !down {
			f.say("notify: sink %s could not deliver %s: %v; trying again, up to %d times", r.Sink, r.Notice.Event, err, retries)
		}
	}
	tries, err := send(f.sendCtx, f.flushing, s, r.Notice, f.o.Backoff, retrying)
	if f.sendCtx.Err() != nil {
		return // cut short by the flush bound: the intent stays open
	}
	r.Action, r.Tries = deliveredAction, tries
	f.mu.Lock()
	if err != nil {
		f.down[r.Sink] = err.Error()
	} else {
		delete(f.down, r.Sink)
	}
	f.mu.Unlock()
	switch {
	case err != nil:
		r.Action, r.Err = failedAction, err.Error()
		f.say("notify: sink %s did not get %s (%s): %v; status and doctor list it", r.Sink, r.Notice.Event, triesWord(tries), err)
	case down:
		f.say("notify: sink %s delivers again (%s)", r.Sink, r.Notice.Event)
	}
	f.outcome(r)
}

// outcome records a delivery's outcome and notes it.
func (f *Follower) outcome(r record) {
	if err := f.j.record(r); err != nil {
		f.log.Error("notify: record outcome", "sink", r.Sink, "event", r.Notice.Event, "err", err)
		return
	}
	f.note(r)
}

func triesWord(n int) string {
	if n == 1 {
		return "1 try"
	}
	return fmt.Sprintf("%d tries", n)
}

func (f *Follower) isFlushing() bool {
	select {
	case <-f.flushing:
		return true
	default:
		return false
	}
}

// send tries a sink once and retries times more, each try within
// tryTimeout, calling retrying (with the failed try, 0-based) before each
// retry. Once flushing is
// closed (the process is ending) it retries no more: the failure so far
// is the outcome.
func send(ctx context.Context, flushing <-chan struct{}, s Sink, n Notice, backoff func(int) time.Duration, retrying func(int, error)) (int, error) {
	var err error
	for try := 0; ; try++ {
		tctx, cancel := context.WithTimeout(ctx, tryTimeout)
		err = s.Send(tctx, n)
		cancel()
		if err == nil || try == retries || ctx.Err() != nil {
			return try + 1, err
		}
		select {
		case <-flushing:
			return try + 1, err
		default:
		}
		retrying(try, err)
		t := time.NewTimer(backoff(try))
		select {
		case <-ctx.Done():
			t.Stop()
			return try + 1, err
		case <-flushing:
			t.Stop()
			return try + 1, err
		case <-t.C:
		}
	}
}

// Stop reads the log a last time, waits up to bound for the deliveries in
// flight, and stops. It waits on no dead sink longer than it must: a
// failed try is not retried any more (its failure is recorded), and a
// sink whose last delivery failed every try is not tried again (recorded
// as not sent). What is not delivered by bound stays owed: the next
// follower of the log delivers it. Safe to call on a nil follower.
func (f *Follower) Stop(bound time.Duration) {
	if f == nil {
		return
	}
	close(f.flushing)
	close(f.stopWatch)
	<-f.watchDone
	f.readNew()
	flushed := make(chan struct{})
	go func() { f.inflight.Wait(); close(flushed) }()
	t := time.NewTimer(bound)
	defer t.Stop()
	clean := true
	select {
	case <-flushed:
	case <-t.C:
		clean = false
		f.say("notify: deliveries still in flight at exit; the next run delivers them")
	}
	f.cancelSend()
	for _, q := range f.queues {
		close(q)
	}
	f.workers.Wait()
	if clean && !f.j.scopeAll() {
		if err := f.j.marker(stoppedMarker); err != nil {
			f.log.Warn("notify: record stop", "err", err)
		}
	}
}
