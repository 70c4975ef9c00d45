// Package runlog reads a lane's backlog runs from disk: the run
// directories under .wave/lanes/<lane>/backlog/, each one's event log
// folded into a backlog.Run (backlog.Reduce), and the run a --run flag
// names. The supervisor writes the log (and reads it to resume); views,
// `questions` and the commands read it here without importing the loop.
package runlog

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

// Root is where a lane's backlog runs live.
func Root(laneStateDir string) string { return filepath.Join(laneStateDir, "backlog") }

// Events reads a run directory's event log; a missing log is empty.
// Corrupt lines are returned as "path:line" in bad, never fatal.
func Events(dir string) (evs []backlog.Event, bad []string, err error) {
	evs, bad, err = jsonfile.ReadLines[backlog.Event](filepath.Join(dir, EventsFile))
	if err != nil && !os.IsNotExist(err) {
		return nil, bad, fmt.Errorf("backlog run %s: %w", dir, err)
	}
	return evs, bad, nil
}

// Read reads and reduces one backlog run directory. Corrupt lines are
// returned as "path:line" in bad, never fatal.
func Read(dir string) (*backlog.Run, []string, error) {
	evs, bad, err := Events(dir)
	if err != nil {
		return nil, bad, err
	}
	return backlog.Reduce(evs), bad, nil
}

// List returns a lane's backlog run directories, oldest first. Run ids
// start with their UTC start time to the second, so names sort by age
// except for runs started within one second: those are ordered by their
// first event's time.
func List(laneStateDir string) ([]string, error) {
	root := Root(laneStateDir)
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

// OpenDir returns the newest run of the lane that has not finished, or
// "" when every run finished.
func OpenDir(laneStateDir string) (string, error) {
	dirs, err := List(laneStateDir)
	if err != nil {
		return "", err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		r, _, err := Read(dirs[i])
		if err != nil {
			return "", err
		}
		if !r.Finished && r.Info.ID != "" {
			return dirs[i], nil
		}
	}
	return "", nil
}

// Find resolves --run ID (or, when id is empty, the newest run).
func Find(laneStateDir, id string) (string, error) {
	dirs, err := List(laneStateDir)
	if err != nil {
		return "", err
	}
	if len(dirs) == 0 {
		return "", fmt.Errorf("no backlog run in %s yet", Root(laneStateDir))
	}
	if id == "" {
		return dirs[len(dirs)-1], nil
	}
	for _, d := range dirs {
		if filepath.Base(d) == id {
			return d, nil
		}
	}
	return "", fmt.Errorf("backlog run %q not found in %s", id, Root(laneStateDir))
}
