package supervisor

import (
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// worker is one issue's worker as this process knows it, over its whole
// life in the run: its record (the run's reduced events about the issue,
// which status and every later supervisor read too) and what only this
// process keeps of it. The latter is lost with the process and safe to
// lose: a supervisor that resumes the run starts each fact afresh (a
// silence timer from its first look, a probe count from zero, a lease
// renewal at its first check).
//
// The loop goroutine owns it, as it owns the rest of the run's state; a
// job reaches it through onLoop (jobs.go). A checkout reads its record.
type worker struct {
	n  int
	is *backlog.IssueRun // its record in the run's log

	// progress is what the silence timer last saw of it (silence.go).
	progress progress
	// restarts counts the starts of runs that were recorded but never
	// started (neverStarted).
	restarts int
	// probeTries counts the failed probes before its salvage relaunch;
	// probeAt is when the next probe is due.
	probeTries int
	probeAt    time.Time
	// renewedAt is the last renewal of its claim's lease.
	renewedAt time.Time
	// claimWarned: it merged, and another run took its claim since;
	// said once.
	claimWarned bool
	// executor is the fallback its next start runs on while the
	// workers' executor is paused by a usage limit ("": none).
	executor string
}

// worker is issue n's worker, made when first asked for. On the loop only.
func (s *Supervisor) worker(n int) *worker {
	w := s.workers[n]
	if w == nil {
		w = &worker{n: n}
		s.workers[n] = w
	}
	// The record is the reduced run's own (it changes with each event);
	// it exists once the issue entered the run, and is the same record
	// from then on: a job reads w.is while the loop looks its worker up.
	if is := s.run().Issues[n]; w.is != is {
		w.is = is
	}
	return w
}
