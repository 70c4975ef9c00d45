package runs

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// Spec is one agent run to launch: what a wave agent's run, a backlog
// worker's and a reviewer's differ in. Everything else of the payload
// comes from the lane.
type Spec struct {
	What    string // names the run in errors: "wave 3 agent A1", "#12", "review #12"
	Lane    *config.Lane
	Layout  lanes.Layout
	RunID   string
	RunDir  string
	Cwd     string // the agent's working directory
	Session string // its tmux session's name
	// Prompt is written, as is, to RunDir's prompt file.
	Prompt string
	// Build says what to run; its Lane, RunDir, PromptPath and LogPath
	// are filled in here.
	Build          executor.BuildInput
	WaveNumber     int
	PromptHash     string
	OrchestratorID string
	// Minutes bounds the run. Unless FixedMinutes, its executor's
	// deadline (the lane timeout or its budget.minutes, the smaller)
	// shortens it.
	Minutes      int
	FixedMinutes bool
	// NoRateLimitRetry: a run that hits a rate limit fails instead of
	// waiting and retrying (a reviewer).
	NoRateLimitRetry bool
	// SilenceMs has the runner warn of an agent silent that long (0: never).
	SilenceMs int
	// Sandbox, when set, confines the run (its Cwd is the checkout);
	// the executor's needs and the run's own input files are added here.
	Sandbox *runtime.Sandbox
}

// Payload writes s's prompt into its run dir and returns the run's
// launch payload and the minutes its deadline is from now. The deadline
// is counted from the real clock, never a loop's own (test) clock: the
// runner, another process, reads it on the real one.
func Payload(s Spec) (p *runtime.Payload, minutes int, err error) {
	if err := jsonfile.MkdirAll(s.RunDir); err != nil {
		return nil, 0, fmt.Errorf("%s: run dir %s: %w", s.What, s.RunDir, err)
	}
	promptPath := filepath.Join(s.RunDir, lanes.PromptFile)
	if err := jsonfile.WriteFile(promptPath, []byte(s.Prompt)); err != nil {
		return nil, 0, fmt.Errorf("%s: prompt %s: %w", s.What, promptPath, err)
	}
	logPath := filepath.Join(s.RunDir, lanes.LogFile)
	in := s.Build
	in.Lane, in.RunDir, in.PromptPath, in.LogPath = s.Lane, s.RunDir, promptPath, logPath
	spec, err := executor.Build(in)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", s.What, err)
	}
	minutes = s.Minutes
	if !s.FixedMinutes && spec.DeadlineMinutes > 0 && spec.DeadlineMinutes < minutes {
		minutes = spec.DeadlineMinutes
	}
	rateLimit := spec.RateLimit
	if s.NoRateLimitRetry {
		rateLimit = runtime.RateLimit{}
	}
	deadline := time.Now().Add(time.Duration(minutes) * time.Minute)
	rt := s.Lane.Runtime
	return &runtime.Payload{
		SchemaVersion: runtime.SchemaVersion, RunID: s.RunID, Lane: s.Lane.Name, WaveNumber: s.WaveNumber,
		Attempt: in.Attempt, AgentID: in.Agent.ID, ExecutorID: in.Resolved.ID, OrchestratorID: s.OrchestratorID,
		PromptHash: s.PromptHash, Argv: spec.Argv, Env: spec.Env, EnvFilter: spec.EnvFilter,
		PrivateEnv: spec.PrivateEnv, PrivateFiles: spec.PrivateFiles, Stdin: spec.Stdin,
		Cwd: s.Cwd, RunDir: s.RunDir, PromptPath: promptPath, LogPath: logPath,
		StatusPath: filepath.Join(s.RunDir, lanes.StatusFile), RuntimePath: filepath.Join(s.RunDir, lanes.RuntimeFile),
		SocketName: s.Layout.Socket(), SessionName: s.Session,
		HeartbeatIntervalMs: rt.HeartbeatIntervalMs, RateLimit: rateLimit, DeadlineAt: &deadline,
		TerminateGraceMs: rt.TerminateGraceMs, SilenceMs: s.SilenceMs, MaxLogBytes: int64(rt.MaxLogBytes),
		Usage: executor.UsagePolicy(in.Resolved, s.Lane), Sandbox: sandboxOf(s.Sandbox, in.Resolved.ID, promptPath, spec),
	}, minutes, nil
}

// sandboxOf completes a run's sandbox: the executor's needs, and its
// prompt and overlay files (in the run directory, which the sandbox
// does not otherwise see) read-only.
func sandboxOf(sb *runtime.Sandbox, executorID, promptPath string, spec executor.Spec) *runtime.Sandbox {
	if sb == nil {
		return nil
	}
	out := *sb
	out.Needs = executor.SandboxNeeds(executorID)
	out.ReadOnly = append(append([]string{promptPath}, spec.Files...), sb.ReadOnly...)
	if spec.Stdin != "" && spec.Stdin != promptPath {
		out.ReadOnly = append(out.ReadOnly, spec.Stdin)
	}
	return &out
}
