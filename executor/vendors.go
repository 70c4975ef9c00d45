package executor

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// buildClaude is the claude command line as argv: headless
// (-p), permission mode bypassPermissions unless configured, model
// pinned, system prompt overlay, prompt as the last argument.
func buildClaude(in BuildInput, s *Spec) error {
	r := in.Resolved
	c := r.Claude
	sysPath := filepath.Join(in.RunDir, "claude-system-prompt.txt")
	if err := writeOverlay(s, sysPath, []byte(harnessPrompt(in.Agent, Claude))); err != nil {
		return err
	}
	settings, err := claudeSettings(in, s)
	if err != nil {
		return err
	}
	format := cmp(deref(c.OutputFormat), "text")
	a := []string{Command(r), "-p", "--no-session-persistence", "--output-format", format}
	if format == "stream-json" {
		// claude refuses stream-json output in print mode without it.
		a = append(a, "--verbose")
	}
	a = single(a, "--model", deref(firstSet(c.Model, r.Model)))
	a = single(a, "--agent", deref(c.Agent))
	a = single(a, "--permission-mode", cmp(deref(c.PermissionMode), DefaultPermissionMode))
	a = single(a, "--permission-prompt-tool", deref(c.PermissionPromptTool))
	a = single(a, "--effort", deref(c.Effort))
	if t := turnLimit(c.MaxTurns, r.Budget); t != nil {
		a = append(a, "--max-turns", strconv.Itoa(*t))
	}
	if b := r.Budget; b != nil && b.CostUSD != nil && *b.CostUSD > 0 {
		// The CLI's own spending cap, a second wall behind the runner's
		// stop at the same figure (which also counts what the CLI does
		// not, and stops agents that ignore theirs).
		a = append(a, "--max-budget-usd", strconv.FormatFloat(*b.CostUSD, 'f', -1, 64))
	}
	a = repeated(a, "--mcp-config", c.McpConfig)
	a = single(a, "--settings", settings)
	a = repeated(a, "--allowedTools", c.AllowedTools)
	a = repeated(a, "--disallowedTools", c.DisallowedTools)
	if c.StrictMcpConfig {
		a = append(a, "--strict-mcp-config")
	}
	if c.AppendSystemPromptMode == "replace" {
		a = append(a, "--system-prompt-file", sysPath)
	} else {
		a = append(a, "--append-system-prompt-file", sysPath)
	}
	p, err := promptArg(in, s)
	if err != nil {
		return err
	}
	s.Argv = append(a, p...)
	return nil
}

// claudeSettings returns the --settings path: the configured file, or a
// generated claude-settings.json deep-merging it with settings_json,
// hooks_json and allowed_http_hook_urls when any of those is set.
func claudeSettings(in BuildInput, s *Spec) (string, error) {
	c := in.Resolved.Claude
	if c.SettingsJSON == nil && c.HooksJSON == nil && len(c.AllowedHTTPHookURLs) == 0 {
		return deref(c.Settings), nil
	}
	merged := map[string]any{}
	if p := deref(c.Settings); p != "" {
		base, err := readJSONObject(in.Lane.RepoRoot, p)
		if err != nil {
			return "", fmt.Errorf("claude.settings: %w", err)
		}
		merged = base
	}
	merged = deepMerge(merged, c.SettingsJSON)
	if c.HooksJSON != nil {
		merged = deepMerge(merged, map[string]any{"hooks": c.HooksJSON})
	}
	if len(c.AllowedHTTPHookURLs) > 0 {
		merged = deepMerge(merged, map[string]any{"allowedHttpHookUrls": c.AllowedHTTPHookURLs})
	}
	settingsEnv(merged, s)
	path := filepath.Join(in.RunDir, "claude-settings.json")
	b, err := json.MarshalIndent(merged, "", "  ")
	if err != nil {
		return "", fmt.Errorf("claude settings: %w", err)
	}
	s.PrivateFiles = append(s.PrivateFiles, path)
	return path, writeOverlay(s, path, append(b, '\n'))
}

// settingsEnv moves the settings' env (Claude Code's documented place
// for keys) into the agent's environment, which Claude Code's process
// starts with anyway: the keys then travel in the run's env file, read
// and deleted by the runner before the agent starts, are redacted in
// launch.json and previews, and never rest in the settings file. WAVE_*
// stays ours.
func settingsEnv(settings map[string]any, s *Spec) {
	env, ok := settings["env"].(map[string]any)
	if !ok {
		return
	}
	delete(settings, "env")
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if _, ours := s.Env[k]; ours {
			continue
		}
		v, isString := env[k].(string)
		if !isString {
			b, _ := json.Marshal(env[k])
			v = string(b)
		}
		s.Env[k] = v
		s.PrivateEnv = append(s.PrivateEnv, k)
	}
}

var nonAgentName = regexp.MustCompile(`[^a-z0-9_-]+`)

// OpencodeAgentName is opencode.agent or wave-<agentId>, lower-cased with
// runs of other characters turned into one dash.
func OpencodeAgentName(agent *string, agentID string) string {
	name := strings.ToLower(strings.TrimSpace(cmp(deref(agent), "wave-"+agentID)))
	name = strings.Trim(nonAgentName.ReplaceAllString(name, "-"), "-")
	return cmp(name, "wave-"+strings.ToLower(agentID))
}

// buildOpencode is the opencode command line as argv, with the
// agent defined in a generated config that OPENCODE_CONFIG points to.
func buildOpencode(in BuildInput, s *Spec) error {
	r := in.Resolved
	o := r.Opencode
	name := OpencodeAgentName(o.Agent, in.Agent.ID)
	const promptFile = "opencode-agent-prompt.txt"
	if err := writeOverlay(s, filepath.Join(in.RunDir, promptFile), []byte(harnessPrompt(in.Agent, Opencode))); err != nil {
		return err
	}
	agentDef := map[string]any{
		"description": "Wave agent " + in.Agent.ID + ": " + in.Agent.Title,
		"mode":        "primary",
		"prompt":      "{file:./" + promptFile + "}",
	}
	if m := deref(firstSet(o.Model, r.Model)); m != "" {
		agentDef["model"] = m
	}
	if t := turnLimit(o.Steps, r.Budget); t != nil {
		agentDef["steps"] = *t
	}
	if o.Permission != nil {
		agentDef["permission"] = o.Permission
	}
	base := deepMerge(map[string]any{}, o.ConfigJSON)
	agents, _ := base["agent"].(map[string]any)
	existing, _ := agents[name].(map[string]any)
	var baseInstr []string
	if l, ok := base["instructions"].([]any); ok {
		for _, v := range l {
			if s, ok := v.(string); ok {
				baseInstr = append(baseInstr, s)
			}
		}
	}
	schema, _ := base["$schema"].(string)
	cfg := deepMerge(base, map[string]any{
		"$schema":      cmp(schema, "https://opencode.ai/config.json"),
		"instructions": union(baseInstr, o.Instructions),
		"agent":        map[string]any{name: deepMerge(deepMerge(map[string]any{}, existing), agentDef)},
	})
	cfgPath := filepath.Join(in.RunDir, "opencode.json")
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("opencode config: %w", err)
	}
	if err := writeOverlay(s, cfgPath, append(b, '\n')); err != nil {
		return err
	}
	// It may hold a provider's key (provider.<id>.options.apiKey).
	s.PrivateFiles = append(s.PrivateFiles, cfgPath)
	s.Env["OPENCODE_CONFIG"] = cfgPath

	a := []string{Command(r), "run", "--agent", name}
	a = single(a, "--model", deref(firstSet(o.Model, r.Model)))
	a = single(a, "--format", cmp(deref(o.Format), "default"))
	a = single(a, "--attach", deref(o.Attach))
	a = repeated(a, "--file", o.Files)
	a = append(a, "--title", "wave-"+in.Agent.ID)
	p, err := promptArg(in, s)
	if err != nil {
		return err
	}
	s.Argv = append(a, p...)
	return nil
}

// turnLimit is the vendor's own turn limit, else budget.turns. The
// reference leaves budget.turns advisory; we enforce it on the agent's own
// executor because an unbounded headless agent is the costlier surprise.
func turnLimit(vendor *int, b *wave.Budget) *int {
	if vendor != nil || b == nil {
		return vendor
	}
	return b.Turns
}

func readJSONObject(root, p string) (map[string]any, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object: %w", p, err)
	}
	if m == nil {
		return nil, fmt.Errorf("%s: not a JSON object", p)
	}
	return m, nil
}

// deepMerge merges src into a copy of dst: nested objects merge, anything
// else in src replaces dst's value.
func deepMerge(dst, src map[string]any) map[string]any {
	out := make(map[string]any, len(dst)+len(src))
	for k, v := range dst {
		out[k] = v
	}
	for k, v := range src {
		sv, sok := v.(map[string]any)
		dv, dok := out[k].(map[string]any)
		switch {
		case sok && dok:
			out[k] = deepMerge(dv, sv)
		case sok:
			out[k] = deepMerge(map[string]any{}, sv)
		default:
			out[k] = v
		}
	}
	return out
}
