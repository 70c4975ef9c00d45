// Package wave reads wave files (docs/plans/waves/wave-<n>.md, the
// reference's markdown format) into Waves and validates them against the
// lane's config: every section, key and rule of docs/wave-files.md, with
// the role prompts, component cutover matrix and benchmark catalog they
// refer to. It decides from what it is handed: LoadDir lists and reads
// the lane's waves directory, every other file comes through
// Options.ReadFile, and it writes and runs nothing (internal/layering
// checks what it may depend on). The launch manifest is package
// manifest's.
package wave

import "github.com/wave-orchestrator/wave-orchestrator/config"

// Wave is one parsed wave file. JSON names follow the reference's
// waves.manifest.json so tools written for it keep working.
type Wave struct {
	Number              int                  `json:"wave"`
	File                string               `json:"file"` // repo-relative
	CommitMessage       *string              `json:"commitMessage"`
	DeployEnvironments  []DeployEnvironment  `json:"deployEnvironments"`
	EvalTargets         []EvalTarget         `json:"evalTargets"`
	Context7Defaults    *Context7            `json:"context7Defaults"`
	ComponentPromotions []ComponentPromotion `json:"componentPromotions"`
	Agents              []Agent              `json:"agents"`
	ContQaReportPath    *string              `json:"contQaReportPath"`
	ContEvalReportPath  *string              `json:"contEvalReportPath"`

	// lines holds the 1-based line of each top-level section heading
	// (key: heading text) for validation messages.
	lines map[string]int
}

// Agent is one `## Agent <ID>: <title>` section.
type Agent struct {
	ID               string             `json:"agentId"`
	Title            string             `json:"title"`
	Slug             string             `json:"slug"`
	Prompt           string             `json:"prompt"`        // standing prompts + local prompt
	LocalPrompt      string             `json:"promptOverlay"` // the `### Prompt` fence body
	RolePromptPaths  []string           `json:"rolePromptPaths"`
	Context7         *Context7          `json:"context7Config"`
	ExitContract     *ExitContract      `json:"exitContract"`
	Executor         *ExecutorConfig    `json:"executorConfig"`
	Components       []string           `json:"components"`
	ComponentTargets map[string]*string `json:"componentTargets"`
	Capabilities     []string           `json:"capabilities"`
	Skills           []string           `json:"skills"`
	Deliverables     []string           `json:"deliverables"`
	ProofArtifacts   []ProofArtifact    `json:"proofArtifacts"`
	OwnedPaths       []string           `json:"ownedPaths"`

	// Line is the 1-based line of the agent header in its file.
	Line int `json:"-"`

	// lines holds the 1-based line of each `###` subsection heading.
	lines map[string]int
}

// ExitContract is the `### Exit contract` section. Values are the
// reference's ordered enums.
type ExitContract struct {
	Completion string `json:"completion"` // contract|integrated|authoritative|live
	Durability string `json:"durability"` // none|ephemeral|durable
	Proof      string `json:"proof"`      // unit|integration|live
	DocImpact  string `json:"docImpact"`  // none|owned|shared-plan
}

// ProofArtifact is one `### Proof artifacts` bullet.
type ProofArtifact struct {
	Path        string   `json:"path"`
	Kind        *string  `json:"kind"`
	RequiredFor []string `json:"requiredFor"`
}

// ComponentPromotion is one `## Component promotions` bullet.
type ComponentPromotion struct {
	ComponentID string `json:"componentId"`
	TargetLevel string `json:"targetLevel"`
}

// DeployEnvironment is one `## Deploy environments` bullet.
type DeployEnvironment struct {
	ID        string  `json:"id"`
	Kind      string  `json:"kind"`
	IsDefault bool    `json:"isDefault"`
	Notes     *string `json:"notes"`
}

// EvalTarget is one `## Eval targets` bullet.
type EvalTarget struct {
	ID              string   `json:"id"`
	Selection       string   `json:"selection"`
	BenchmarkFamily *string  `json:"benchmarkFamily"`
	Benchmarks      []string `json:"benchmarks"`
	Objective       string   `json:"objective"`
	Threshold       string   `json:"threshold"`
}

// Context7 is a `### Context7` section or `## Context7 defaults`.
type Context7 struct {
	Bundle *string `json:"bundle"`
	Query  *string `json:"query"`
}

// ExecutorConfig is the `### Executor` section: every key wave files
// written for the reference npm package use, plus our own `local.*` and `shell.*` knobs. Unset
// fields are nil so precedence (agent → profile → lane) can tell "not set"
// from a zero value.
type ExecutorConfig struct {
	ID                   *string         `json:"id"`
	Profile              *string         `json:"profile"`
	Model                *string         `json:"model"`
	Fallbacks            []string        `json:"fallbacks"`
	Tags                 []string        `json:"tags"`
	Budget               *Budget         `json:"budget"`
	RetryPolicy          *string         `json:"retryPolicy"` // sticky|fallback-allowed
	AllowFallbackOnRetry *bool           `json:"allowFallbackOnRetry"`
	Codex                *CodexConfig    `json:"codex"`
	Claude               *ClaudeConfig   `json:"claude"`
	Opencode             *OpencodeConfig `json:"opencode"`
	Local                *LocalConfig    `json:"local,omitempty"`
	Shell                *ShellConfig    `json:"shell,omitempty"`
	// Env holds the agent's `env.NAME: value` entries, added to its
	// environment over its vendor's executors.<vendor>.env. Ours, not
	// the reference's.
	Env map[string]string `json:"env,omitempty"`
	// Keys are the keys set, in file order: the reference's
	// executorResolved sections list an agent's keys in that order.
	Keys []string `json:"-"`
}

// The executor section types live in config (lane defaults and profiles
// use the same shapes); aliases keep the wave file's vocabulary.
type (
	Budget         = config.Budget
	CodexConfig    = config.CodexConfig
	ClaudeConfig   = config.ClaudeConfig
	OpencodeConfig = config.OpencodeConfig
	LocalConfig    = config.LocalConfig
	ShellConfig    = config.ShellConfig
)
