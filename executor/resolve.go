// Package executor owns everything between a parsed agent and the command
// its runner starts: executor resolution (precedence, profiles, budgets,
// retry policy and fallback chains), the agent prompt and its fingerprint,
// and the launch spec (argv, environment, stdin, overlay files) for the
// claude, codex, opencode, local and shell executors. Nothing here passes
// through a shell: every value stays one argv element.
package executor

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// Executor ids.
const (
	Codex    = "codex"
	Claude   = "claude"
	Opencode = "opencode"
	Local    = "local"
	Shell    = "shell"
)

// IDs lists every executor id.
var IDs = []string{Codex, Claude, Opencode, Local, Shell}

// Defaults shared with the reference.
const (
	DefaultExecutor       = Codex
	DefaultCodexSandbox   = "danger-full-access"
	DefaultPermissionMode = "bypassPermissions"
)

// SelectedBy values: which rule chose the executor.
const (
	ByAgentID       = "agent-id"
	ByAgentProfile  = "agent-profile"
	ByLaneRole      = "lane-role-default"
	ByCLI           = "cli-default"
	ByRetryFallback = "retry-fallback"
)

// Retry policies.
const (
	Sticky          = "sticky"
	FallbackAllowed = "fallback-allowed"
)

// HistoryEntry records which executor ran an attempt and why.
type HistoryEntry struct {
	Attempt    int    `json:"attempt"`
	ExecutorID string `json:"executorId"`
	Reason     string `json:"reason"`
}

// ClaudeResolved is the merged claude section plus the lane-only knobs.
type ClaudeResolved struct {
	wave.ClaudeConfig
	AppendSystemPromptMode string // append|replace
	StrictMcpConfig        bool
	// MaxTurnsSource is "claude.maxTurns" when some layer sets maxTurns.
	MaxTurnsSource *string
}

// OpencodeResolved is the merged opencode section.
type OpencodeResolved struct {
	wave.OpencodeConfig
	// StepsSource is "opencode.steps" when some layer sets steps.
	StepsSource *string
}

// Resolved is an agent's executor after precedence, merging and fallback
// selection. Its JSON (MarshalJSON) is the reference's executorResolved
// object, plus our local and shell sections when they are set.
type Resolved struct {
	ID                string
	InitialExecutorID string
	Model             *string
	// InitialModel is the model of the initial executor; a fallback
	// changes Model but not the prompt fingerprint. Not serialised: the
	// reference has no such field.
	InitialModel         *string
	Role                 string
	Profile              *string
	SelectedBy           string
	Fallbacks            []string
	Tags                 []string
	RetryPolicy          string
	AllowFallbackOnRetry bool
	Budget               *wave.Budget
	FallbackUsed         bool
	FallbackReason       *string
	History              []HistoryEntry
	Codex                wave.CodexConfig
	Claude               ClaudeResolved
	Opencode             OpencodeResolved
	Local                wave.LocalConfig
	Shell                wave.ShellConfig
	// AgentEnv is the agent's own `env.NAME` entries; Env gives the
	// environment of the executor in use. Not serialised (the reference
	// has no such keys).
	AgentEnv map[string]string
	// Origins says which layer set each limit (launch-preview.json).
	Origins LimitOrigins

	// keys is the JSON key order of the vendor sections (see keyOrder).
	keys sectionKeys
}

// Resolve picks the executor of agent a holding runtime role role
// in lane: the executor id comes from the agent's id, then its profile's
// id, then the lane's default for the role, then cliExecutor (--executor,
// which defaults to the lane default). Vendor sections merge lane ←
// profile ← agent with list keys unioned. proofCentric agents default to
// a sticky retry policy.
//
// budget.turns stays advisory here as in the reference (claude.maxTurns
// and opencode.steps come only from the vendor sections); Build applies it
// to the agent's own executor.
func Resolve(a *wave.Agent, role string, lane *config.Lane, cliExecutor string, proofCentric bool) (Resolved, error) {
	ec := a.Executor
	if ec == nil {
		ec = &wave.ExecutorConfig{}
	}
	ex := lane.Executors
	var profile *config.Profile
	if ec.Profile != nil {
		name := strings.ToLower(strings.TrimSpace(*ec.Profile))
		p, ok := ex.Profiles[name]
		if !ok {
			return Resolved{}, fmt.Errorf("agent %s: unknown executor profile %q (lane %s defines %v)", a.ID, *ec.Profile, lane.Name, profileNames(ex.Profiles))
		}
		profile = &p
	}
	if profile == nil {
		profile = &config.Profile{}
	}

	id, by := selectID(ec, profile, lane, role, cliExecutor)
	if !slices.Contains(IDs, id) {
		return Resolved{}, fmt.Errorf("agent %s: unknown executor %q (selected by %s): want one of %v", a.ID, id, by, IDs)
	}

	r := Resolved{
		ID:                id,
		InitialExecutorID: id,
		Role:              role,
		Profile:           ec.Profile,
		SelectedBy:        by,
		Tags:              union(profile.Tags, ec.Tags),
		History:           []HistoryEntry{{Attempt: 0, ExecutorID: id, Reason: "initial"}},
		keys:              keyOrder(ex, profile, ec),
	}
	r.Codex = mergeCodex(ex.Codex, profile.Codex, ec.Codex)
	r.Claude = mergeClaude(ex.Claude, profile.Claude, ec.Claude)
	r.Opencode = mergeOpencode(ex.Opencode, profile.Opencode, ec.Opencode)
	if ec.Local != nil {
		r.Local = *ec.Local
	}
	r.Shell = ex.Shell
	if ec.Shell != nil && ec.Shell.Command != nil {
		r.Shell.Command = ec.Shell.Command
	}
	r.AgentEnv = maps.Clone(ec.Env)
	if id == Shell && strings.TrimSpace(deref(r.Shell.Command)) == "" {
		return Resolved{}, fmt.Errorf("agent %s: executor shell needs shell.command (a template such as `my-agent --prompt {prompt_file}`)", a.ID)
	}
	if id == Shell {
		// A template that cannot be split fails here, before any agent of
		// the wave runs, not when this agent's turn comes.
		if _, err := SplitWords(*r.Shell.Command); err != nil {
			return Resolved{}, fmt.Errorf("agent %s: shell.command %q: %w", a.ID, *r.Shell.Command, err)
		}
	}

	// The vendor default model counts only for the agent's own executor;
	// the other vendor sections keep the lane's model.
	r.Model = firstSet(ec.Model, strPtr(profile.Model))
	switch id {
	case Claude:
		r.Model = firstSet(r.Model, ex.Claude.Model)
		r.Claude.Model = r.Model
	case Opencode:
		r.Model = firstSet(r.Model, ex.Opencode.Model)
		r.Opencode.Model = r.Model
	}
	r.InitialModel = r.Model
	r.Budget = mergeBudget(profile.Budget, ec.Budget)
	r.Origins = originsOf(ec, profile, ex)
	if r.Claude.MaxTurns != nil {
		r.Claude.MaxTurnsSource = strPtr("claude.maxTurns")
	}
	if r.Opencode.Steps != nil {
		r.Opencode.StepsSource = strPtr("opencode.steps")
	}

	if err := retryPolicy(&r, a.ID, ec, profile, lane, proofCentric); err != nil {
		return Resolved{}, err
	}
	return r, nil
}

// selectID applies the id precedence. The reference's launch always sets
// --executor (to the lane default when the flag is absent), so the lane
// default is reported as cli-default there; we do the same.
func selectID(ec *wave.ExecutorConfig, profile *config.Profile, lane *config.Lane, role, cliExecutor string) (id, by string) {
	switch {
	case deref(ec.ID) != "":
		id, by = *ec.ID, ByAgentID
	case profile.ID != "":
		id, by = profile.ID, ByAgentProfile
	case lane.RuntimePolicy.DefaultExecutorByRole[role] != "":
		id, by = lane.RuntimePolicy.DefaultExecutorByRole[role], ByLaneRole
	default:
		id, by = cmp(cliExecutor, cmp(lane.Executors.Default, DefaultExecutor)), ByCLI
	}
	return strings.ToLower(strings.TrimSpace(id)), by
}

// retryPolicy sets the retry policy and the fallback chain: an explicit
// allow-fallback-on-retry wins, then an explicit retry-policy, then the
// default (fallback allowed unless proof-centric).
func retryPolicy(r *Resolved, agentID string, ec *wave.ExecutorConfig, profile *config.Profile, lane *config.Lane, proofCentric bool) error {
	allow := !proofCentric
	if ec.RetryPolicy != nil {
		allow = *ec.RetryPolicy != Sticky
	}
	if ec.AllowFallbackOnRetry != nil {
		allow = *ec.AllowFallbackOnRetry
	}
	r.AllowFallbackOnRetry = allow
	r.RetryPolicy = deref(ec.RetryPolicy)
	if r.RetryPolicy == "" {
		r.RetryPolicy = map[bool]string{true: FallbackAllowed, false: Sticky}[allow]
	}
	fallbacks := union(lowerIDs(profile.Fallbacks), lowerIDs(ec.Fallbacks))
	switch {
	case !allow:
		r.Fallbacks = []string{}
	case len(fallbacks) > 0:
		r.Fallbacks = fallbacks
	default:
		r.Fallbacks = []string{}
		for _, c := range lowerIDs(lane.RuntimePolicy.FallbackExecutorOrder) {
			if c != r.ID {
				r.Fallbacks = append(r.Fallbacks, c)
			}
		}
	}
	for _, f := range r.Fallbacks {
		if !slices.Contains(IDs, f) {
			return fmt.Errorf("agent %s: unknown fallback executor %q: want one of %v", agentID, f, IDs)
		}
	}
	return nil
}

func mergeBudget(profile, agent *wave.Budget) *wave.Budget {
	var b wave.Budget
	for _, s := range []*wave.Budget{profile, agent} {
		if s == nil {
			continue
		}
		b.Turns = firstSet(s.Turns, b.Turns)
		b.Minutes = firstSet(s.Minutes, b.Minutes)
		b.Tokens = firstSet(s.Tokens, b.Tokens)
		b.CostUSD = firstSet(s.CostUSD, b.CostUSD)
	}
	if b.Turns == nil && b.Minutes == nil && b.Tokens == nil && b.CostUSD == nil {
		return nil
	}
	return &b
}

func mergeCodex(lane wave.CodexConfig, profile, agent *wave.CodexConfig) wave.CodexConfig {
	c := lane
	if profile != nil {
		// The reference normalizes profiles twice, so a profile's codex
		// section turns its unset flags into false, over the lane's.
		p := *profile
		f := false
		p.Search, p.JSON, p.Ephemeral = firstSet(p.Search, &f), firstSet(p.JSON, &f), firstSet(p.Ephemeral, &f)
		profile = &p
	}
	c.Env = maps.Clone(c.Env)
	for _, s := range []*wave.CodexConfig{profile, agent} {
		if s == nil {
			continue
		}
		c.Env = overlay(c.Env, s.Env)
		c.Command = firstSet(s.Command, c.Command)
		c.Sandbox = firstSet(s.Sandbox, c.Sandbox)
		c.ProfileName = firstSet(s.ProfileName, c.ProfileName)
		c.Search = firstSet(s.Search, c.Search)
		c.JSON = firstSet(s.JSON, c.JSON)
		c.Ephemeral = firstSet(s.Ephemeral, c.Ephemeral)
		c.Config = union(c.Config, s.Config)
		c.Images = union(c.Images, s.Images)
		c.AddDirs = union(c.AddDirs, s.AddDirs)
	}
	c.Config, c.Images, c.AddDirs = union(c.Config), union(c.Images), union(c.AddDirs)
	c.Command = firstSet(c.Command, strPtr(Codex))
	c.Sandbox = firstSet(c.Sandbox, strPtr(DefaultCodexSandbox))
	f := false
	c.Search, c.JSON, c.Ephemeral = firstSet(c.Search, &f), firstSet(c.JSON, &f), firstSet(c.Ephemeral, &f)
	return c
}

func mergeClaude(lane config.ClaudeDefaults, profile, agent *wave.ClaudeConfig) ClaudeResolved {
	c := ClaudeResolved{ClaudeConfig: lane.ClaudeConfig, StrictMcpConfig: lane.StrictMcpConfig,
		AppendSystemPromptMode: cmp(strings.ToLower(strings.TrimSpace(lane.AppendSystemPromptMode)), "append")}
	if profile != nil {
		// As for codex: a profile's claude section resets strictMcpConfig.
		c.StrictMcpConfig = false
	}
	c.Env = maps.Clone(c.Env)
	for _, s := range []*wave.ClaudeConfig{profile, agent} {
		if s == nil {
			continue
		}
		d := &c.ClaudeConfig
		d.Env = overlay(d.Env, s.Env)
		d.Command = firstSet(s.Command, d.Command)
		d.Agent = firstSet(s.Agent, d.Agent)
		d.PermissionMode = firstSet(s.PermissionMode, d.PermissionMode)
		d.PermissionPromptTool = firstSet(s.PermissionPromptTool, d.PermissionPromptTool)
		d.Effort = firstSet(s.Effort, d.Effort)
		d.MaxTurns = firstSet(s.MaxTurns, d.MaxTurns)
		d.Settings = firstSet(s.Settings, d.Settings)
		d.OutputFormat = firstSet(s.OutputFormat, d.OutputFormat)
		if s.SettingsJSON != nil {
			d.SettingsJSON = s.SettingsJSON
		}
		if s.HooksJSON != nil {
			d.HooksJSON = s.HooksJSON
		}
		d.McpConfig = union(d.McpConfig, s.McpConfig)
		d.AllowedTools = union(d.AllowedTools, s.AllowedTools)
		d.DisallowedTools = union(d.DisallowedTools, s.DisallowedTools)
		d.AllowedHTTPHookURLs = union(d.AllowedHTTPHookURLs, s.AllowedHTTPHookURLs)
	}
	d := &c.ClaudeConfig
	d.McpConfig, d.AllowedTools = union(d.McpConfig), union(d.AllowedTools)
	d.DisallowedTools, d.AllowedHTTPHookURLs = union(d.DisallowedTools), union(d.AllowedHTTPHookURLs)
	d.Command = firstSet(d.Command, strPtr(Claude))
	d.PermissionMode = firstSet(d.PermissionMode, strPtr(DefaultPermissionMode))
	d.OutputFormat = firstSet(d.OutputFormat, strPtr("text"))
	return c
}

func mergeOpencode(lane wave.OpencodeConfig, profile, agent *wave.OpencodeConfig) OpencodeResolved {
	c := lane
	c.Env = maps.Clone(c.Env)
	for _, s := range []*wave.OpencodeConfig{profile, agent} {
		if s == nil {
			continue
		}
		c.Env = overlay(c.Env, s.Env)
		c.Command = firstSet(s.Command, c.Command)
		c.Agent = firstSet(s.Agent, c.Agent)
		c.Attach = firstSet(s.Attach, c.Attach)
		c.Format = firstSet(s.Format, c.Format)
		c.Steps = firstSet(s.Steps, c.Steps)
		if s.Permission != nil {
			c.Permission = s.Permission
		}
		if s.ConfigJSON != nil {
			c.ConfigJSON = s.ConfigJSON
		}
		c.Files = union(c.Files, s.Files)
		c.Instructions = union(c.Instructions, s.Instructions)
	}
	c.Files, c.Instructions = union(c.Files), union(c.Instructions)
	c.Command = firstSet(c.Command, strPtr(Opencode))
	c.Format = firstSet(c.Format, strPtr("default"))
	return OpencodeResolved{OpencodeConfig: c}
}

// overlay returns dst with src's entries set over it (dst may be nil).
func overlay(dst, src map[string]string) map[string]string {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = make(map[string]string, len(src))
	}
	maps.Copy(dst, src)
	return dst
}

// Env is the environment an agent adds on its executor in use: the
// vendor's env (lane ← profile) with the agent's `env.NAME` entries over
// it. A fallback to another vendor takes that vendor's env.
func Env(r Resolved) map[string]string {
	var vendor map[string]string
	switch r.ID {
	case Codex:
		vendor = r.Codex.Env
	case Claude:
		vendor = r.Claude.Env
	case Opencode:
		vendor = r.Opencode.Env
	case Shell:
		vendor = r.Shell.Env
	}
	return overlay(overlay(nil, vendor), r.AgentEnv)
}

// union concatenates lists, trimming entries and dropping blanks and
// duplicates while keeping first-seen order. It never returns nil so the
// JSON shape is stable.
func union(lists ...[]string) []string {
	out := []string{}
	for _, l := range lists {
		for _, v := range l {
			v = strings.TrimSpace(v)
			if v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// lowerIDs normalizes executor ids the way the reference reads them.
func lowerIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strings.ToLower(strings.TrimSpace(id))
	}
	return out
}

// firstSet returns the first non-nil pointer.
func firstSet[T any](ps ...*T) *T {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func cmp(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

func profileNames(m map[string]config.Profile) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
