// Package control maps one wave of the reduced lane state (package state,
// the reducer behind `status --json`) onto the controller view
// `control status --json` prints: an execution, closure and controller
// state for the wave, the edge it is blocked on, one logical view per
// agent, and the wave's requests for a person. It is a pure function of
// its inputs; docs/status-schema.md documents the mapping.
package control

import (
	"slices"

	"github.com/wave-orchestrator/wave-orchestrator/coord"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// Execution states: whether agents of the wave are running.
const (
	ExecPending     = "pending"     // nothing has run in the wave
	ExecActive      = "active"      // an agent is launching or running
	ExecSettled     = "settled"     // the wave run ended; nothing runs
	ExecInterrupted = "interrupted" // the run is open but no launcher holds the lane
)

// Closure states: how far the wave's closure got.
const (
	ClosurePending    = "pending"    // no closure stage has started
	ClosureEvaluating = "evaluating" // a closure stage runs, or the attempt is still before closure
	ClosurePassed     = "passed"
	ClosureFailed     = "failed"
	ClosureBlocked    = "blocked" // an open blocking record holds closure
)

// Controller states: what the launcher is doing about the wave.
const (
	CtrlIdle        = "idle"   // no launcher works on the wave
	CtrlActive      = "active" // a launcher runs the wave
	CtrlWaitingUser = "waiting-human"
	CtrlRelaunch    = "relaunch-pending" // interrupted: the next launch or resume adopts it
)

// Logical agent states.
const (
	AgentPlanned   = "planned"     // not launched in this wave run
	AgentWorking   = "working"     // launching or running
	AgentSatisfied = "satisfied"   // completed, or reused from a proven run
	AgentRerun     = "needs-rerun" // failed, timed out, stalled or lost
	AgentBlocked   = "blocked"     // named by an open blocking record
	AgentStopped   = "stopped"     // terminated on request
)

// Blocking edge kinds.
const (
	EdgeHuman  = "human-input"  // a question or escalation for a person
	EdgeRecord = "coordination" // another open blocking record
	EdgeGate   = "gate"         // a gate failure ended the wave
)

// Status is the `control status --json` document.
type Status struct {
	SchemaVersion    int               `json:"schemaVersion"`
	Lane             string            `json:"lane"`
	Wave             int               `json:"wave"`
	AgentID          string            `json:"agentId"`
	Phase            string            `json:"phase"`
	Status           string            `json:"status"`
	Attempt          int               `json:"attempt"`
	MaxAttempts      int               `json:"maxAttempts"`
	ExecutionState   string            `json:"executionState"`
	ClosureState     string            `json:"closureState"`
	ControllerState  string            `json:"controllerState"`
	BlockingEdge     *Edge             `json:"blockingEdge"`
	LogicalAgents    []LogicalAgent    `json:"logicalAgents"`
	FeedbackRequests []FeedbackRequest `json:"feedbackRequests"`
}

// Edge is what the wave waits on.
type Edge struct {
	Kind    string `json:"kind"`
	ID      string `json:"id"`
	AgentID string `json:"agentId"`
	Detail  string `json:"detail"`
}

// LogicalAgent is one agent as the controller sees it.
type LogicalAgent struct {
	AgentID        string `json:"agentId"`
	Role           string `json:"role"`
	State          string `json:"state"`
	Reason         string `json:"reason"`
	ExecutionState string `json:"executionState"`
	ClosureState   string `json:"closureState"`
}

// FeedbackRequest is a coordination record that asks a person.
type FeedbackRequest struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	AgentID string `json:"agentId"`
	Status  string `json:"status"`
	State   string `json:"state"` // pending | answered | dismissed
	Summary string `json:"summary"`
	Detail  string `json:"detail"`
}

// PlannedAgent is an agent of a wave that has not run, from its wave file.
type PlannedAgent struct{ ID, Role string }

// Input is what the mapping reads.
type Input struct {
	Lane string
	// Wave is the reduced wave, nil when the wave has not run.
	Wave *state.Wave
	// Number and Planned describe a wave that has not run.
	Number  int
	Planned []PlannedAgent
	// Records is the wave's materialised coordination log.
	Records []coord.Record
	// Agent filters logicalAgents and feedbackRequests to one agent.
	Agent string
}

// humanKinds are the record kinds only a person answers.
var humanKinds = []string{"human-feedback", "human-escalation", "clarification-request"}

// FromWave builds the controller view of one wave.
func FromWave(in Input) Status {
	s := Status{SchemaVersion: 1, Lane: in.Lane, Wave: in.Number, AgentID: in.Agent,
		LogicalAgents: []LogicalAgent{}, FeedbackRequests: feedback(in.Records, in.Agent)}
	w := in.Wave
	if w == nil {
		s.Phase, s.Status = state.WavePending, state.WavePending
		s.ExecutionState, s.ClosureState, s.ControllerState = ExecPending, ClosurePending, CtrlIdle
		for _, a := range in.Planned {
			if in.Agent == "" || a.ID == in.Agent {
				s.LogicalAgents = append(s.LogicalAgents, LogicalAgent{AgentID: a.ID, Role: a.Role,
					State: AgentPlanned, ExecutionState: ExecPending, ClosureState: ClosurePending})
			}
		}
		return s
	}
	s.Wave, s.Phase, s.Status, s.Attempt, s.MaxAttempts = w.Wave, w.Phase, w.Status, w.Attempt, w.MaxAttempts
	s.ExecutionState = execution(w)
	s.BlockingEdge = edge(w)
	s.ClosureState = closure(w, s.BlockingEdge)
	s.ControllerState = controller(w, s.BlockingEdge)
	for _, a := range w.Agents {
		if in.Agent == "" || a.ID == in.Agent {
			s.LogicalAgents = append(s.LogicalAgents, logical(w, a))
		}
	}
	return s
}

func execution(w *state.Wave) string {
	switch w.Status {
	case state.WaveRunning, state.WaveWaitingForInput:
		// Between agents too (a gate, the next stage, a question to a
		// person while other agents go on): the run goes on.
		return ExecActive
	case state.WaveInterrupted:
		return ExecInterrupted
	case state.WavePending:
		return ExecPending
	}
	return ExecSettled
}

// edge is the first thing the wave waits on: a person before another
// record, a record before a failed gate.
func edge(w *state.Wave) *Edge {
	for _, b := range w.Blockers {
		if slices.Contains(humanKinds, b.Kind) {
			return &Edge{Kind: EdgeHuman, ID: b.ID, AgentID: b.AgentID, Detail: b.Summary}
		}
	}
	for _, q := range w.Questions {
		if q.Blocking && q.State != "answered" {
			return &Edge{Kind: EdgeHuman, ID: q.ID, AgentID: q.AgentID, Detail: q.Text}
		}
	}
	if len(w.Blockers) > 0 {
		b := w.Blockers[0]
		return &Edge{Kind: EdgeRecord, ID: b.ID, AgentID: b.AgentID, Detail: b.Summary}
	}
	if w.Status == state.WaveFailed || w.Status == state.WaveBlocked {
		for _, f := range w.Failures {
			return &Edge{Kind: EdgeGate, ID: f.Gate, AgentID: f.AgentID, Detail: joinCode(f)}
		}
	}
	return nil
}

func joinCode(f state.Failure) string {
	if f.Detail == "" {
		return f.StatusCode
	}
	return f.StatusCode + ": " + f.Detail
}

func closure(w *state.Wave, e *Edge) string {
	if w.Status == state.WaveCompleted {
		return ClosurePassed
	}
	if e != nil && e.Kind != EdgeGate {
		return ClosureBlocked
	}
	started := false
	for _, st := range w.Closure {
		switch st.State {
		case state.StageFailed:
			return ClosureFailed
		case state.StageRunning, state.StagePassed:
			started = true
		}
	}
	switch {
	case w.Status == state.WaveFailed || w.Status == state.WaveBlocked:
		return ClosureFailed
	case started:
		return ClosureEvaluating
	}
	return ClosurePending
}

func controller(w *state.Wave, e *Edge) string {
	switch {
	case e != nil && e.Kind == EdgeHuman, w.Status == state.WaveWaitingForInput:
		return CtrlWaitingUser
	case w.Status == state.WaveRunning:
		return CtrlActive
	case w.Status == state.WaveInterrupted:
		return CtrlRelaunch
	}
	return CtrlIdle
}

// logical maps one reduced agent; a closure agent's closure state is its
// stage's, an implementation agent's is whether its gate failed.
func logical(w *state.Wave, a state.Agent) LogicalAgent {
	la := LogicalAgent{AgentID: a.ID, Role: a.Role, Reason: a.StatusCode}
	switch a.State {
	case state.AgentPending:
		la.State, la.ExecutionState = AgentPlanned, ExecPending
	case state.AgentLaunching, state.AgentRunning:
		la.State, la.ExecutionState = AgentWorking, ExecActive
	case state.AgentCompleted, state.AgentReused:
		la.State, la.ExecutionState = AgentSatisfied, ExecSettled
	case state.AgentTerminated:
		la.State, la.ExecutionState = AgentStopped, ExecSettled
	case state.AgentWaitingForInput:
		// Its run ended; a person's answer relaunches it.
		la.State, la.ExecutionState, la.Reason = AgentBlocked, ExecSettled, state.AgentWaitingForInput
	default: // failed, timed-out, stalled, lost
		la.State, la.ExecutionState = AgentRerun, ExecSettled
	}
	if la.Reason == "" && la.State == AgentRerun {
		la.Reason = a.State
	}
	for _, b := range w.Blockers {
		if b.AgentID == a.ID {
			la.State, la.Reason = AgentBlocked, b.Kind+" "+b.ID
			break
		}
	}
	la.ClosureState = agentClosure(w, a, la)
	return la
}

func agentClosure(w *state.Wave, a state.Agent, la LogicalAgent) string {
	for _, st := range w.Closure {
		if !slices.Contains(st.Agents, a.ID) {
			continue
		}
		switch st.State {
		case state.StageRunning:
			return ClosureEvaluating
		case state.StagePassed, state.StageSkipped:
			return ClosurePassed
		case state.StageFailed:
			return ClosureFailed
		}
		return ClosurePending
	}
	for _, f := range w.Failures {
		if f.AgentID == a.ID {
			return ClosureFailed
		}
	}
	switch {
	case la.State == AgentBlocked:
		return ClosureBlocked
	case la.State == AgentSatisfied:
		return ClosurePassed
	case la.State == AgentRerun:
		return ClosureFailed
	}
	return ClosurePending
}

// feedback lists the records that ask a person, oldest first: pending
// while open, answered once resolved or closed, dismissed when cancelled
// or superseded.
func feedback(recs []coord.Record, agent string) []FeedbackRequest {
	out := []FeedbackRequest{}
	for _, r := range recs {
		if !slices.Contains(humanKinds, r.Kind) || agent != "" && r.AgentID != agent {
			continue
		}
		st := "answered"
		switch r.Status {
		case "open", "acknowledged", "in_progress":
			st = "pending"
		case "cancelled", "superseded":
			st = "dismissed"
		}
		out = append(out, FeedbackRequest{ID: r.ID, Kind: r.Kind, AgentID: r.AgentID, Status: r.Status,
			State: st, Summary: r.Summary, Detail: r.Detail})
	}
	return out
}
