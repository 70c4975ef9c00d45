package supervisor

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// runLog is a run's event log and its reduction, kept in step: every
// event is appended to disk before it is applied, so what the supervisor
// believes is never ahead of what a restart will read.
type runLog struct {
	dir  string
	path string
	run  *backlog.Run
	now  func() time.Time
	// calls, when set, counts the source's API calls; each event carries
	// the calls made since the one before.
	calls     func() int64
	lastCalls int64
	// waits, when set, counts the GitHub rate limits waited out; each
	// event carries those since the one before.
	waits     func() int64
	lastWaits int64
}

// count has every event carry src's API calls and rate-limit waits
// since the previous one.
func (l *runLog) count(src interface{ Calls() int64 }) {
	l.calls = src.Calls
	if w, ok := src.(interface{ RateLimitWaits() int64 }); ok {
		l.waits = w.RateLimitWaits
	}
}

func openRunLog(dir string, now func() time.Time) (*runLog, []string, error) {
	run, bad, err := runlog.Read(dir)
	if err != nil {
		return nil, nil, err
	}
	return &runLog{dir: dir, path: filepath.Join(dir, runlog.EventsFile), run: run, now: now}, bad, nil
}

// emit records ev and applies it.
func (l *runLog) emit(ev backlog.Event) error {
	if ev.At.IsZero() {
		ev.At = l.now().UTC()
	}
	var calls int64
	if l.calls != nil {
		calls = l.calls()
		ev.Calls = calls - l.lastCalls
	}
	var waits int64
	if l.waits != nil {
		waits = l.waits()
		ev.RateWaits = waits - l.lastWaits
	}
	if err := jsonfile.Append(l.path, ev); err != nil {
		return fmt.Errorf("record %s event: %w", ev.Kind, err)
	}
	l.lastCalls = max(l.lastCalls, calls)
	l.lastWaits = max(l.lastWaits, waits)
	l.run.Apply(ev)
	return nil
}
