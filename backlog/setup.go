package backlog

// EvSetup is a worker checkout made ready to build (backlog.copyIgnored
// and backlog.setup, docs/merge-gate.md): Issue, Worktree (the checkout),
// Outcome (a Setup* outcome), Attempt (the try, from 1), Detail (why it
// failed, one line). Recorded before each try (running) and after it, so
// a restarted supervisor neither runs a passed setup again nor loses
// count of the failed tries; reset when the checkout it ran in is gone
// and will be made again.
const EvSetup = "setup"

// Outcomes of EvSetup.
const (
	SetupRunning = "running"
	SetupPassed  = "passed"
	SetupFailed  = "failed"
	SetupReset   = "reset"
)

// SetupState is where an issue's checkout is with its setup.
type SetupState struct {
	Worktree string `json:"worktree"`
	Outcome  string `json:"outcome"`
	// Tries counts the tries in this checkout that failed.
	Tries  int    `json:"tries,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Ready reports whether setup passed in the checkout at worktree.
func (st *SetupState) Ready(worktree string) bool {
	return st != nil && st.Worktree == worktree && st.Outcome == SetupPassed
}

// FailedTries is how many tries failed in the checkout at worktree.
func (st *SetupState) FailedTries(worktree string) int {
	if st == nil || st.Worktree != worktree {
		return 0
	}
	return st.Tries
}

func (is *IssueRun) setup(ev Event) {
	if ev.Outcome == SetupReset {
		is.Setup = nil
		return
	}
	if is.Worktree == "" {
		// A checkout whose setup failed before any worker ran is still
		// the issue's: status shows it, prune and a later run find it.
		is.Worktree = ev.Worktree
	}
	st := is.Setup
	if st == nil || st.Worktree != ev.Worktree {
		st = &SetupState{Worktree: ev.Worktree}
		is.Setup = st
	}
	st.Outcome, st.Detail = ev.Outcome, ev.Detail
	if ev.Outcome == SetupFailed {
		st.Tries++
	}
}
