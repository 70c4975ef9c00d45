package config

import (
	"strings"
)

// Defaults shared by Default, normalisation and lane resolution. Roles,
// executors and validation match the reference's code defaults (not its
// starter file); runtime, env scrubbing and stateRoot are ours.
const (
	defaultLaneName  = "main"
	defaultStateRoot = ".wave"
	defaultDocsDir   = "docs"
	defaultExecutor  = "codex"
	matrixDocName    = "component-cutover-matrix.md"
	matrixJSONName   = "component-cutover-matrix.json"
)

// Executor ids a config may name: the reference's four plus our shell.
var executorIDs = []string{"claude", "codex", "local", "opencode", "shell"}

// The reference's fixed default paths of the benchmark catalog and the
// Context7 bundle index (not derived from docsDir).
const (
	DefaultBenchmarkCatalogPath    = "docs/evals/benchmark-catalog.json"
	DefaultContext7BundleIndexPath = "docs/context7/bundles.json"
)

var sharedPlanDocNames = []string{"current-state.md", "master-plan.md", "migration.md"}

func ptr[T any](v T) *T { return &v }

func defaultRoles() Roles {
	return Roles{
		RolePromptDir:               "docs/agents",
		ContQaAgentID:               "A0",
		ContEvalAgentID:             "E0",
		IntegrationAgentID:          "A8",
		DocumentationAgentID:        "A9",
		ContQaRolePromptPath:        "docs/agents/wave-cont-qa-role.md",
		ContEvalRolePromptPath:      "docs/agents/wave-cont-eval-role.md",
		IntegrationRolePromptPath:   "docs/agents/wave-integration-role.md",
		DocumentationRolePromptPath: "docs/agents/wave-documentation-role.md",
		SecurityRolePromptPath:      "docs/agents/wave-security-role.md",
		DesignRolePromptPath:        "docs/agents/wave-design-role.md",
	}
}

func defaultModes() Modes { return Modes{Bootstrap: 0, Standard: 4, Strict: 10} }

// Default returns the configuration used when a repo has no config file.
func Default() *Config {
	return &Config{
		Version:     1,
		RepoMode:    "single-repo",
		DefaultLane: defaultLaneName,
		Paths:       Paths{DocsDir: defaultDocsDir, StateRoot: defaultStateRoot},
		Roles:       defaultRoles(),
		Executors: Executors{
			Default:  defaultExecutor,
			Profiles: map[string]Profile{},
			Codex: CodexConfig{
				Command: ptr("codex"),
				Sandbox: ptr("danger-full-access"),
			},
			Claude: ClaudeDefaults{
				ClaudeConfig: ClaudeConfig{
					Command:        ptr("claude"),
					PermissionMode: ptr("bypassPermissions"),
					OutputFormat:   ptr("text"),
				},
				AppendSystemPromptMode: "append",
			},
			Opencode: OpencodeConfig{Command: ptr("opencode"), Format: ptr("default")},
			Env:      EnvPolicy{Scrub: []string{"ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS"}},
		},
		Validation: Validation{
			RequireDocumentationStewardFromWave: ptr(0),
			RequireContext7DeclarationsFromWave: ptr(6),
			RequireExitContractsFromWave:        ptr(6),
			RequireIntegrationStewardFromWave:   nil,
			RequireComponentPromotionsFromWave:  ptr(0),
			RequireAgentComponentsFromWave:      ptr(0),
			RequiredPromptReferences: []string{
				"docs/reference/repository-guidance.md",
				"docs/research/agent-context-sources.md",
			},
			GateModeThresholds:    defaultModes(),
			ClosureModeThresholds: defaultModes(),
		},
		Runtime: Runtime{
			HeartbeatIntervalMs: 2000,
			TerminateGraceMs:    5000,
			TimeoutMinutes:      240,
			HistoryLimit:        50000,
			RateLimitRetries:    2,
			RateLimitBaseDelayS: 20,
			RateLimitMaxDelayS:  180,
			MaxLogBytes:         DefaultMaxLogBytes,
		},
		GitHub: GitHub{APIURL: "https://api.github.com/", TokenEnv: "GITHUB_TOKEN"},
		Backlog: Backlog{ClaimLabel: "wave:claimed", NeedsInputLabel: "needs-input", LocalDir: "docs/backlog",
			UndeclaredSurface: "serial", SurfacePolicy: "warn", SilenceMinutes: 60, VerifyTimeoutMin: 30, SetupTimeoutMinutes: 30, ChecksTimeoutMinutes: 60, SnapshotMinutes: 10, Claim: Claim{LeaseMinutes: 120},
			Probe: Probe{TimeoutSeconds: 60}, TransientRetryMinutes: 30, ReworkRounds: 2,
			InputWaitMinutes: 60, NoProgressMinutes: 90, MaxRunsPerIssue: 8},
	}
}

// DefaultMaxLogBytes is runtime.maxLogBytes unless configured.
const DefaultMaxLogBytes = 64 << 20

// MinLogBytes is the smallest non-zero runtime.maxLogBytes: each of the
// log's three segments must hold more than the tail the gates read.
const MinLogBytes = 1 << 20

// normalize fills keys that the reference treats as "empty means default"
// and lower-cases names the reference compares case-insensitively.
func (c *Config) normalize() {
	c.RepoMode = strings.ToLower(strings.TrimSpace(c.RepoMode))
	if c.RepoMode == "" {
		c.RepoMode = "single-repo"
	}
	c.DefaultLane = strings.TrimSpace(c.DefaultLane)
	if c.DefaultLane == "" {
		c.DefaultLane = defaultLaneName
	}
	c.Paths.DocsDir = orDefault(c.Paths.DocsDir, defaultDocsDir)
	c.Paths.StateRoot = orDefault(c.Paths.StateRoot, defaultStateRoot)
	// The reference derives the matrix paths from the top-level docsDir,
	// for every lane.
	c.Paths.ComponentCutoverMatrixDocPath = orDefault(c.Paths.ComponentCutoverMatrixDocPath,
		joinPath(c.Paths.DocsDir, "plans", matrixDocName))
	c.Paths.ComponentCutoverMatrixJSONPath = orDefault(c.Paths.ComponentCutoverMatrixJSONPath,
		joinPath(c.Paths.DocsDir, "plans", matrixJSONName))
	c.Paths.BenchmarkCatalogPath = orDefault(c.Paths.BenchmarkCatalogPath, DefaultBenchmarkCatalogPath)
	c.Paths.Context7BundleIndexPath = orDefault(c.Paths.Context7BundleIndexPath, DefaultContext7BundleIndexPath)
	normalizeRoles(&c.Roles)
	normalizeExecutors(&c.Executors)
}

func normalizeRoles(r *Roles) {
	d := defaultRoles()
	for _, p := range []struct {
		v   *string
		def string
	}{
		{&r.RolePromptDir, d.RolePromptDir},
		{&r.ContQaAgentID, d.ContQaAgentID},
		{&r.ContEvalAgentID, d.ContEvalAgentID},
		{&r.IntegrationAgentID, d.IntegrationAgentID},
		{&r.DocumentationAgentID, d.DocumentationAgentID},
		{&r.ContQaRolePromptPath, d.ContQaRolePromptPath},
		{&r.ContEvalRolePromptPath, d.ContEvalRolePromptPath},
		{&r.IntegrationRolePromptPath, d.IntegrationRolePromptPath},
		{&r.DocumentationRolePromptPath, d.DocumentationRolePromptPath},
		{&r.SecurityRolePromptPath, d.SecurityRolePromptPath},
		{&r.DesignRolePromptPath, d.DesignRolePromptPath},
	} {
		*p.v = orDefault(strings.TrimSpace(*p.v), p.def)
	}
}

func normalizeExecutors(e *Executors) {
	e.Default = strings.ToLower(strings.TrimSpace(e.Default))
	if e.Default == "" {
		e.Default = defaultExecutor
	}
	d := Default().Executors
	fill := func(p **string, def *string) {
		if *p == nil || strings.TrimSpace(**p) == "" {
			*p = def
		}
	}
	fill(&e.Codex.Command, d.Codex.Command)
	fill(&e.Codex.Sandbox, d.Codex.Sandbox)
	fill(&e.Claude.Command, d.Claude.Command)
	fill(&e.Claude.PermissionMode, d.Claude.PermissionMode)
	fill(&e.Claude.OutputFormat, d.Claude.OutputFormat)
	fill(&e.Opencode.Command, d.Opencode.Command)
	fill(&e.Opencode.Format, d.Opencode.Format)
	e.Claude.AppendSystemPromptMode = orDefault(strings.ToLower(e.Claude.AppendSystemPromptMode), "append")
	if len(e.Profiles) > 0 {
		// Profile names are case-insensitive in the reference.
		ps := make(map[string]Profile, len(e.Profiles))
		for name, p := range e.Profiles {
			ps[strings.ToLower(strings.TrimSpace(name))] = p
		}
		e.Profiles = ps
	}
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// joinPath joins repo-relative parts with "/" (never the OS separator:
// these are config values, compared as strings).
func joinPath(parts ...string) string {
	var out []string
	for _, p := range parts {
		p = strings.Trim(p, "/")
		if p != "" && p != "." {
			out = append(out, p)
		}
	}
	return strings.Join(out, "/")
}
