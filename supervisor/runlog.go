package supervisor

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// Files of a backlog run directory, and where a lane's runs live: the
// reader of run directories is package runlog; these names stay here for
// the supervisor's callers.
const (
	EventsFile  = runlog.EventsFile
	FinalPRFile = runlog.FinalPRFile
	ControlFile = runlog.ControlFile
)

// RunsRoot is where a lane's backlog runs live (runlog.Root).
func RunsRoot(laneStateDir string) string { return runlog.Root(laneStateDir) }

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
}

func openRunLog(dir string, now func() time.Time) (*runLog, []string, error) {
	run, bad, err := runlog.Read(dir)
	if err != nil {
		return nil, nil, err
	}
	return &runLog{dir: dir, path: filepath.Join(dir, EventsFile), run: run, now: now}, bad, nil
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
	if err := jsonfile.Append(l.path, ev); err != nil {
		return fmt.Errorf("record %s event: %w", ev.Kind, err)
	}
	l.lastCalls = max(l.lastCalls, calls)
	l.run.Apply(ev)
	return nil
}

// ReadRun reads and reduces one backlog run directory (runlog.Read).
func ReadRun(dir string) (*backlog.Run, []string, error) { return runlog.Read(dir) }

// ListRuns returns a lane's backlog run directories, oldest first
// (runlog.List).
func ListRuns(laneStateDir string) ([]string, error) { return runlog.List(laneStateDir) }

// OpenRunDir returns the newest run of the lane that has not finished,
// or "" when every run finished (runlog.OpenDir).
func OpenRunDir(laneStateDir string) (string, error) { return runlog.OpenDir(laneStateDir) }

// FindRun resolves --run ID, or the newest run when id is empty
// (runlog.Find).
func FindRun(laneStateDir, id string) (string, error) { return runlog.Find(laneStateDir, id) }
