package runtime

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// Observation is one look at a run directory.
type Observation struct {
	RunDir string  `json:"runDir"`
	RunID  string  `json:"runId"`
	Record *Record `json:"record,omitempty"`
	// Status is status.json while the record is not terminal (once it
	// is, the record says everything and status.json is not read).
	Status  *Status `json:"status,omitempty"`
	Verdict Verdict `json:"verdict"`
	// Deadline is launch.json's deadlineAt, if any.
	Deadline *time.Time `json:"deadline,omitempty"`
	// Err is set when a file of the run exists but cannot be read; it
	// names the path. The verdict is then made from what was readable.
	Err error `json:"-"`
}

// launchFacts is what an observation needs from launch.json.
type launchFacts struct {
	RunID               string     `json:"runId"`
	DeadlineAt          *time.Time `json:"deadlineAt,omitempty"`
	SessionName         string     `json:"sessionName"`
	HeartbeatIntervalMs int        `json:"heartbeatIntervalMs"`
}

// readLaunch reads launchFacts from a run directory's launch.json.
type readLaunch func(runDir string) (launchFacts, error)

// readLaunchFile decodes only the launch facts: launch.json carries the
// whole argv and env, and decoding it all was a third of an idle sweep.
func readLaunchFile(runDir string) (launchFacts, error) {
	var lf launchFacts
	err := readJSON(filepath.Join(runDir, launchFile), &lf)
	return lf, err
}

// DefaultLaunchGrace is how long a launching run may lack a session before
// it is lost (see WithLaunchGrace).
const DefaultLaunchGrace = 10 * time.Second

// observeRun reads the run's files and process facts, asks tmux (through
// pane, which may be nil) only when the files cannot decide, and classifies.
func observeRun(ctx context.Context, pane func(context.Context, string) SessionFacts, launch readLaunch, runDir string, now time.Time, grace time.Duration) Observation {
	obs := Observation{RunDir: runDir, RunID: filepath.Base(runDir)}
	f := Facts{Now: now, LaunchGrace: grace}
	fileErr := readRunFiles(runDir, &f, now)
	var lf launchFacts
	var payloadErr error
	if !settled(f.Record) {
		lf, payloadErr = takeLaunchFacts(launch, runDir, &obs, &f)
	}
	if f.RecordErr != nil && f.Status == nil && pane != nil && lf.SessionName != "" {
		// Only tmux can tell whether something still runs there.
		f.Session = pane(ctx, lf.SessionName)
	}
	if !live(&f) && f.Record != nil && !isTerminal(f.Record.TerminalDisposition) {
		if pane != nil && f.Record.SessionName != "" {
			f.Session = pane(ctx, f.Record.SessionName)
		}
		// The runner may have written (its first record, or its last)
		// between the read and the liveness check: read again and re-check.
		// Once the runner is seen dead its files are final.
		fileErr = readRunFiles(runDir, &f, now)
		live(&f)
	}
	obs.Record, obs.Status = f.Record, f.Status
	if obs.Record != nil && obs.Record.RunID != "" {
		obs.RunID = obs.Record.RunID
	}
	obs.Err = errors.Join(payloadErr, fileErr)
	obs.Verdict = Classify(f)
	if obs.Verdict.State == StateUnknown && f.RecordErr == nil && obs.Err != nil {
		obs.Verdict.Reason = obs.Err.Error()
	}
	return obs
}

// settled reports whether rec decides its run without launch.json: a
// completed or failed record that names its run. (A terminated one needs
// the deadline to tell a timeout.) launch.json carries the whole argv and
// env; skipping it is a fifth of `status` on a finished lane of 200 runs.
func settled(rec *Record) bool {
	return rec != nil && rec.RunID != "" && (rec.TerminalDisposition == Completed || rec.TerminalDisposition == Failed)
}

// takeLaunchFacts reads launch.json's facts into obs and f; a missing
// file is no error.
func takeLaunchFacts(launch readLaunch, runDir string, obs *Observation, f *Facts) (launchFacts, error) {
	lf, err := launch(runDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return lf, err
	}
	f.Deadline, obs.Deadline = lf.DeadlineAt, lf.DeadlineAt
	f.HeartbeatInterval = time.Duration(lf.HeartbeatIntervalMs) * time.Millisecond
	if lf.RunID != "" {
		obs.RunID = lf.RunID
	}
	return lf, nil
}

// live fills the process facts of a non-final record and reports whether
// the runner is alive.
func live(f *Facts) bool {
	f.RunnerAlive, f.AgentAlive = false, false
	rec := f.Record
	if rec == nil || isTerminal(rec.TerminalDisposition) || rec.SessionBackend == BackendKubernetes {
		// A kubernetes record's pids are the pod's, on another machine.
		return false
	}
	f.RunnerAlive = ProcAlive(rec.RunnerPid, rec.RunnerStartTime)
	// Only a dead runner's verdict looks at the agent; skipping the /proc
	// read for live ones is a fifth of an idle sweep's CPU.
	f.AgentAlive = !f.RunnerAlive && rec.ExecutorStartTime != 0 && ProcAlive(rec.ExecutorPid, rec.ExecutorStartTime)
	return f.RunnerAlive
}

// readRunFiles reads runtime.json and status.json into f; a missing file is
// nil, an unreadable one an error naming its path (also kept in f, with
// the age of an unreadable runtime.json).
func readRunFiles(runDir string, f *Facts, now time.Time) error {
	f.Record, f.Status, f.RecordErr, f.StatusErr, f.RecordAge = nil, nil, nil, nil, 0
	path := filepath.Join(runDir, runtimeFile)
	if rec, err := ReadRecord(path); err == nil {
		f.Record = rec
	} else if !errors.Is(err, fs.ErrNotExist) {
		f.RecordErr = err
		// An age unknown is taken as old: nothing is seen rewriting it.
		f.RecordAge = time.Duration(1<<63 - 1)
		if fi, err := os.Stat(path); err == nil {
			f.RecordAge = now.Sub(fi.ModTime())
		}
	}
	if f.Record != nil && isTerminal(f.Record.TerminalDisposition) {
		// status.json is written before the terminal record, which
		// decides the verdict alone: one read less per finished run.
		return f.RecordErr
	}
	if st, err := ReadStatus(filepath.Join(runDir, statusFile)); err == nil {
		f.Status = st
	} else if !errors.Is(err, fs.ErrNotExist) {
		f.StatusErr = err
	}
	return errors.Join(f.RecordErr, f.StatusErr)
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
			return SessionFacts{Unanswered: true} // indeterminate
		}
	}
}

// ObserveFiles observes a run from its files and /proc only, never asking
// tmux: a runner that died leaves the run lost without pane details.
func ObserveFiles(runDir string, now time.Time) Observation {
	return observeRun(context.Background(), nil, readLaunchFile, runDir, now, DefaultLaunchGrace)
}
