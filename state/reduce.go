package state

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// RunFacts is what the reducer needs to know about one run directory,
// gathered by Load from runtime.json/status.json/agent.log and liveness.
type RunFacts struct {
	RunDir          string
	Disposition     string // runtime record terminalDisposition, "" if unreadable
	ExitCode        *int
	Signal          string
	StartedAt       *time.Time
	FinishedAt      *time.Time
	LastHeartbeatAt *time.Time
	LastOutputAt    *time.Time // when the agent last printed, as of its last heartbeat
	// Lost is set when liveness found the runner dead without a terminal
	// record (or its records unreadable); Reason says which.
	Lost       bool
	Reason     string
	Warnings   []string // liveness warnings of a live run (e.g. its tmux session is gone)
	LastMarker string
	Err        string // unreadable record, reported
	// Backend is the record's sessionBackend; Pod is a kubernetes run's
	// namespace/pod.
	Backend string
	Pod     string
	// AgentID, Executor and Usage are the record's agentId, executorId
	// and usage (its runner's high-water mark), so what reads the spend of
	// the runs observed (status) reads no record twice.
	AgentID  string
	Executor string
	Usage    *usage.Usage
}

// AgentInfo describes an agent in a wave_run started event.
type AgentInfo struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Role     string `json:"role"`
	Executor string `json:"executor"`
}

// WaveStarted is the data of a wave_run started event.
type WaveStarted struct {
	File        string      `json:"file"`
	MaxAttempts int         `json:"maxAttempts"`
	Agents      []AgentInfo `json:"agents"`
	Closure     []Stage     `json:"closure"`
}

// AgentRunData is the data of agent_run events.
type AgentRunData struct {
	AgentID     string `json:"agentId"`
	SessionName string `json:"sessionName,omitempty"`
	Executor    string `json:"executorId,omitempty"`
	RunDir      string `json:"runDir,omitempty"`
	LogPath     string `json:"logPath,omitempty"`
	ExitCode    *int   `json:"exitCode,omitempty"`
	Signal      string `json:"signal,omitempty"`
	StatusCode  string `json:"statusCode,omitempty"`
	Detail      string `json:"detail,omitempty"`
	// Usage is what a finished run spent (its runtime record's figure),
	// kept in the event log so a pruned run directory still counts.
	Usage *usage.Usage `json:"usage,omitempty"`
}

// Data converts a typed payload into an event's data map.
func Data(v any) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func decode(m map[string]any, v any) {
	b, _ := json.Marshal(m)
	_ = json.Unmarshal(b, v)
}

// Reduce is the one reducer: events (in append order) plus run facts and
// open blockers give the state of every wave seen (Fold over the whole
// log). Pure.
func Reduce(events []Event, runs map[string]RunFacts, blockers map[int][]Blocker, now time.Time) []Wave {
	return FoldEvents(events).Waves(runs, blockers, now)
}

const lastEventsKept = 12

// apply takes ev into its wave w; agents is w's agent index (Fold.agentsOf)
// for an agent_run event.
func apply(w *Wave, ev Event, agents map[string]int) {
	at := ev.RecordedAt
	w.UpdatedAt = &at
	switch ev.EntityType {
	case EntityWaveRun:
		applyWaveRun(w, ev)
	case EntityAttempt:
		if ev.Action == "running" {
			w.Attempt = ev.Attempt
			if p, _ := ev.Data["phase"].(string); p != "" {
				w.Phase = p
			}
		}
	case EntityAgentRun:
		applyAgentRun(w, agents, ev)
	case EntityClosure:
		phase, _ := ev.Data["phase"].(string)
		detail, _ := ev.Data["detail"].(string)
		for i := range w.Closure {
			if w.Closure[i].Phase == phase {
				w.Closure[i].State = ev.Action
				w.Closure[i].Detail = detail
			}
		}
		if ev.Action == StageRunning {
			w.Phase = phase
		}
	case EntityGate:
		var d struct {
			Failures []Failure `json:"failures"`
		}
		decode(ev.Data, &d)
		w.Failures = d.Failures
	case EntityQuestion:
		applyQuestion(w, ev)
	case EntityUsageLimit:
		applyUsageLimit(w, ev)
	}
	w.setStatusWaiting()
	w.LastEvents = append(w.LastEvents, EventRef{At: at, Wave: ev.Wave, Message: Describe(ev)})
	if len(w.LastEvents) > lastEventsKept {
		w.LastEvents = w.LastEvents[len(w.LastEvents)-lastEventsKept:]
	}
}

func applyWaveRun(w *Wave, ev Event) {
	at := ev.RecordedAt
	switch ev.Action {
	case "started":
		var d WaveStarted
		decode(ev.Data, &d)
		// A question still waiting holds the new run of the wave too.
		waiting := slices.DeleteFunc(w.Questions, func(q Question) bool { return q.State == "answered" })
		*w = Wave{Wave: w.Wave, File: d.File, Status: WaveRunning, Phase: "implementation",
			MaxAttempts: d.MaxAttempts, StartedAt: &at, UpdatedAt: &at, LastEvents: w.LastEvents, Questions: waiting}
		for _, a := range d.Agents {
			w.Agents = append(w.Agents, Agent{ID: a.ID, Title: a.Title, Role: a.Role, Executor: a.Executor, State: AgentPending})
		}
		for _, s := range d.Closure {
			s.State = StagePending
			if s.Agents == nil {
				s.Agents = []string{}
			}
			w.Closure = append(w.Closure, s)
		}
	case WaveCompleted, WaveFailed, WaveBlocked, WaveStopped:
		w.Status = ev.Action
		w.FinishedAt = &at
		w.Paused = nil
		if ev.Action == WaveCompleted {
			w.Phase = "completed"
		}
		var d struct {
			Failures []Failure `json:"failures"`
		}
		decode(ev.Data, &d)
		if d.Failures != nil {
			w.Failures = d.Failures
		}
	}
}

func applyQuestion(w *Wave, ev Event) {
	var d QuestionData
	decode(ev.Data, &d)
	i := slices.IndexFunc(w.Questions, func(q Question) bool { return q.ID == ev.EntityID })
	if i < 0 {
		at := ev.RecordedAt
		w.Questions = append(w.Questions, Question{ID: ev.EntityID, AgentID: d.AgentID, Attempt: d.Attempt,
			Text: d.Text, Blocking: d.Blocking, State: "pending", AskedAt: &at})
		i = len(w.Questions) - 1
	}
	q := &w.Questions[i]
	switch ev.Action {
	case QuestionAnswered:
		at := ev.RecordedAt
		q.State, q.Answer, q.Operator, q.AnsweredAt = "answered", d.Answer, d.Operator, &at
	case QuestionUnanswered:
		q.State = "unanswered"
	}
}

// SetWaiting moves a running wave to waiting-for-input while a blocking
// question waits for a person, and back once none does; so does each
// agent whose run ended and whose blocking question waits (the one the
// launcher relaunches once it is answered), while the wave is not
// finished. What Fold.Waves and a questions overlay call on the views.
func (w *Wave) SetWaiting() {
	w.setStatusWaiting()
	w.markAsking()
}

// setStatusWaiting is SetWaiting for the wave's status alone: what the
// fold keeps (agents are marked on views only, so an answer can undo it).
func (w *Wave) setStatusWaiting() {
	switch {
	case w.Status == WaveRunning && w.Waiting():
		w.Status = WaveWaitingForInput
	case w.Status == WaveWaitingForInput && !w.Waiting():
		w.Status = WaveRunning
	}
}

// markAsking sets agents held by a question to waiting-for-input and
// gives the others back the state their run ended in.
func (w *Wave) markAsking() {
	open := w.Status == WaveRunning || w.Status == WaveWaitingForInput || w.Status == WaveInterrupted
	for i := range w.Agents {
		a := &w.Agents[i]
		if a.State == AgentWaitingForInput && a.ran != "" {
			a.State, a.ran = a.ran, ""
		}
		if open && runEnded(a.State) && w.asks(a.ID) {
			a.State, a.ran = AgentWaitingForInput, a.State
		}
	}
}

// asks reports whether agent id has a blocking question that waits.
func (w *Wave) asks(id string) bool {
	for _, q := range w.Questions {
		if q.AgentID == id && q.Blocking && q.State != "answered" {
			return true
		}
	}
	return false
}

// runEnded reports whether an agent state is the end of a run of its own
// (not a reused one): the launcher looks at its questions then.
func runEnded(s string) bool {
	switch s {
	case AgentCompleted, AgentFailed, AgentTimedOut, AgentLost, AgentTerminated, AgentStalled, AgentBudgetExceeded:
		return true
	}
	return false
}

func applyAgentRun(w *Wave, agents map[string]int, ev Event) {
	d := agentRunFields(ev.Data)
	i, ok := agents[d.AgentID]
	if !ok {
		w.Agents = append(w.Agents, Agent{ID: d.AgentID})
		i = len(w.Agents) - 1
		agents[d.AgentID] = i
	}
	a := &w.Agents[i]
	at := ev.RecordedAt
	switch ev.Action {
	case "started":
		*a = Agent{ID: a.ID, Title: a.Title, Role: a.Role, Executor: a.Executor, State: AgentLaunching,
			Attempt: runAttempt(a.Attempt, ev), StartedAt: &at, SessionName: d.SessionName, RunDir: d.RunDir, LogPath: d.LogPath}
		if d.Executor != "" {
			a.Executor = d.Executor
		}
	case AgentReused:
		a.State = AgentReused
		a.RunDir, a.LogPath, a.Detail = d.RunDir, d.LogPath, d.Detail
		a.ExitCode = d.ExitCode
	default: // terminal outcomes
		a.State = ev.Action
		a.FinishedAt = &at
		a.ExitCode, a.Signal, a.StatusCode, a.Detail = d.ExitCode, d.Signal, d.StatusCode, d.Detail
	}
}

// runAttempt is an agent's attempt once ev started a run of it, prev its
// attempt before: the wave's attempt, or one more than prev when the
// agent already ran in this wave run (a relaunch with an answer is a run
// of its own too); an adopted run is the run it was.
func runAttempt(prev int, ev Event) int {
	if adopted, _ := ev.Data["adopted"].(bool); adopted {
		return max(ev.Attempt, prev)
	}
	if prev > 0 {
		return max(ev.Attempt, prev+1)
	}
	return ev.Attempt
}

// overlay brings live run facts into an agent the events still show as
// in flight: the record is the truth even when the launcher is gone.
func overlay(a *Agent, runs map[string]RunFacts, now time.Time) {
	f, ok := runs[a.RunDir]
	if !ok || a.RunDir == "" {
		return
	}
	if f.LastMarker != "" {
		a.LastMarker = f.LastMarker
	}
	if f.Backend == BackendKubernetes {
		// No tmux session: the run is a pod, attached through the API.
		a.Backend, a.Pod, a.SessionName = f.Backend, f.Pod, ""
	}
	if f.StartedAt != nil && a.State != AgentReused {
		a.StartedAt = f.StartedAt // an adopted run started before its adoption event
	}
	if a.State != AgentLaunching && a.State != AgentRunning {
		return
	}
	if f.Err != "" {
		a.Detail = f.Err
	}
	switch f.Disposition {
	case "running":
		a.State = AgentRunning
	case AgentCompleted, AgentFailed, AgentTerminated, AgentStalled, AgentBudgetExceeded, AgentUsageLimited:
		a.State = f.Disposition
		a.ExitCode, a.Signal, a.FinishedAt = f.ExitCode, f.Signal, f.FinishedAt
	}
	if f.Lost && a.State == AgentRunning || f.Lost && a.State == AgentLaunching {
		a.State = AgentLost
		a.Detail = f.Reason
		if a.Detail == "" {
			a.Detail = "runner died without a terminal record"
		}
	}
	if a.State != AgentRunning {
		return
	}
	if len(f.Warnings) > 0 {
		a.Detail = strings.Join(f.Warnings, "; ")
	}
	if f.LastHeartbeatAt != nil {
		age := now.Sub(*f.LastHeartbeatAt).Milliseconds()
		a.HeartbeatAgeMs = &age
	}
	if f.LastOutputAt != nil {
		age := now.Sub(*f.LastOutputAt).Milliseconds()
		a.OutputAgeMs = &age
	}
}

// Describe renders an event as one human line.
func Describe(ev Event) string {
	switch ev.EntityType {
	case EntityAgentRun:
		id, _ := ev.Data["agentId"].(string)
		s := fmt.Sprintf("%s %s (attempt %d)", id, ev.Action, ev.Attempt)
		if code, _ := ev.Data["statusCode"].(string); code != "" && ev.Action != AgentCompleted {
			s += ": " + code
		}
		return s
	case EntityClosure:
		p, _ := ev.Data["phase"].(string)
		return fmt.Sprintf("closure %s %s", p, ev.Action)
	case EntityAttempt:
		return fmt.Sprintf("attempt %d %s", ev.Attempt, ev.Action)
	case EntityWaveRun:
		return fmt.Sprintf("wave %d %s", ev.Wave, ev.Action)
	case EntityGate:
		p, _ := ev.Data["phase"].(string)
		ok, _ := ev.Data["ok"].(bool)
		if ok {
			return fmt.Sprintf("gate %s passed", p)
		}
		return fmt.Sprintf("gate %s failed", p)
	case EntityQuestion:
		id, _ := ev.Data["agentId"].(string)
		return fmt.Sprintf("question %s of %s %s", ev.EntityID, id, ev.Action)
	case EntityUsageLimit:
		exec, _ := ev.Data["executor"].(string)
		if ev.Action == UsageResumed {
			return fmt.Sprintf("%s usage limit passed; its agents go on", exec)
		}
		until, _ := ev.Data["until"].(string)
		return fmt.Sprintf("paused: %s usage limit until %s", exec, until)
	case EntityRetry:
		if ev.Action == CodeFallbackBlocked {
			id, _ := ev.Data["agentId"].(string)
			exec, _ := ev.Data["executorId"].(string)
			return fmt.Sprintf("%s: fallback to %s blocked by the runtime mix target", id, exec)
		}
		return fmt.Sprintf("retry planned for attempt %d", ev.Attempt)
	}
	return ev.EntityType + " " + ev.Action
}

// agentRunFields is the AgentRunData the reducer uses (all but Usage),
// read off the map: agent_run events are most of a lane's log, and a
// JSON round trip of each was a sixth of `status` on 200 runs.
func agentRunFields(m map[string]any) AgentRunData {
	str := func(k string) string { s, _ := m[k].(string); return s }
	d := AgentRunData{AgentID: str("agentId"), SessionName: str("sessionName"), Executor: str("executorId"),
		RunDir: str("runDir"), LogPath: str("logPath"), Signal: str("signal"), StatusCode: str("statusCode"),
		Detail: str("detail")}
	switch n := m["exitCode"].(type) {
	case float64: // as decoded from JSON
		c := int(n)
		d.ExitCode = &c
	case int:
		d.ExitCode = &n
	}
	return d
}

// applyUsageLimit opens, extends or ends an executor's pause.
func applyUsageLimit(w *Wave, ev Event) {
	str := func(k string) string { s, _ := ev.Data[k].(string); return s }
	exec := str("executor")
	i := slices.IndexFunc(w.Paused, func(p UsagePause) bool { return p.Executor == exec })
	if ev.Action == UsageResumed {
		if i >= 0 {
			w.Paused = slices.Delete(w.Paused, i, i+1)
		}
		return
	}
	if i < 0 {
		w.Paused = append(w.Paused, UsagePause{Executor: exec})
		i = len(w.Paused) - 1
	}
	p := &w.Paused[i]
	if t, err := time.Parse(time.RFC3339, str("until")); err == nil && t.After(p.Until) {
		p.Until = t
	}
	if d := str("detail"); d != "" {
		p.Detail = d
	}
	if a := str("agentId"); a != "" && !slices.Contains(p.Agents, a) {
		p.Agents = append(p.Agents, a)
	}
}
