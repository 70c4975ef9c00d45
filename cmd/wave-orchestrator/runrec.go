package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// Run states of a submitted (or --state-file) run.
const (
	runQueued    = "queued"
	runRunning   = "running"
	runCompleted = "completed"
	runFailed    = "failed"
	runStopped   = "stopped"
)

// submittedRun is one submitted run's state file, written only by `submit`
// (queued) and then by its watcher; `launch --state-file` writes the same
// shape for a foreground run.
type submittedRun struct {
	SchemaVersion int        `json:"schemaVersion"`
	RunID         string     `json:"runId"`
	Lane          string     `json:"lane"`
	State         string     `json:"state"`
	Command       string     `json:"command"` // launch or resume
	Args          []string   `json:"args"`    // its flags, as given to submit
	Pid           int        `json:"pid"`     // the launcher's, 0 before it starts
	ExitCode      *int       `json:"exitCode"`
	Why           string     `json:"why"`
	Restarts      int        `json:"restarts"`
	SubmittedAt   time.Time  `json:"submittedAt"`
	StartedAt     *time.Time `json:"startedAt"`
	FinishedAt    *time.Time `json:"finishedAt"`
}

func (r *submittedRun) terminal() bool {
	return r.State == runCompleted || r.State == runFailed || r.State == runStopped
}

// finish records the launcher's end: exit code, the state it means and why.
func (r *submittedRun) finish(code int, why string) {
	now := time.Now().UTC()
	r.ExitCode, r.FinishedAt, r.Why = &code, &now, why
	switch {
	case code == 0:
		r.State = runCompleted
	case strings.Contains(why, "stopped on request"):
		r.State = runStopped
	default:
		r.State = runFailed
	}
}

// newRunID is sortable by submission time (the queue's FIFO order) and
// unique across processes.
func newRunID(now time.Time) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return now.UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(b)
}

// validRunID keeps a run id a plain file name.
func validRunID(id string) error {
	if id == "" || strings.ContainsAny(id, "/\\\x00") || id == "." || id == ".." || strings.HasPrefix(id, ".") {
		return fmt.Errorf("run id %q: not a run id", id)
	}
	return nil
}

// runStore is a lane's submitted runs: one JSON file each in dir.
type runStore struct{ dir string }

func (s runStore) path(id string) string { return filepath.Join(s.dir, id+".json") }

func (s runStore) write(r *submittedRun) error { return jsonfile.Write(s.path(r.RunID), r) }

func readSubmittedRun(path string) (*submittedRun, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r submittedRun
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("run record %s: %w", path, err)
	}
	return &r, nil
}

func (s runStore) read(id string) (*submittedRun, error) {
	if err := validRunID(id); err != nil {
		return nil, err
	}
	r, err := readSubmittedRun(s.path(id))
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, fmt.Errorf("no submitted run %s (looked in %s)", id, s.dir)
	}
	return r, err
}

// list is every readable record, oldest submission first; corrupt ones
// are returned as problems, never dropped silently.
func (s runStore) list() (recs []*submittedRun, bad []error) {
	names, _ := filepath.Glob(filepath.Join(s.dir, "*.json"))
	slices.Sort(names)
	for _, n := range names {
		r, err := readSubmittedRun(n)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		recs = append(recs, r)
	}
	slices.SortStableFunc(recs, func(a, b *submittedRun) int { return a.SubmittedAt.Compare(b.SubmittedAt) })
	return recs, bad
}

// active is the oldest queued or running run, nil when none.
func (s runStore) active() *submittedRun {
	recs, _ := s.list()
	for _, r := range recs {
		if !r.terminal() {
			return r
		}
	}
	return nil
}

// next is the oldest queued run, nil when none.
func (s runStore) next() *submittedRun {
	recs, _ := s.list()
	for _, r := range recs {
		if r.State == runQueued {
			return r
		}
	}
	return nil
}

// withStateFile runs a foreground launch that records its state at path
// (--state-file): running with this pid, then its end.
func withStateFile(path string, g *globals, resume bool, run func() error) error {
	now := time.Now().UTC()
	command := "launch"
	if resume {
		command = "resume"
	}
	r := &submittedRun{SchemaVersion: 1, RunID: newRunID(now), Lane: g.lane, State: runRunning, Command: command,
		Args: os.Args[1:], Pid: os.Getpid(), SubmittedAt: now, StartedAt: &now}
	if e, err := openLane(g); err == nil {
		r.Lane = e.lane.Name
	}
	if err := jsonfile.Write(path, r); err != nil {
		return fmt.Errorf("--state-file: %w", err)
	}
	err := run()
	code, why := exitcode.Failed, ""
	var ee *exitError
	switch {
	case err == nil:
		code = 0
	case errors.As(err, &ee):
		code = ee.code
		if ee.err != nil {
			why = ee.err.Error()
		}
	case isUsageError(err):
		code, why = exitcode.Usage, err.Error()
	default:
		why = err.Error()
	}
	r.finish(code, why)
	if werr := jsonfile.Write(path, r); werr != nil && err == nil {
		return fmt.Errorf("--state-file: %w", werr)
	}
	return err
}
