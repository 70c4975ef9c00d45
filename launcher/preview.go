package launcher

import (
	"path/filepath"

	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// PreviewFile is written into every run directory before the run starts
// (and in dry-run): what the agent is launched with and its resolved
// limits, each with where it came from.
const PreviewFile = "launch-preview.json"

// PreviewSchemaVersion is the version of launch-preview.json.
const PreviewSchemaVersion = 1

// LaunchPreview is launch-preview.json (docs/run-records.md).
type LaunchPreview struct {
	SchemaVersion int               `json:"schemaVersion"`
	RunID         string            `json:"runId"`
	Lane          string            `json:"lane"`
	Wave          int               `json:"wave"`
	Attempt       int               `json:"attempt"`
	AgentID       string            `json:"agentId"`
	ExecutorID    string            `json:"executorId"`
	SelectedBy    string            `json:"selectedBy"`
	Model         *string           `json:"model"`
	Argv          []string          `json:"argv"`
	Env           map[string]string `json:"env"` // secret-looking values redacted
	Stdin         string            `json:"stdin,omitempty"`
	Limits        executor.Limits   `json:"limits"`
}

// Timeout sources (Options.TimeoutSource) when the caller names none.
const (
	TimeoutFromConfig  = "runtime.timeoutMinutes"
	TimeoutFromDefault = "default"
)

func writePreview(p *runtime.Payload, r executor.Resolved, lim executor.Limits) error {
	red := runtime.Redacted(*p)
	// The default sticky key is no secret (its name only looks like one);
	// a value the user configured stays redacted.
	if v := p.Env[executor.StickyKeyEnv]; v == executor.StickyKey(p.Lane, p.WaveNumber, p.Attempt, p.AgentID) {
		red.Env[executor.StickyKeyEnv] = v
	}
	// Volatile (atomic, not fsynced): like prompt.md beside it, a preview
	// lost in a machine crash costs nothing, and each fsync held up the
	// start of the wave.
	return jsonfile.WriteVolatile(filepath.Join(p.RunDir, PreviewFile), LaunchPreview{
		SchemaVersion: PreviewSchemaVersion, RunID: p.RunID, Lane: p.Lane, Wave: p.WaveNumber, Attempt: p.Attempt,
		AgentID: p.AgentID, ExecutorID: r.ID, SelectedBy: r.SelectedBy, Model: r.Model,
		Argv: p.Argv, Env: red.Env, Stdin: p.Stdin, Limits: lim,
	})
}
