package backlog

// EvProcess is a process of the repository's code the supervisor runs
// itself (backlog.verify, backlog.setup), not a worker: Outcome started,
// with Issue, Detail (verify or setup), Worktree (the checkout it runs
// in) and Proc, recorded after the process exists and before it runs
// anything (docs/merge-gate.md, "The pipeline"), so a supervisor killed
// under it leaves its identity behind; or Outcome ended, Issue 0: every
// process recorded before it is gone (the next supervisor ended those
// still running).
const EvProcess = "process"

// Outcomes of EvProcess.
const (
	ProcessStarted = "started"
	ProcessEnded   = "ended"
)

// ProcID names one process for its whole life: its pid and its start
// time (clock ticks since boot, /proc/<pid>/stat), so a pid reused since
// is never taken for it. Its session (the process it leads) is where
// its children run.
type ProcID struct {
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// Process is one recorded process of the repository's code.
type Process struct {
	Issue int    `json:"issue"`
	What  string `json:"what"` // verify | setup
	Dir   string `json:"dir"`
	ProcID
}

func (r *Run) process(ev Event) {
	switch {
	case ev.Outcome == ProcessEnded:
		r.Processes = nil
	case ev.Outcome == ProcessStarted && ev.Proc != nil:
		r.Processes = append(r.Processes, Process{Issue: ev.Issue, What: ev.Detail, Dir: ev.Worktree, ProcID: *ev.Proc})
	}
}
