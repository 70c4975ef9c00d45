// Package exitcode is the one table of the binary's process exit codes.
// Scripts written for the reference tool branch on them, so a code never
// changes meaning; docs/exit-codes.md documents each one, and a test
// keeps the two the same set.
package exitcode

// Codes of every command, the launcher and `backlog run`.
const (
	OK     = 0
	Failed = 1 // an error, a wave or an issue failed
	Usage  = 2 // a bad flag, command, lane or wave, found before anything starts
	// LaneBusy: another live launcher or supervisor holds the lane lock,
	// or `submit --no-queue` found a run active on the lane.
	LaneBusy = 32
	// ContQAOnly: every failure of the wave is cont-QA's verdict.
	ContQAOnly = 42
	// NeedsHuman: stopped with no safe retry; a person is needed (an open
	// blocking record, an unanswered question, a parked issue, no usable
	// executor).
	NeedsHuman = 43
	// Timeout: `wait`, `ask --wait`, `feedback watch` gave up after
	// --timeout-seconds (timeout(1)'s code).
	Timeout = 124
)

// The shell's codes for an agent's executor that could not be started:
// the runner reports them as the agent's own exit code, and the launcher
// reads them as "no usable executor" rather than as a failed run.
const (
	NotExecutable = 126
	NotFound      = 127
)

// Codes of `status --exit-code` (the reference's status and watch helper
// scripts' codes).
const (
	StatusCompleted     = 0
	StatusRunning       = 10
	StatusInputRequired = 20
	StatusChanged       = 30
	StatusFailed        = 40
)
