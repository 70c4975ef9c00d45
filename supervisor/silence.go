package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// progress is what the silence timer knows of a worker: its log's size,
// its worktree as last looked at, and when it last saw any of them move.
type progress struct {
	logSize  int64
	commits  int
	dirty    int
	looked   bool      // the worktree was looked at since the start
	lookedAt time.Time // last look at the worktree
	changeAt time.Time
}

// silent is the silence timer: no new output and no worktree change
// for backlog.silenceMinutes. Output is the runner's record (lastOutputAt,
// kept by its heartbeat) and the log's size: a stat, no process. The
// checkout (a worktree: two git commands) is looked at only once output is older than
// a quarter of the limit, and then every tenth of it at most, so a worker
// that prints costs no git at all. The first look after a quiet spell
// counts as a change (what happened in the worktree before it is not
// known): a stall is declared no sooner than by looking all along, and at
// most a quarter of the limit and one look later. It records the stall
// before terminating.
func (s *Supervisor) silent(ctx context.Context, w *worker, obs runtime.Observation, now time.Time) bool {
	limit := s.o.Config.Backlog.Silence()
	if limit <= 0 {
		return false
	}
	is, p := w.is, &w.progress
	if p.changeAt.IsZero() { // not started by this process: timed from now
		p.changeAt = now
	}
	if out := outputAt(obs); out.After(p.changeAt) {
		p.changeAt = out
		if out.After(now) { // the runner's clock is the real one
			p.changeAt = now
		}
	}
	size := int64(-1)
	if fi, err := os.Stat(filepath.Join(is.RunDir, lanes.LogFile)); err == nil {
		size = fi.Size()
	}
	if size != p.logSize {
		p.logSize, p.changeAt = size, now
	}
	if now.Sub(p.changeAt) >= limit/4 && now.Sub(p.lookedAt) >= lookEvery(limit) {
		commits, dirty, _ := s.co.Progress(ctx, w, obs)
		if !p.looked || commits != p.commits || dirty != p.dirty {
			p.commits, p.dirty, p.changeAt = commits, dirty, now
		}
		p.looked, p.lookedAt = true, now
	}
	if is.Outcome == backlog.OutcomeStalled {
		return true // recorded already; the stop did not take: again
	}
	if now.Sub(p.changeAt) < limit {
		return false
	}
	s.printf("#%d: no output and no worktree change for %s; stopping the worker as stalled", is.Number, limit)
	_ = s.emit(backlog.Event{Kind: backlog.EvWorkerFinished, Issue: is.Number, Attempt: is.Attempts, Outcome: backlog.OutcomeStalled,
		Detail: fmt.Sprintf("stalled: silent for %s", limit)})
	return true
}

// outputAt is when the worker last printed as its runner recorded it, or
// when it started; zero without a record.
func outputAt(obs runtime.Observation) time.Time {
	if obs.Record == nil {
		return time.Time{}
	}
	if t := obs.Record.LastOutputAt; t != nil && t.After(obs.Record.StartedAt) {
		return *t
	}
	return obs.Record.StartedAt
}

// lookEvery is how often a quiet worker's worktree is looked at: a tenth
// of the silence limit, between one second and thirty.
func lookEvery(limit time.Duration) time.Duration {
	return min(max(limit/10, time.Second), 30*time.Second)
}
