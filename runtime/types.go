// Package runtime starts, observes and terminates agent runs. A run is one
// tmux session whose pane runs `wave-orchestrator agent-run --payload
// <run>/launch.json`; the runner owns the agent's process group and writes
// the run's runtime record and status file, which are the truth about
// liveness. It also starts processes held until their identity is on
// record (StartHeld) and ends what a dead starter left running
// (EndSessions). Only this package signals processes. (A kubernetes run is a
// pod whose runner reports through the cluster instead, and package kube
// writes its records; Classify judges both.)
package runtime

import (
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/sandbox"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// SchemaVersion of runtime.json, status.json and launch.json.
const SchemaVersion = 1

// Dispositions of a runtime record.
const (
	Launching  = "launching"
	Running    = "running"
	Completed  = "completed"
	Failed     = "failed"
	Terminated = "terminated"
)

// Payload is launch.json: everything the runner needs to start one agent.
// It is also the dry-run preview, so secret env values are redacted when
// written (see Redacted); real values travel in the run's env file.
type Payload struct {
	SchemaVersion  int    `json:"schemaVersion"`
	RunID          string `json:"runId"` // e.g. w0-A1-a1
	Lane           string `json:"lane"`
	WaveNumber     int    `json:"waveNumber"`
	Attempt        int    `json:"attempt"`
	AgentID        string `json:"agentId"`
	ExecutorID     string `json:"executorId"`
	OrchestratorID string `json:"orchestratorId"`
	PromptHash     string `json:"promptHash"`

	// Argv is the agent command; never passed through a shell by us.
	Argv []string `json:"argv"`
	// Env is added to the agent environment (after the filter).
	Env map[string]string `json:"env"`
	// EnvFilter says which inherited variables the agent loses.
	EnvFilter
	// PrivateEnv names Env entries whose values are secret whatever their
	// names (a claude settingsJson's env): redacted like a secret-looking
	// one.
	PrivateEnv []string `json:"privateEnv,omitempty"`
	// PrivateFiles are generated files the agent reads at start (claude
	// settings, opencode config): mode 0600, removed when the run ends.
	PrivateFiles []string `json:"privateFiles,omitempty"`
	// Stdin, when set, is a file fed to the agent's stdin (codex reads its
	// prompt there); otherwise stdin is the pty.
	Stdin string `json:"stdin,omitempty"`
	Cwd   string `json:"cwd"`

	RunDir      string `json:"runDir"`
	PromptPath  string `json:"promptPath"`
	LogPath     string `json:"logPath"`
	StatusPath  string `json:"statusPath"`
	RuntimePath string `json:"runtimePath"`

	SocketName  string `json:"socketName"`
	SessionName string `json:"sessionName"`

	HeartbeatIntervalMs int       `json:"heartbeatIntervalMs"`
	RateLimit           RateLimit `json:"rateLimit"`
	// DeadlineAt is when the run is terminated (by the launcher, and by
	// the runner itself should no launcher be alive).
	DeadlineAt *time.Time `json:"deadlineAt,omitempty"`
	// TerminateGraceMs is the TERM → KILL grace (default 5000), for the
	// deadline and for every signal the runner forwards.
	TerminateGraceMs int `json:"terminateGraceMs,omitempty"`
	// SilenceMs, when positive, is how long the agent may print nothing
	// before the runner stops it as stalled (0: never).
	SilenceMs int `json:"silenceMs,omitempty"`
	// MaxLogBytes, when positive, bounds agent.log and its rotated
	// segments (see openLog); 0 keeps the whole log.
	MaxLogBytes int64 `json:"maxLogBytes,omitempty"`
	// RecordRetryMs is how long the runner keeps trying to write
	// status.json and the terminal record when writes fail, as on a full
	// disk (default 30000).
	RecordRetryMs int `json:"recordRetryMs,omitempty"`
	// Kubernetes is set for a run the kubernetes backend started: the
	// runner then reports through the cluster (see Reporter) and keeps
	// its own record and status in $WAVE_POD_DIR, since the run's
	// records in RunDir are the launcher's to write.
	Kubernetes *KubeRun `json:"kubernetes,omitempty"`
	// Usage is how the runner meters the agent's spend (nil: not at all).
	Usage *UsagePolicy `json:"usage,omitempty"`
	// Checkout, when set, makes the runner own the agent's git checkout
	// (a pod has no disk shared with its supervisor): see Checkout.
	Checkout *Checkout `json:"checkout,omitempty"`
	// Sandbox, when set, confines the agent with bubblewrap
	// (docs/security-model.md): Cwd is its checkout.
	Sandbox *Sandbox `json:"sandbox,omitempty"`
}

// Sandbox is how the runner confines its agent: package sandbox's
// options as launch.json carries them. The runner, outside, serves the
// sandbox's proxy and records every host it refused.
type Sandbox struct {
	Bwrap string `json:"bwrap"`
	// GitWritable: the agent commits (a worker), so its checkout's git
	// metadata is writable; a reviewer's is not.
	GitWritable bool `json:"gitWritable,omitempty"`
	// Borrow are the object directories its checkout's git may read
	// (sandbox.Borrowed of the repository the checkout belongs to).
	Borrow []string `json:"borrow,omitempty"`
	// Writable and ReadOnly are more paths bound at their own path (the
	// run's prompt and overlay files, backlog.sandbox.readOnly).
	Writable []string `json:"writable,omitempty"`
	ReadOnly []string `json:"readOnly,omitempty"`
	// Needs is what the executor's CLI needs (its home files, its model
	// endpoint), declared by package executor.
	Needs sandbox.Needs `json:"needs,omitzero"`
	// AllowHosts are reachable besides the executor's model endpoint.
	AllowHosts []string `json:"allowHosts,omitempty"`
	// Network is sandbox.NetAllowlist (the default) or sandbox.NetNone.
	Network string `json:"network,omitempty"`
}

// UsagePolicy tells the runner how to meter a run (package usage reads
// the agent's output) and when to stop it for its spend.
type UsagePolicy struct {
	// Model is the run's configured model, for pricing when the output
	// names none.
	Model   string        `json:"model,omitempty"`
	Pricing usage.Pricing `json:"pricing"`
	// Cap is the run's budget: crossing it stops the agent like a stall
	// (TERM, grace, KILL) as budget-exceeded.
	Cap           usage.Cap `json:"cap,omitzero"`
	WarnAtPercent int       `json:"warnAtPercent,omitempty"`
}

// KubeRun names a run's objects in its cluster: the Job, its Secret and
// the Lease the runner renews all have Name.
type KubeRun struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// LeaseDurationSeconds is the Lease's duration: a Lease not renewed
	// for that long means the runner is gone.
	LeaseDurationSeconds int `json:"leaseDurationSeconds"`
}

// Session backends of a record.
const (
	BackendTmux       = "tmux"
	BackendKubernetes = "kubernetes"
)

// RateLimit is the runner's retry policy for rate-limited agents: when the
// output of one start matches a rate-limit pattern and the agent exited
// non-zero, wait min(Base·2^(k-1), Max)+jitter and start it again, up to
// Retries more times. Retries 0 disables.
type RateLimit struct {
	Retries     int `json:"retries"`
	BaseDelayMs int `json:"baseDelayMs"`
	MaxDelayMs  int `json:"maxDelayMs"`
}

// Record is runtime.json. Written only by the runner (and by the launcher
// before the runner starts, as `launching`), always atomically.
type Record struct {
	SchemaVersion       int       `json:"schemaVersion"`
	RunID               string    `json:"runId"`
	Lane                string    `json:"lane"`
	WaveNumber          int       `json:"waveNumber"`
	Attempt             int       `json:"attempt"`
	AgentID             string    `json:"agentId"`
	ExecutorID          string    `json:"executorId"`
	SessionBackend      string    `json:"sessionBackend"` // BackendTmux or BackendKubernetes
	SocketName          string    `json:"socketName"`
	SessionName         string    `json:"sessionName"`
	RunnerPid           int       `json:"runnerPid"`
	RunnerStartTime     uint64    `json:"runnerStartTime"` // /proc/<pid>/stat field 22
	ExecutorPid         int       `json:"executorPid"`
	ExecutorStartTime   uint64    `json:"executorStartTime,omitempty"` // guards signals to the agent group
	Pgid                int       `json:"pgid"`
	StartedAt           time.Time `json:"startedAt"`
	LastHeartbeatAt     time.Time `json:"lastHeartbeatAt"`
	HeartbeatIntervalMs int       `json:"heartbeatIntervalMs"`
	TerminalDisposition string    `json:"terminalDisposition"`
	ExitCode            *int      `json:"exitCode"`
	Signal              string    `json:"signal,omitempty"` // e.g. SIGKILL
	ExitReason          string    `json:"exitReason,omitempty"`
	// Stalled marks a run the runner stopped because the agent printed
	// nothing for Payload.SilenceMs.
	Stalled bool `json:"stalled,omitempty"`
	// BudgetExceeded marks a run the runner stopped because its metered
	// usage reached Payload.Usage.Cap; ExitReason names the cap.
	BudgetExceeded bool `json:"budgetExceeded,omitempty"`
	// UsageLimit is set on a failed run whose agent CLI said its account
	// is out (a session or weekly limit, credits, a monthly cap): the run
	// is usage-limited, not failed at its work.
	UsageLimit *UsageLimit `json:"usageLimit,omitempty"`
	// BudgetWarning is set once the usage passed warnAtPercent of a cap.
	BudgetWarning string `json:"budgetWarning,omitempty"`
	// Usage is what the agent spent so far as its output reported it:
	// the live total while it runs (every heartbeat), the final one in
	// the terminal record; null when nothing reported any.
	Usage *usage.Usage `json:"usage"`
	// LastOutputAt is when the agent last printed, as of the last
	// heartbeat.
	LastOutputAt *time.Time `json:"lastOutputAt,omitempty"`
	// SessionLost: the run's tmux pane went away (kill-session,
	// kill-server) at SessionLostAt; the agent kept running and its
	// output went on to agent.log only.
	SessionLost   bool       `json:"sessionLost,omitempty"`
	SessionLostAt *time.Time `json:"sessionLostAt,omitempty"`
	// Lost marks a failed record written for a runner judged lost (the
	// kubernetes backend writes it when it decides): the verdict read
	// back from it stays lost.
	Lost       bool       `json:"lost,omitempty"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	// Kubernetes is where a kubernetes run lives: its Job and, once the
	// launcher saw it, its pod. Pids in a kubernetes record are the
	// pod's, not this machine's.
	Kubernetes *KubeRef `json:"kubernetes,omitempty"`
	LogPath    string   `json:"logPath"`
	StatusPath string   `json:"statusPath"`
	PromptHash string   `json:"promptHash"`
	// Git is the run's checkout as its runner last saw it (runs with a
	// Payload.Checkout only).
	Git *GitFacts `json:"git,omitempty"`
	// Sandbox is how the agent was confined: "bubblewrap", or empty when
	// it was not.
	Sandbox string `json:"sandbox,omitempty"`
	// BlockedHosts are the hosts (host:port) the sandbox's proxy refused
	// the agent, in order, each once (at most MaxBlockedHosts).
	BlockedHosts []string `json:"blockedHosts,omitempty"`
}

// MaxBlockedHosts bounds Record.BlockedHosts: a process trying host
// after host must not grow the record without end.
const MaxBlockedHosts = 32

// KubeRef locates a run in its cluster.
type KubeRef struct {
	Namespace string `json:"namespace"`
	Job       string `json:"job"`
	Pod       string `json:"pod,omitempty"`
	Node      string `json:"node,omitempty"`
}

// Status is status.json, written by the runner when the agent exits and
// before the terminal record. Code is the real exit code (128+n for
// signal n).
type Status struct {
	Code           int       `json:"code"`
	Signal         string    `json:"signal,omitempty"`
	PromptHash     string    `json:"promptHash"`
	OrchestratorID string    `json:"orchestratorId"`
	Attempt        int       `json:"attempt"`
	CompletedAt    time.Time `json:"completedAt"`
}
