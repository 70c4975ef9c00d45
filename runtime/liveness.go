package runtime

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// State is the launcher's view of a run.
type State string

// States of a run. Completed, Failed, Terminated, TimedOut, Stalled,
// BudgetExceeded, UsageLimited and Lost are final.
const (
	StateUnknown    State = "unknown"
	StateLaunching  State = "launching"
	StateRunning    State = "running"
	StateCompleted  State = "completed"
	StateFailed     State = "failed"
	StateTerminated State = "terminated"
	StateTimedOut   State = "timed-out"
	StateLost       State = "lost"
	// StateStalled is a run the runner stopped because its agent printed
	// nothing for the configured silence; it is retried like a failure.
	StateStalled State = "stalled"
	// StateBudgetExceeded is a run the runner stopped because its usage
	// reached its budget; it is not retried on the same budget.
	StateBudgetExceeded State = "budget-exceeded"
	// StateUsageLimited is a run whose agent CLI said its account is out
	// (Verdict.UsageLimit says until when): it waits for the reset, and
	// is neither a failure nor a retry.
	StateUsageLimited State = "usage-limited"
)

// SessionFacts is what tmux said about the run's session. Known is false
// when tmux was not asked or did not answer: indeterminate is not dead.
type SessionFacts struct {
	Known bool
	// Unanswered: tmux was asked and did not answer (a timeout, say).
	Unanswered bool
	Exists     bool
	Pane       *tmuxadapter.Pane // when the session exists and was inspected
}

// Facts is everything Classify decides from.
type Facts struct {
	Now    time.Time
	Record *Record // nil when missing or unreadable
	Status *Status // nil when missing or unreadable
	// RecordErr and StatusErr are set when the file exists but cannot be
	// read; RecordAge is then how long ago runtime.json was last written.
	RecordErr, StatusErr error
	RecordAge            time.Duration
	// HeartbeatInterval is launch.json's (0: the default).
	HeartbeatInterval time.Duration
	RunnerAlive       bool // runner pid alive with the recorded start time
	AgentAlive        bool // agent group leader alive with its recorded start time
	Session           SessionFacts
	Deadline          *time.Time
	// LaunchGrace is how long a launching record may wait for its runner
	// before a missing session means lost.
	LaunchGrace time.Duration
	// Kube is the cluster's word on a kubernetes run (nil: not asked).
	Kube *KubeFacts
}

// Verdict is the classification of one run.
type Verdict struct {
	State    State    `json:"state"`
	Done     bool     `json:"done"`
	ExitCode *int     `json:"exitCode,omitempty"`
	Signal   string   `json:"signal,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Terminate asks the caller to terminate the run (deadline passed, or
	// an agent outlived its runner).
	Terminate bool `json:"terminate,omitempty"`
	// UsageLimit is a usage-limited run's limit.
	UsageLimit *UsageLimit `json:"usageLimit,omitempty"`
}

// Classify decides a run's state, in this order: terminal record, status
// file, live runner, dead runner (lost, with tmux's pane status as second
// channel). It does no I/O.
func Classify(f Facts) Verdict {
	rec := f.Record
	if rec != nil && isTerminal(rec.TerminalDisposition) {
		v := Verdict{State: State(rec.TerminalDisposition), Done: true, ExitCode: rec.ExitCode, Signal: rec.Signal, Reason: rec.ExitReason}
		switch {
		case rec.TerminalDisposition == Terminated && rec.Stalled:
			v.State = StateStalled
		case rec.TerminalDisposition == Terminated && rec.BudgetExceeded:
			v.State = StateBudgetExceeded
		case rec.TerminalDisposition == Failed && rec.Lost:
			v.State = StateLost
		case rec.TerminalDisposition == Failed && rec.UsageLimit != nil:
			v.State, v.UsageLimit = StateUsageLimited, rec.UsageLimit
		case rec.TerminalDisposition == Terminated && f.Deadline != nil && rec.FinishedAt != nil && !rec.FinishedAt.Before(*f.Deadline):
			v.State = StateTimedOut
		}
		return v
	}
	if f.Status != nil && f.RunnerAlive {
		// The runner writes the status file, then its terminal record: a
		// live runner is still finishing, and only the record can say a
		// run was stalled or over its budget (not to be retried).
		return classifyLive(f)
	}
	if st := f.Status; st != nil {
		code := st.Code
		v := Verdict{Done: true, ExitCode: &code, Signal: st.Signal, Reason: "status file without terminal record"}
		switch {
		case st.Signal != "":
			v.State = StateTerminated
		case code == 0:
			v.State = StateCompleted
		default:
			v.State = StateFailed
		}
		return v
	}
	if rec == nil && f.RecordErr != nil {
		return classifyUnreadable(f)
	}
	if rec == nil {
		return Verdict{State: StateUnknown, Reason: "no runtime record"}
	}
	if rec.SessionBackend == BackendKubernetes {
		return classifyKube(f)
	}
	if f.RunnerAlive {
		return classifyLive(f)
	}
	if rec.RunnerPid == 0 {
		return classifyLaunching(f)
	}
	if v, ok := paneOutcome(f); ok {
		return v
	}
	if paneSettling(f) {
		return Verdict{State: StateLost, Reason: "runner died; waiting for tmux to report its pane's exit"}
	}
	v := Verdict{State: StateLost, Done: true, Reason: "runner died without a terminal record"}
	addPaneExit(&v, f.Session)
	if f.AgentAlive {
		v.Warnings = append(v.Warnings, fmt.Sprintf("agent pid %d outlived its runner", rec.ExecutorPid))
		v.Terminate = true
	}
	return v
}

func classifyLive(f Facts) Verdict {
	rec := f.Record
	v := Verdict{State: StateRunning}
	if rec.TerminalDisposition == Launching {
		v.State = StateLaunching
	}
	if age, every, stale := heartbeatStale(rec, f.Now); stale {
		v.Warnings = append(v.Warnings, fmt.Sprintf("heartbeat %s old (interval %s)", age.Round(time.Millisecond), every))
	}
	switch {
	case f.Session.Known && !f.Session.Exists:
		v.Warnings = append(v.Warnings, fmt.Sprintf("tmux session %s is gone but the runner is alive", rec.SessionName))
	case rec.SessionLost:
		v.Warnings = append(v.Warnings, fmt.Sprintf("tmux session %s was lost; the agent runs on, logging to agent.log", rec.SessionName))
	}
	if f.Deadline != nil && !f.Now.Before(*f.Deadline) {
		v.Terminate = true
		v.Reason = "deadline passed"
	}
	return v
}

// paneSettling reports a dead runner whose pane (the runner was its
// process) tmux has not finished with: not yet reaped, or closed but its
// exit status not yet recorded. Both last milliseconds, but the status is
// the outcome of a runner that could not record it (see paneOutcome), so
// the verdict waits for them up to paneSettleMax past the point where the
// heartbeat goes stale (heartbeats stop when writes fail).
func paneSettling(f Facts) bool {
	p := f.Session.Pane
	if f.Session.Unanswered {
		// Ask again: the pane may hold the outcome.
		age, every, _ := heartbeatStale(f.Record, f.Now)
		return age <= 3*every+paneSettleMax
	}
	if p == nil || p.Pid != f.Record.RunnerPid || p.Dead && (p.DeadStatus != nil || p.DeadSignal > 0) {
		return false
	}
	age, every, _ := heartbeatStale(f.Record, f.Now)
	return age <= 3*every+paneSettleMax
}

// paneSettleMax bounds the wait for tmux to record a dead pane's status.
const paneSettleMax = 10 * time.Second

// paneOutcome reads the outcome of a runner that exited on its own
// without recording it (its writes failed, say on a full disk) from tmux:
// the exit code it left on its session, else its pane's exit status (the
// runner exits with the agent's code). A runner killed by a signal is
// still lost, and so is one whose agent lives on.
func paneOutcome(f Facts) (Verdict, bool) {
	p := f.Session.Pane
	if p == nil || p.Pid != f.Record.RunnerPid || f.AgentAlive {
		return Verdict{}, false
	}
	var code int
	var from string
	switch {
	case p.ExitOption != nil:
		code, from = *p.ExitOption, "the exit code it left on its tmux session"
	case p.Dead && p.DeadStatus != nil && p.DeadSignal == 0:
		code, from = *p.DeadStatus, "its tmux pane's exit status"
	default:
		return Verdict{}, false
	}
	v := Verdict{State: StateFailed, Done: true, ExitCode: &code,
		Reason: fmt.Sprintf("runner could not record exit code %d; taken from %s", code, from)}
	if code == 0 {
		v.State = StateCompleted
	}
	return v, true
}

// classifyUnreadable handles a runtime.json that exists but does not
// parse (and no readable status). A live runner rewrites its record at
// every heartbeat, so one left corrupt for three intervals has no runner
// writing it: the run is lost, with the reason, and retried. Its pane, if
// still alive, is stopped.
func classifyUnreadable(f Facts) Verdict {
	reason := "corrupt record: " + f.RecordErr.Error()
	if f.StatusErr != nil {
		reason += "; corrupt status: " + f.StatusErr.Error()
	}
	every := f.HeartbeatInterval
	if every <= 0 {
		every = 2 * time.Second
	}
	if f.RecordAge < 3*every {
		return Verdict{State: StateUnknown, Reason: reason + "; waiting for its runner to rewrite it"}
	}
	v := Verdict{State: StateLost, Done: true, Reason: reason}
	if s := f.Session; s.Exists && s.Pane != nil && !s.Pane.Dead {
		v.Terminate = true
		v.Warnings = append(v.Warnings, fmt.Sprintf("its pane (pid %d) is still running", s.Pane.Pid))
	}
	return v
}

// heartbeatStale reports whether a live runner's last heartbeat is more
// than three intervals old.
func heartbeatStale(rec *Record, now time.Time) (age, every time.Duration, stale bool) {
	every = time.Duration(rec.HeartbeatIntervalMs) * time.Millisecond
	if every <= 0 {
		every = 2 * time.Second
	}
	age = now.Sub(rec.LastHeartbeatAt)
	return age, every, age > 3*every
}

// classifyLaunching handles a record the launcher wrote before the runner
// started.
func classifyLaunching(f Facts) Verdict {
	s := f.Session
	switch {
	case s.Known && s.Exists && s.Pane != nil && s.Pane.Dead:
		v := Verdict{State: StateLost, Done: true, Reason: "pane died before the runner wrote its record"}
		addPaneExit(&v, s)
		return v
	case s.Known && !s.Exists && f.Now.Sub(f.Record.StartedAt) > f.LaunchGrace:
		return Verdict{State: StateLost, Done: true, Reason: "session never started"}
	}
	v := Verdict{State: StateLaunching}
	if f.Deadline != nil && !f.Now.Before(*f.Deadline) {
		v.Terminate = true
		v.Reason = "deadline passed"
	}
	return v
}

// addPaneExit enriches a lost verdict with what tmux kept of the pane.
func addPaneExit(v *Verdict, s SessionFacts) {
	p := s.Pane
	if p == nil || !p.Dead {
		if s.Known && !s.Exists {
			v.Reason += "; session gone"
		}
		return
	}
	switch {
	case p.DeadSignal > 0:
		name := unix.SignalName(syscallSignal(p.DeadSignal))
		code := 128 + p.DeadSignal
		v.ExitCode, v.Signal = &code, name
		v.Reason += fmt.Sprintf("; pane died by %s", name)
	case p.DeadStatus != nil:
		code := *p.DeadStatus
		v.ExitCode = &code
		v.Reason += fmt.Sprintf("; pane exited with status %d", code)
	}
}

// isTerminal reports a final disposition (a stalled run is recorded as
// terminated, with Record.Stalled).
func isTerminal(d string) bool {
	return d == Completed || d == Failed || d == Terminated
}
