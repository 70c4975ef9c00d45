package config

import "github.com/wave-orchestrator/wave-orchestrator/usage"

// Budget is budget.turns / budget.minutes / budget.tokens /
// budget.costUsd: limits of one agent run.
type Budget struct {
	Turns   *int `json:"turns"`
	Minutes *int `json:"minutes"`
	// Tokens and CostUSD cap the run's metered spend: the runner stops
	// the agent once its streamed usage reaches either.
	Tokens  *int64   `json:"tokens,omitempty" yaml:"tokens,omitempty"`
	CostUSD *float64 `json:"costUsd,omitempty" yaml:"costUsd,omitempty"`
}

// Cap is the budget's spending cap (zero when b is nil).
func (b *Budget) Cap() usage.Cap {
	if b == nil {
		return usage.Cap{}
	}
	return usage.Cap{Tokens: b.Tokens, CostUSD: b.CostUSD}
}

// CodexConfig holds codex.* keys.
type CodexConfig struct {
	Command     *string  `json:"command,omitempty"`
	Sandbox     *string  `json:"sandbox,omitempty"`
	ProfileName *string  `json:"profileName,omitempty"`
	Config      []string `json:"config,omitempty"`
	Search      *bool    `json:"search,omitempty"`
	Images      []string `json:"images,omitempty"`
	AddDirs     []string `json:"addDirs,omitempty"`
	JSON        *bool    `json:"json,omitempty"`
	Ephemeral   *bool    `json:"ephemeral,omitempty"`
	// Env is added to the environment of agents running on this vendor
	// (an agent's own `env.NAME` entries win).
	Env map[string]string `json:"env,omitempty"`
}

// ClaudeConfig holds claude.* keys.
type ClaudeConfig struct {
	Command              *string           `json:"command,omitempty"`
	Model                *string           `json:"model,omitempty"` // lane/profile default; agents use `model`
	Agent                *string           `json:"agent,omitempty"`
	PermissionMode       *string           `json:"permissionMode,omitempty"`
	PermissionPromptTool *string           `json:"permissionPromptTool,omitempty"`
	Effort               *string           `json:"effort,omitempty"`
	MaxTurns             *int              `json:"maxTurns,omitempty"`
	McpConfig            []string          `json:"mcpConfig,omitempty"`
	Settings             *string           `json:"settings,omitempty"`
	SettingsJSON         map[string]any    `json:"settingsJson,omitempty"`
	HooksJSON            map[string]any    `json:"hooksJson,omitempty"`
	AllowedHTTPHookURLs  []string          `json:"allowedHttpHookUrls,omitempty"`
	OutputFormat         *string           `json:"outputFormat,omitempty"`
	AllowedTools         []string          `json:"allowedTools,omitempty"`
	DisallowedTools      []string          `json:"disallowedTools,omitempty"`
	Env                  map[string]string `json:"env,omitempty"`
}

// OpencodeConfig holds opencode.* keys.
type OpencodeConfig struct {
	Command      *string           `json:"command,omitempty"`
	Model        *string           `json:"model,omitempty"` // lane/profile default; agents use `model`
	Agent        *string           `json:"agent,omitempty"`
	Attach       *string           `json:"attach,omitempty"`
	Files        []string          `json:"files,omitempty"`
	Format       *string           `json:"format,omitempty"`
	Steps        *int              `json:"steps,omitempty"`
	Instructions []string          `json:"instructions,omitempty"`
	Permission   any               `json:"permission,omitempty"`
	ConfigJSON   map[string]any    `json:"configJson,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
}

// LocalConfig holds local.* knobs of the built-in simulated agent.
type LocalConfig struct {
	Delay        *string `json:"delay,omitempty"`        // Go duration, e.g. "2s"
	ExitCode     *int    `json:"exitCode,omitempty"`     // exit with this code
	FailAttempts *int    `json:"failAttempts,omitempty"` // fail the first N attempts
	Verdict      *string `json:"verdict,omitempty"`      // cont-QA verdict, e.g. FAIL
	Security     *string `json:"security,omitempty"`     // clear|concerns|blocked
	// Ask: until its prompt holds an answer, ask a person this blocking
	// question (`ask`) and finish without markers.
	Ask *string `json:"ask,omitempty"`
}

// ShellConfig holds shell.* keys.
type ShellConfig struct {
	Command *string           `json:"command,omitempty"` // template with {prompt_file} etc.
	Env     map[string]string `json:"env,omitempty"`
}
