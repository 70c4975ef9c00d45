package runtime

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// Observation is one look at a run directory.
type Observation struct {
	RunDir  string  `json:"runDir"`
	RunID   string  `json:"runId"`
	Record  *Record `json:"record,omitempty"`
	Status  *Status `json:"status,omitempty"`
	Verdict Verdict `json:"verdict"`
	// Err is set when a file of the run exists but cannot be read; it
	// names the path. The verdict is then made from what was readable.
	Err error `json:"-"`
}

// DefaultLaunchGrace is how long a launching run may lack a session.
const DefaultLaunchGrace = 10 * time.Second

// observeRun reads the run's files and process facts, asks tmux (through
// pane, which may be nil) only when the files cannot decide, and classifies.
func observeRun(ctx context.Context, pane func(context.Context, string) SessionFacts, runDir string, now time.Time) Observation {
	obs := Observation{RunDir: runDir, RunID: filepath.Base(runDir)}
	var errs []error
	f := Facts{Now: now, LaunchGrace: DefaultLaunchGrace}
	if p, err := ReadPayload(filepath.Join(runDir, launchFile)); err == nil {
		f.Deadline = p.DeadlineAt
		obs.RunID = p.RunID
	} else if !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	if rec, err := ReadRecord(filepath.Join(runDir, runtimeFile)); err == nil {
		f.Record, obs.Record = rec, rec
		if rec.RunID != "" {
			obs.RunID = rec.RunID
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	if st, err := ReadStatus(filepath.Join(runDir, statusFile)); err == nil {
		f.Status, obs.Status = st, st
	} else if !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	obs.Err = errors.Join(errs...)
	if rec := f.Record; rec != nil && !isTerminal(rec.TerminalDisposition) && f.Status == nil {
		f.RunnerAlive = ProcAlive(rec.RunnerPid, rec.RunnerStartTime)
		f.AgentAlive = rec.ExecutorStartTime != 0 && ProcAlive(rec.ExecutorPid, rec.ExecutorStartTime)
		if !f.RunnerAlive && pane != nil && rec.SessionName != "" {
			f.Session = pane(ctx, rec.SessionName)
		}
	}
	obs.Verdict = Classify(f)
	if obs.Verdict.State == StateUnknown && obs.Err != nil {
		obs.Verdict.Reason = obs.Err.Error()
	}
	return obs
}

// paneFacts asks tmux about one session.
func paneFacts(tm *tmuxadapter.Client) func(context.Context, string) SessionFacts {
	return func(ctx context.Context, name string) SessionFacts {
		p, err := tm.PaneInfo(ctx, name)
		switch {
		case err == nil:
			return SessionFacts{Known: true, Exists: true, Pane: &p}
		case tmuxadapter.IsGone(err):
			return SessionFacts{Known: true}
		default:
			return SessionFacts{} // indeterminate
		}
	}
}

// ObserveFiles observes a run from its files and /proc only, never asking
// tmux: a runner that died leaves the run lost without pane details.
func ObserveFiles(runDir string, now time.Time) Observation {
	return observeRun(context.Background(), nil, runDir, now)
}
