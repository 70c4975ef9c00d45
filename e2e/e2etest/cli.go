package e2etest

import (
	"strings"
	"time"
)

// The binary's exit codes as its users see them (docs/exit-codes.md): the
// tests hold the binary to these numbers rather than to package main's
// constants, so a renumbering fails a test.
const (
	ExitFailed     = 1
	ExitUsage      = 2
	ExitLocked     = 32
	ExitNeedsHuman = 43
	// ExitTimeout is `wait`'s and `ask --wait`'s code when time ran out.
	ExitTimeout = 124
)

// `status --wait-change --exit-code` classes.
const (
	StatusCompleted     = 0
	StatusRunning       = 10
	StatusInputRequired = 20
	StatusChanged       = 30
	StatusFailed        = 40
)

// Submitted run states (SubmittedRun.State).
const (
	RunCompleted = "completed"
	RunFailed    = "failed"
	RunStopped   = "stopped"
)

// `autonomous` results (AutoResult.Result).
const (
	LaneCompleted  = "completed"
	LaneNeedsHuman = "needs-human"
	LaneFailed     = "failed"
)

// SubmittedRun is a submitted run's state file (`submit`, `launch
// --state-file`), as the tests read it.
type SubmittedRun struct {
	SchemaVersion int        `json:"schemaVersion"`
	RunID         string     `json:"runId"`
	Lane          string     `json:"lane"`
	State         string     `json:"state"`
	Command       string     `json:"command"`
	Args          []string   `json:"args"`
	Pid           int        `json:"pid"`
	ExitCode      *int       `json:"exitCode"`
	Why           string     `json:"why"`
	Restarts      int        `json:"restarts"`
	SubmittedAt   time.Time  `json:"submittedAt"`
	StartedAt     *time.Time `json:"startedAt"`
	FinishedAt    *time.Time `json:"finishedAt"`
}

// AutoResult is what `autonomous --json` prints.
type AutoResult struct {
	Lane   string `json:"lane"`
	Result string `json:"result"`
	Waves  []struct {
		Wave     int      `json:"wave"`
		RunIDs   []string `json:"runIds"`
		ExitCode int      `json:"exitCode"`
		State    string   `json:"state"`
	} `json:"waves"`
	StoppedAt *int   `json:"stoppedAt"`
	Why       string `json:"why"`
	ExitCode  int    `json:"exitCode"`
}

// BuildInfo is what `version --json` prints.
type BuildInfo struct {
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"time,omitempty"`
	Modified  bool   `json:"modified"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Terminal reports whether the run has ended.
func (r *SubmittedRun) Terminal() bool {
	return r.State == RunCompleted || r.State == RunFailed || r.State == RunStopped
}
