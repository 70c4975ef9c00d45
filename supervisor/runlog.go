package supervisor

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// Files of a backlog run directory (.wave/lanes/<lane>/backlog/<run-id>/).
const (
	EventsFile  = "events.jsonl"
	FinalPRFile = "final-pr.md"
	ControlFile = "control.json"
)

// RunsRoot is where a lane's backlog runs live.
func RunsRoot(laneStateDir string) string { return filepath.Join(laneStateDir, "backlog") }

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
	path := filepath.Join(dir, EventsFile)
	evs, bad, err := jsonfile.ReadLines[backlog.Event](path)
	if err != nil && !os.IsNotExist(err) {
		return nil, nil, fmt.Errorf("backlog run %s: %w", dir, err)
	}
	return &runLog{dir: dir, path: path, run: backlog.Reduce(evs), now: now}, bad, nil
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

// ReadRun reads and reduces one backlog run directory. Corrupt lines are
// returned as "path:line" in bad, never fatal.
func ReadRun(dir string) (*backlog.Run, []string, error) {
	l, bad, err := openRunLog(dir, time.Now)
	if err != nil {
		return nil, bad, err
	}
	return l.run, bad, nil
}

// ListRuns returns a lane's backlog run directories, oldest first. Run ids
// start with their UTC start time to the second, so names sort by age
// except for runs started within one second: those are ordered by their
// first event's time.
func ListRuns(laneStateDir string) ([]string, error) {
	root := RunsRoot(laneStateDir)
	entries, err := os.ReadDir(root)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list backlog runs: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			if _, err := os.Stat(filepath.Join(root, e.Name(), EventsFile)); err == nil {
				out = append(out, filepath.Join(root, e.Name()))
			}
		}
	}
	slices.Sort(out)
	sortSameSecond(out)
	return out, nil
}

// sortSameSecond orders runs whose ids share their start second by the
// time of their first event (the random rest of the id says nothing of
// age); it reads events only for such ties.
func sortSameSecond(dirs []string) {
	second := func(d string) string {
		name := filepath.Base(d)
		if i := strings.IndexByte(name, 'Z'); i > 0 {
			return name[:i]
		}
		return name
	}
	for i := 0; i < len(dirs); {
		j := i + 1
		for j < len(dirs) && second(dirs[j]) == second(dirs[i]) {
			j++
		}
		if j-i > 1 {
			slices.SortStableFunc(dirs[i:j], func(a, b string) int { return firstEventAt(a).Compare(firstEventAt(b)) })
		}
		i = j
	}
}

// firstEventAt is when a run's first event was written (zero if unreadable).
func firstEventAt(dir string) time.Time {
	f, err := os.Open(filepath.Join(dir, EventsFile))
	if err != nil {
		return time.Time{}
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadBytes('\n')
	var ev struct {
		At time.Time `json:"at"`
	}
	if json.Unmarshal(line, &ev) != nil {
		return time.Time{}
	}
	return ev.At
}

// OpenRunDir returns the newest run of the lane that has not finished,
// or "" when every run finished.
func OpenRunDir(laneStateDir string) (string, error) {
	dirs, err := ListRuns(laneStateDir)
	if err != nil {
		return "", err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		r, _, err := ReadRun(dirs[i])
		if err != nil {
			return "", err
		}
		if !r.Finished && r.Info.ID != "" {
			return dirs[i], nil
		}
	}
	return "", nil
}

// FindRun resolves --run ID (or, when id is empty, the newest run).
func FindRun(laneStateDir, id string) (string, error) {
	dirs, err := ListRuns(laneStateDir)
	if err != nil {
		return "", err
	}
	if len(dirs) == 0 {
		return "", fmt.Errorf("no backlog run in %s yet", RunsRoot(laneStateDir))
	}
	if id == "" {
		return dirs[len(dirs)-1], nil
	}
	for _, d := range dirs {
		if filepath.Base(d) == id {
			return d, nil
		}
	}
	return "", fmt.Errorf("backlog run %q not found in %s", id, RunsRoot(laneStateDir))
}
