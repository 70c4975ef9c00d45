// Package submitted owns a lane's submitted runs (docs/submitted-runs.md):
// the queue `submit` and `autonomous` add to, the run records (one JSON
// file each, which `wait` and `status --run-id` read), the two locks
// that keep one watcher per lane, and the watcher that runs the queue
// one launcher at a time once the lane is free, restarts a launcher
// killed by a signal once, and records how each run ended: stopped when
// the lane's control file or the launcher's events say so, failed with
// the wave's failures or the launcher's last word.
//
// The watcher runs the launcher as a child process through package
// runtime (the one package that signals processes); where the watcher
// itself runs (a tmux session) is the caller's choice, given to Submit.
package submitted

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

// States of a submitted (or --state-file) run.
const (
	Queued    = "queued"
	Running   = "running"
	Completed = "completed"
	Failed    = "failed"
	Stopped   = "stopped"
)

// Run is one submitted run's record, written by `submit` (queued) and
// then only by its watcher; `launch --state-file` writes the same shape
// for a foreground run.
type Run struct {
	SchemaVersion int        `json:"schemaVersion"`
	RunID         string     `json:"runId"`
	Lane          string     `json:"lane"`
	State         string     `json:"state"`
	Command       string     `json:"command"` // launch or resume; backlog for a backlog run (args start with run)
	Args          []string   `json:"args"`    // its flags, as given to submit
	Pid           int        `json:"pid"`     // the launcher's, 0 before it starts
	ExitCode      *int       `json:"exitCode"`
	Why           string     `json:"why"`
	Restarts      int        `json:"restarts"`
	SubmittedAt   time.Time  `json:"submittedAt"`
	StartedAt     *time.Time `json:"startedAt"`
	FinishedAt    *time.Time `json:"finishedAt"`
}

// NewRun is a run of command (launch or resume) with the launcher's
// args, in state, submitted now.
func NewRun(lane, state, command string, args []string, now time.Time) *Run {
	now = now.UTC()
	return &Run{SchemaVersion: 1, RunID: NewRunID(now), Lane: lane, State: state, Command: command, Args: args, SubmittedAt: now}
}

// Terminal reports whether the run has ended.
func (r *Run) Terminal() bool {
	return r.State == Completed || r.State == Failed || r.State == Stopped
}

// Finish records the launcher's end: its exit code, whether a person
// stopped it, and why (on a run that passed: what happened on the way).
// Exit 0 is completed whatever stopped says.
func (r *Run) Finish(code int, stopped bool, why string) {
	now := time.Now().UTC()
	r.ExitCode, r.FinishedAt, r.Why = &code, &now, why
	switch {
	case code == 0:
		r.State = Completed
	case stopped:
		r.State = Stopped
	default:
		r.State = Failed
	}
}

// ExitStatus is the exit code `wait` gives for the ended run: the
// launcher's, or 1 when it has none a process can exit with.
func (r *Run) ExitStatus() int {
	if r.ExitCode == nil || *r.ExitCode < 0 || *r.ExitCode > 255 {
		return exitcode.Failed
	}
	return *r.ExitCode
}

// NewRunID is sortable by submission time (the queue's order) and
// unique across processes.
func NewRunID(now time.Time) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return now.UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(b)
}

// ValidRunID keeps a run id a plain file name.
func ValidRunID(id string) error {
	if id == "" || strings.ContainsAny(id, "/\\\x00") || id == "." || id == ".." || strings.HasPrefix(id, ".") {
		return fmt.Errorf("run id %q: not a run id", id)
	}
	return nil
}

// ReadFile reads a run record at path (a --state-file too).
func ReadFile(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("run record %s: %w", path, err)
	}
	return &r, nil
}

// WriteFile writes r at path, atomically.
func WriteFile(path string, r *Run) error { return jsonfile.Write(path, r) }

// store is the records of a lane's submitted runs: one JSON file each in
// dir, named for the run id.
type store struct{ dir string }

func (s store) path(id string) string { return filepath.Join(s.dir, id+".json") }

func (s store) write(r *Run) error { return WriteFile(s.path(r.RunID), r) }

func (s store) read(id string) (*Run, error) {
	if err := ValidRunID(id); err != nil {
		return nil, err
	}
	r, err := ReadFile(s.path(id))
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, fmt.Errorf("no submitted run %s (looked in %s)", id, s.dir)
	}
	return r, err
}

// list is every readable record, oldest submission first; corrupt ones
// are returned as problems, never dropped silently.
func (s store) list() (recs []*Run, bad []error) {
	names, _ := filepath.Glob(filepath.Join(s.dir, "*.json"))
	slices.Sort(names)
	for _, n := range names {
		r, err := ReadFile(n)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		recs = append(recs, r)
	}
	slices.SortStableFunc(recs, func(a, b *Run) int { return a.SubmittedAt.Compare(b.SubmittedAt) })
	return recs, bad
}

// first is the oldest run that keep accepts, nil when none.
func (s store) first(keep func(*Run) bool) *Run {
	recs, _ := s.list()
	for _, r := range recs {
		if keep(r) {
			return r
		}
	}
	return nil
}
