package state

import (
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// SchemaVersion of the lane state (`status --json`) and waves/<N>/state.json.
const SchemaVersion = 1

// Agent states.
const (
	AgentPending    = "pending"
	AgentLaunching  = "launching"
	AgentRunning    = "running"
	AgentCompleted  = "completed"
	AgentFailed     = "failed"
	AgentTimedOut   = "timed-out"
	AgentLost       = "lost"
	AgentTerminated = "terminated"
	AgentReused     = "reused"
	// AgentStalled: the runner stopped the agent after it printed nothing
	// for runtime.silenceMinutes; retried like a failure.
	AgentStalled = "stalled"
	// AgentBudgetExceeded: the runner stopped the agent when its metered
	// usage reached its budget; not retried on the same budget.
	AgentBudgetExceeded = "budget-exceeded"
	// AgentWaitingForInput: the agent's run ended with a blocking
	// question to a person still open, in a wave not finished: the
	// launcher holds the wave for the answer and relaunches the agent with
	// it. Its exit code stays the one of the run that asked.
	AgentWaitingForInput = "waiting-for-input"
	// AgentUsageLimited: the agent's CLI said its account is out; the
	// launcher relaunches it once the limit resets, without spending an
	// attempt.
	AgentUsageLimited = "usage-limited"
	// AgentNoProgress: the launcher stopped the agent after it kept
	// printing while its owned files did not change for
	// runtime.noProgressMinutes; retried like a stall.
	AgentNoProgress = "no-progress"
)

// Wave statuses.
const (
	WavePending   = "pending"
	WaveRunning   = "running"
	WaveCompleted = "completed"
	WaveFailed    = "failed"
	WaveBlocked   = "blocked"
	WaveStopped   = "stopped"
	// WaveInterrupted is a wave whose run is open in the event log while
	// no launcher holds the lane: its agents may still be running, and the
	// next launch or resume adopts them.
	WaveInterrupted = "interrupted"
	// WaveWaitingForInput is a running wave held by a blocking question
	// to a person: the launcher waits for the answer (agents that do not
	// need it keep running) and relaunches the agent that asked.
	WaveWaitingForInput = "waiting-for-input"
)

// CodeFallbackBlocked is the status code (and the retry event action) of
// a retry that cannot move a failed agent to any executor of its fallback
// chain: the one spelling launch output, the event log and `status
// --json` share.
const CodeFallbackBlocked = "retry-fallback-blocked"

// Stage states.
const (
	StagePending = "pending"
	StageRunning = "running"
	StagePassed  = "passed"
	StageFailed  = "failed"
	StageSkipped = "skipped"
)

// Lane is what `status --json` prints and the dashboard draws.
type Lane struct {
	SchemaVersion int        `json:"schemaVersion"`
	Lane          string     `json:"lane"`
	Socket        string     `json:"socket"`
	Launcher      *Launcher  `json:"launcher"`
	Waves         []Wave     `json:"waves"`
	Problems      []string   `json:"problems"` // unreadable files, reported not fatal
	GeneratedAt   time.Time  `json:"generatedAt"`
	LastEvents    []EventRef `json:"lastEvents"`
	// Notifications tallies the deliveries to the notify sinks recorded
	// in the lane's log; null when there are none.
	Notifications *Notifications `json:"notifications"`
	// Usage is what the lane's wave runs spent, every run counted once
	// (null when none reported usage).
	Usage *usage.Usage `json:"usage"`
}

// Launcher is the lane lock holder, if any.
type Launcher struct {
	Pid       int       `json:"pid"`
	Alive     bool      `json:"alive"`
	StartedAt time.Time `json:"startedAt"`
}

// Wave is the reduced state of one wave.
type Wave struct {
	Wave        int        `json:"wave"`
	File        string     `json:"file"`
	Status      string     `json:"status"`
	Phase       string     `json:"phase"`
	Attempt     int        `json:"attempt"`
	MaxAttempts int        `json:"maxAttempts"`
	StartedAt   *time.Time `json:"startedAt"`
	FinishedAt  *time.Time `json:"finishedAt"`
	UpdatedAt   *time.Time `json:"updatedAt"`
	Closure     []Stage    `json:"closure"`
	Agents      []Agent    `json:"agents"`
	Failures    []Failure  `json:"failures"`
	Blockers    []Blocker  `json:"blockers"`
	// Questions are the wave's questions to people, from its question
	// events (overlaid with the coordination log by `status`).
	Questions  []Question `json:"questions"`
	LastEvents []EventRef `json:"lastEvents"`
	// Usage is what the wave's runs spent, retries included.
	Usage *usage.Usage `json:"usage"`
	// Paused are the executors paused by a usage limit while the wave
	// runs: their agents relaunch at Until.
	Paused []UsagePause `json:"paused,omitempty"`
}

// UsagePause is an executor whose account is out, until when.
type UsagePause struct {
	Executor string    `json:"executor"`
	Until    time.Time `json:"until"`
	Detail   string    `json:"detail"` // the CLI's words (untrusted)
	Agents   []string  `json:"agents"`
}

// Question is a question an agent of the wave asked a person (the data
// of question events). Text and Answer are untrusted text.
type Question struct {
	ID         string     `json:"id"`
	AgentID    string     `json:"agentId"`
	Attempt    int        `json:"attempt"`
	Text       string     `json:"text"`
	Blocking   bool       `json:"blocking"`
	State      string     `json:"state"` // pending | answered | unanswered
	Answer     string     `json:"answer"`
	Operator   string     `json:"operator"`
	AskedAt    *time.Time `json:"askedAt"`
	AnsweredAt *time.Time `json:"answeredAt"`
}

// QuestionData is the data of question events.
type QuestionData struct {
	AgentID string `json:"agentId"`
	Attempt int    `json:"attempt"`
	Text    string `json:"text"`
	// Context is what the asker gave with the question (`ask --context`),
	// for the people told about it; untrusted text.
	Context  string `json:"context,omitempty"`
	Blocking bool   `json:"blocking"`
	Answer   string `json:"answer,omitempty"`
	Operator string `json:"operator,omitempty"`
}

// Waiting reports whether a blocking question of w waits for a person.
func (w *Wave) Waiting() bool {
	for _, q := range w.Questions {
		if q.Blocking && q.State != "answered" {
			return true
		}
	}
	return false
}

// Stage is one closure stage.
type Stage struct {
	Phase  string   `json:"phase"`
	State  string   `json:"state"`
	Agents []string `json:"agents"`
	Detail string   `json:"detail"`
}

// Agent is the reduced state of one agent of a wave.
type Agent struct {
	ID             string     `json:"id"`
	Title          string     `json:"title"`
	Role           string     `json:"role"`
	Executor       string     `json:"executor"`
	State          string     `json:"state"`
	Attempt        int        `json:"attempt"`
	StartedAt      *time.Time `json:"startedAt"`
	FinishedAt     *time.Time `json:"finishedAt"`
	ExitCode       *int       `json:"exitCode"`
	Signal         string     `json:"signal"`
	HeartbeatAgeMs *int64     `json:"heartbeatAgeMs"`
	OutputAgeMs    *int64     `json:"outputAgeMs"`
	SessionName    string     `json:"sessionName"`
	// Backend is "kubernetes" for an agent whose run is a pod (Pod is
	// its namespace/name once known); empty for tmux.
	Backend    string `json:"backend,omitempty"`
	Pod        string `json:"pod,omitempty"`
	RunDir     string `json:"runDir"`
	LogPath    string `json:"logPath"`
	LastMarker string `json:"lastMarker"`
	StatusCode string `json:"statusCode"`
	Detail     string `json:"detail"`
	// Usage is what the agent's runs in this wave spent, every attempt
	// counted; while it runs, its live figure.
	Usage *usage.Usage `json:"usage"`

	// ran is the state the agent's run ended in while a question holds
	// it as waiting-for-input (set on views only, never in a Fold).
	ran string
}

// BackendKubernetes is Agent.Backend of a run that is a pod.
const BackendKubernetes = "kubernetes"

// Failure is a gate or run failure users act on.
type Failure struct {
	AgentID    string `json:"agentId"`
	Gate       string `json:"gate"`
	StatusCode string `json:"statusCode"`
	Detail     string `json:"detail"`
	LogPath    string `json:"logPath"`
}

// Blocker is an open blocking coordination record.
type Blocker struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	AgentID string `json:"agentId"`
	Summary string `json:"summary"`
}

// EventRef is a short event line for views.
type EventRef struct {
	At      time.Time `json:"at"`
	Wave    int       `json:"wave"`
	Message string    `json:"message"`
}

// RunSpend is one run's spend, as package spend reads it.
type RunSpend struct {
	Wave  int
	Agent string
	Usage *usage.Usage
}

// ApplyUsage sets the usage of every agent, wave and the lane from runs.
func (l *Lane) ApplyUsage(runs []RunSpend) {
	type key struct {
		wave  int
		agent string
	}
	byAgent := map[key]usage.Usage{}
	byWave := map[int]usage.Usage{}
	for _, r := range runs {
		if r.Usage != nil {
			k := key{r.Wave, r.Agent}
			byAgent[k] = usage.Add(byAgent[k], *r.Usage)
			byWave[r.Wave] = usage.Add(byWave[r.Wave], *r.Usage)
		}
	}
	var lane usage.Usage
	for i := range l.Waves {
		w := &l.Waves[i]
		for j := range w.Agents {
			a := &w.Agents[j]
			a.Usage = byAgent[key{w.Wave, a.ID}].Ptr()
		}
		wt := byWave[w.Wave]
		w.Usage = wt.Ptr()
		lane = usage.Add(lane, wt)
	}
	l.Usage = lane.Ptr()
}
