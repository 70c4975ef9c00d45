package config

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

var envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// problems collects errors for one scope; prefix is "lanes.<name>." when
// checking a merged lane, so origins are looked up there first.
type problems struct {
	src    sources
	prefix string
	errs   []error
}

func (p *problems) add(key, format string, args ...any) {
	keys := []string{key}
	if p.prefix != "" {
		keys = []string{p.prefix + key, key}
	}
	p.errs = append(p.errs, p.src.errorf(keys, format, args...))
}

func (p *problems) oneOf(key, v string, allowed ...string) {
	if !slices.Contains(allowed, v) {
		p.add(key, "%q is not one of %s", v, strings.Join(allowed, ", "))
	}
}

func (p *problems) optOneOf(key string, v *string, allowed ...string) {
	if v != nil && *v != "" {
		p.oneOf(key, strings.ToLower(*v), allowed...)
	}
}

func (p *problems) atLeast(key string, v, min int) {
	if v < min {
		p.add(key, "must be >= %d, got %d", min, v)
	}
}

// capOf checks a spending cap: positive tokens and cost.
func (p *problems) capOf(key string, c usage.Cap) {
	if c.Tokens != nil && *c.Tokens <= 0 {
		p.add(key+".tokens", "must be a positive integer, got %d", *c.Tokens)
	}
	if c.CostUSD != nil && !(*c.CostUSD > 0) {
		p.add(key+".costUsd", "must be a positive number of dollars, got %g", *c.CostUSD)
	}
}

// budgetPolicy checks the keys both budget sections share (key is
// runtime.budget or backlog.budget); each section's caps are checked by
// capOf.
func (p *problems) budgetPolicy(key string, b BudgetPolicy) {
	if b.WarnAtPercent < 0 || b.WarnAtPercent > 100 {
		p.add(key+".warnAtPercent", "must be between 1 and 100, got %d", b.WarnAtPercent)
	}
	if b.OnExceeded != "" {
		p.oneOf(key+".onExceeded", b.OnExceeded, "finish", "stop")
	}
}

func (p *problems) optPositive(key string, v *int) {
	if v != nil && *v <= 0 {
		p.add(key, "must be a positive integer, got %d", *v)
	}
}

// repoPath normalises a repo-relative path in place the way the reference
// does ("./a/b/" → "a/b") and rejects paths that leave the repository.
func (p *problems) repoPath(key string, v *string) {
	s := strings.ReplaceAll(strings.TrimSpace(*v), `\`, "/")
	for strings.HasPrefix(s, "./") {
		s = strings.TrimLeft(s[2:], "/")
	}
	for strings.Contains(s, "//") {
		s = strings.ReplaceAll(s, "//", "/")
	}
	s = strings.TrimSuffix(s, "/")
	switch {
	case s == "":
		p.add(key, "path is empty")
	case strings.HasPrefix(s, "/") || s == ".." || strings.HasPrefix(s, "../") || strings.Contains(s, "/../") || strings.HasSuffix(s, "/.."):
		p.add(key, "path %q must stay inside the repository", *v)
	}
	*v = s
}

// validate checks the top-level keys that lanes do not override.
func (c *Config) validate() []error {
	p := &problems{src: c.src}
	p.oneOf("repoMode", c.RepoMode, "single-repo", "multi-lane")
	if err := lanes.ValidateLane(c.DefaultLane); err != nil {
		p.add("defaultLane", "%v", err)
	}
	for name := range c.Lanes {
		if err := lanes.ValidateLane(name); err != nil {
			p.add("lanes."+name, "%v", err)
		}
	}
	r := c.Runtime
	p.atLeast("runtime.heartbeatIntervalMs", r.HeartbeatIntervalMs, 1)
	p.atLeast("runtime.terminateGraceMs", r.TerminateGraceMs, 0)
	p.atLeast("runtime.timeoutMinutes", r.TimeoutMinutes, 1)
	p.atLeast("runtime.historyLimit", r.HistoryLimit, 1)
	p.atLeast("runtime.rateLimitRetries", r.RateLimitRetries, 0)
	p.atLeast("runtime.rateLimitBaseDelaySeconds", r.RateLimitBaseDelayS, 0)
	if r.RateLimitMaxDelayS < r.RateLimitBaseDelayS {
		p.add("runtime.rateLimitMaxDelaySeconds", "must be >= rateLimitBaseDelaySeconds (%d), got %d",
			r.RateLimitBaseDelayS, r.RateLimitMaxDelayS)
	}
	c.validateBacklog(p)
	c.validateSandboxes(p)
	c.validateNotify(p)
	validateKube(p, r)
	p.atLeast("runtime.silenceMinutes", r.SilenceMinutes, 0)
	p.capOf("runtime.budget.wave", r.Budget.Wave)
	p.capOf("runtime.budget.lane", r.Budget.Lane)
	p.budgetPolicy("runtime.budget", r.Budget.BudgetPolicy)
	p.atLeast("runtime.silenceSeconds", r.SilenceSeconds, 0)
	p.atLeast("runtime.noProgressMinutes", r.NoProgressMinutes, 0)
	p.atLeast("runtime.noProgressSeconds", r.NoProgressSeconds, 0)
	p.atLeast("runtime.inputTimeoutMinutes", r.InputTimeoutMinutes, 0)
	p.atLeast("runtime.inputTimeoutSeconds", r.InputTimeoutSeconds, 0)
	if r.MaxLogBytes != 0 && r.MaxLogBytes < MinLogBytes {
		p.add("runtime.maxLogBytes", "must be 0 (no cap) or >= %d (1 MiB), got %d", MinLogBytes, r.MaxLogBytes)
	}
	if c.GitHub.APIURL != "" {
		if u, err := url.Parse(c.GitHub.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.add("github.apiUrl", "want an http(s) URL, got %q", c.GitHub.APIURL)
		}
	}
	if c.GitHub.TokenEnv != "" && !envNameRe.MatchString(c.GitHub.TokenEnv) {
		p.add("github.tokenEnv", "%q is not an environment variable name", c.GitHub.TokenEnv)
	}
	return p.errs
}

// validateLane checks (and normalises the paths of) a merged lane view.
func (c *Config) validateLane(l *Lane) []error {
	p := &problems{src: c.src, prefix: "lanes." + l.Name + "."}
	for _, f := range []struct {
		key string
		v   *string
	}{
		{"docsDir", &l.DocsDir}, {"plansDir", &l.PlansDir}, {"wavesDir", &l.WavesDir},
		{"paths.stateRoot", &l.StateRoot},
		{"paths.componentCutoverMatrixDocPath", &l.MatrixDocPath},
		{"paths.componentCutoverMatrixJsonPath", &l.MatrixJSONPath},
		{"paths.benchmarkCatalogPath", &l.BenchmarkCatalogPath},
		{"paths.context7BundleIndexPath", &l.Context7BundleIndexPath},
		{"roles.rolePromptDir", &l.Roles.RolePromptDir},
		{"roles.contQaRolePromptPath", &l.Roles.ContQaRolePromptPath},
		{"roles.contEvalRolePromptPath", &l.Roles.ContEvalRolePromptPath},
		{"roles.integrationRolePromptPath", &l.Roles.IntegrationRolePromptPath},
		{"roles.documentationRolePromptPath", &l.Roles.DocumentationRolePromptPath},
		{"roles.securityRolePromptPath", &l.Roles.SecurityRolePromptPath},
		{"roles.designRolePromptPath", &l.Roles.DesignRolePromptPath},
	} {
		p.repoPath(f.key, f.v)
	}
	for i := range l.SharedPlanDocs {
		p.repoPath(fmt.Sprintf("sharedPlanDocs[%d]", i), &l.SharedPlanDocs[i])
	}
	p.executors(l.Executors)
	p.validation(l.Validation)
	p.runtimePolicy(l.RuntimePolicy)
	return p.errs
}

func (p *problems) executors(e Executors) {
	p.oneOf("executors.default", e.Default, executorIDs...)
	p.optOneOf("executors.codex.sandbox", e.Codex.Sandbox, "read-only", "workspace-write", "danger-full-access")
	p.oneOf("executors.claude.appendSystemPromptMode", e.Claude.AppendSystemPromptMode, "append", "replace")
	p.optOneOf("executors.claude.outputFormat", e.Claude.OutputFormat, "text", "json", "stream-json")
	p.optOneOf("executors.claude.effort", e.Claude.Effort, "low", "medium", "high", "max")
	p.optPositive("executors.claude.maxTurns", e.Claude.MaxTurns)
	p.optOneOf("executors.opencode.format", e.Opencode.Format, "default", "json")
	p.optPositive("executors.opencode.steps", e.Opencode.Steps)
	for i, name := range e.Env.Scrub {
		if !envNameRe.MatchString(name) {
			p.add(fmt.Sprintf("executors.env.scrub[%d]", i), "%q is not an environment variable name", name)
		}
	}
	for i, name := range e.Env.Keep {
		if !envNameRe.MatchString(name) {
			p.add(fmt.Sprintf("executors.env.keep[%d]", i), "%q is not an environment variable name", name)
		}
	}
	p.envNames("executors.codex.env", e.Codex.Env)
	p.envNames("executors.claude.env", e.Claude.Env)
	p.envNames("executors.opencode.env", e.Opencode.Env)
	p.envNames("executors.shell.env", e.Shell.Env)
	for name, pr := range e.Profiles {
		k := "executors.profiles." + name
		if pr.ID != "" {
			p.oneOf(k+".id", strings.ToLower(pr.ID), executorIDs...)
		}
		for i, f := range pr.Fallbacks {
			p.oneOf(fmt.Sprintf("%s.fallbacks[%d]", k, i), strings.ToLower(f), executorIDs...)
		}
		if pr.Budget != nil {
			p.optPositive(k+".budget.turns", pr.Budget.Turns)
			p.optPositive(k+".budget.minutes", pr.Budget.Minutes)
			p.capOf(k+".budget", pr.Budget.Cap())
		}
		if pr.Codex != nil {
			p.optOneOf(k+".codex.sandbox", pr.Codex.Sandbox, "read-only", "workspace-write", "danger-full-access")
			p.envNames(k+".codex.env", pr.Codex.Env)
		}
		if pr.Claude != nil {
			p.optOneOf(k+".claude.outputFormat", pr.Claude.OutputFormat, "text", "json", "stream-json")
			p.optOneOf(k+".claude.effort", pr.Claude.Effort, "low", "medium", "high", "max")
			p.optPositive(k+".claude.maxTurns", pr.Claude.MaxTurns)
			p.envNames(k+".claude.env", pr.Claude.Env)
		}
		if pr.Opencode != nil {
			p.optOneOf(k+".opencode.format", pr.Opencode.Format, "default", "json")
			p.optPositive(k+".opencode.steps", pr.Opencode.Steps)
			p.envNames(k+".opencode.env", pr.Opencode.Env)
		}
	}
}

// envNames checks the names of an env map (values are free text).
func (p *problems) envNames(key string, env map[string]string) {
	for _, name := range slices.Sorted(maps.Keys(env)) {
		if !envNameRe.MatchString(name) {
			p.add(key+"."+name, "%q is not an environment variable name", name)
		}
	}
}

func (p *problems) validation(v Validation) {
	for _, t := range []struct {
		key string
		v   *int
	}{
		{"requireDocumentationStewardFromWave", v.RequireDocumentationStewardFromWave},
		{"requireContext7DeclarationsFromWave", v.RequireContext7DeclarationsFromWave},
		{"requireExitContractsFromWave", v.RequireExitContractsFromWave},
		{"requireIntegrationStewardFromWave", v.RequireIntegrationStewardFromWave},
		{"requireComponentPromotionsFromWave", v.RequireComponentPromotionsFromWave},
		{"requireAgentComponentsFromWave", v.RequireAgentComponentsFromWave},
	} {
		if t.v != nil {
			p.atLeast("validation."+t.key, *t.v, 0)
		}
	}
	for _, m := range []struct {
		key string
		m   Modes
	}{{"gateModeThresholds", v.GateModeThresholds}, {"closureModeThresholds", v.ClosureModeThresholds}} {
		p.atLeast("validation."+m.key+".bootstrap", m.m.Bootstrap, 0)
		p.atLeast("validation."+m.key+".standard", m.m.Standard, 0)
		p.atLeast("validation."+m.key+".strict", m.m.Strict, 0)
	}
}

func (p *problems) runtimePolicy(rp RuntimePolicy) {
	for id, n := range rp.RuntimeMixTargets {
		k := "runtimePolicy.runtimeMixTargets." + id
		p.oneOf(k, strings.ToLower(id), executorIDs...)
		p.atLeast(k, n, 0)
	}
	for role, id := range rp.DefaultExecutorByRole {
		k := "runtimePolicy.defaultExecutorByRole." + role
		if strings.EqualFold(role, "evaluator") {
			p.add(k, "renamed to runtimePolicy.defaultExecutorByRole.cont-qa")
			continue
		}
		p.oneOf(k, strings.ToLower(id), executorIDs...)
	}
	for i, id := range rp.FallbackExecutorOrder {
		p.oneOf(fmt.Sprintf("runtimePolicy.fallbackExecutorOrder[%d]", i), strings.ToLower(id), executorIDs...)
	}
}

func validateKube(p *problems, r Runtime) {
	switch r.Backend {
	case "", BackendTmux:
		return
	case BackendKubernetes:
	default:
		p.add("runtime.backend", "want tmux or kubernetes, got %q", r.Backend)
		return
	}
	k := r.Kubernetes
	if strings.TrimSpace(k.Image) == "" {
		p.add("runtime.kubernetes.image", "required with runtime.backend kubernetes: the image with wave-orchestrator and the agent CLIs")
	}
	// No workspace is fine for backlog workers (they clone in their pod);
	// a wave's first Start says it is missing.
	if k.GitURL != "" && (strings.HasPrefix(k.GitURL, "-") || strings.ContainsAny(k.GitURL, " \n")) {
		p.add("runtime.kubernetes.gitURL", "not a git URL: %q", k.GitURL)
	}
	if k.Workspace.ClaimName != "" && k.Workspace.HostPath != "" {
		p.add("runtime.kubernetes.workspace", "set claimName or hostPath, not both")
	}
	switch k.ImagePullPolicy {
	case "", "Always", "IfNotPresent", "Never":
	default:
		p.add("runtime.kubernetes.imagePullPolicy", "want Always, IfNotPresent or Never, got %q", k.ImagePullPolicy)
	}
	for _, n := range k.PassEnv {
		if !envNameRe.MatchString(n) {
			p.add("runtime.kubernetes.passEnv", "not an environment variable name: %q", n)
		}
	}
}
