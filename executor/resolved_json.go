package executor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// The reference builds each vendor section of executorResolved by spreading
// the lane section, then the profile's, then the agent's (skipping unset
// values), and then setting a few keys explicitly. A key therefore sits
// where the first layer that sets it put it, and the explicit keys are
// always present (null when unset). These lists are the layers' key order.
var (
	codexKeys = []string{"command", "profileName", "config", "search", "images", "addDirs", "json", "ephemeral", "sandbox"}
	// codexLane are the lane keys the reference always fills with a default.
	codexLane     = []string{"command", "config", "search", "images", "addDirs", "json", "ephemeral", "sandbox"}
	codexExplicit = []string{"command", "sandbox", "profileName", "config", "search", "images", "addDirs", "json", "ephemeral"}

	claudeKeys = []string{"command", "model", "agent", "appendSystemPromptMode", "permissionMode", "permissionPromptTool", "effort",
		"maxTurns", "mcpConfig", "strictMcpConfig", "settings", "settingsJson", "hooksJson", "allowedHttpHookUrls", "outputFormat",
		"allowedTools", "disallowedTools"}
	claudeLane = []string{"command", "appendSystemPromptMode", "permissionMode", "mcpConfig", "strictMcpConfig",
		"allowedHttpHookUrls", "outputFormat", "allowedTools", "disallowedTools"}
	claudeExplicit = []string{"model", "maxTurns", "maxTurnsSource"}

	opencodeKeys     = []string{"command", "model", "agent", "attach", "files", "format", "steps", "instructions", "permission", "configJson"}
	opencodeLane     = []string{"command", "files", "format", "instructions"}
	opencodeExplicit = []string{"model", "steps", "stepsSource"}
)

// sectionKeys is the key order of each vendor section.
type sectionKeys struct{ codex, claude, opencode []string }

// keyOrder computes the vendor sections' key order from the layers that
// set them. The agent layer follows the wave file's line order when the
// parser recorded it (ec.Keys), else the canonical order.
func keyOrder(ex config.Executors, profile *config.Profile, ec *wave.ExecutorConfig) sectionKeys {
	noModel := func(m map[string]bool) map[string]bool { delete(m, "model"); return m }
	agent := func(vendor string, canonical []string, isSet map[string]bool) []string {
		if len(ec.Keys) == 0 {
			return set(canonical, nil, isSet)
		}
		return fileKeys(ec.Keys, vendor)
	}
	return sectionKeys{
		codex: spread(
			set(codexKeys, codexLane, codexSet(&ex.Codex)),
			set(codexKeys, nil, codexSet(profile.Codex)),
			agent(Codex, codexKeys, codexSet(ec.Codex)),
			codexExplicit),
		claude: spread(
			set(claudeKeys, claudeLane, claudeSet(&ex.Claude.ClaudeConfig)),
			set(claudeKeys, nil, noModel(claudeSet(profile.Claude))),
			agent(Claude, claudeKeys, noModel(claudeSet(ec.Claude))),
			claudeExplicit),
		opencode: spread(
			set(opencodeKeys, opencodeLane, opencodeSet(&ex.Opencode)),
			set(opencodeKeys, nil, noModel(opencodeSet(profile.Opencode))),
			agent(Opencode, opencodeKeys, noModel(opencodeSet(ec.Opencode))),
			opencodeExplicit),
	}
}

// fileKeys turns the wave file's "<vendor>.<snake_key>" keys of one vendor
// into the section's camelCase keys, in file order.
func fileKeys(keys []string, vendor string) []string {
	var out []string
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, vendor+".")
		if !ok {
			continue
		}
		parts := strings.Split(rest, "_")
		for i := 1; i < len(parts); i++ {
			if parts[i] != "" {
				parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
			}
		}
		out = append(out, strings.Join(parts, ""))
	}
	return out
}

// set lists the keys of order that are always present or set.
func set(order, always []string, isSet map[string]bool) []string {
	var out []string
	for _, k := range order {
		if slices.Contains(always, k) || isSet[k] {
			out = append(out, k)
		}
	}
	return out
}

// spread appends each layer's keys not seen before, like object spread.
func spread(layers ...[]string) []string {
	var out []string
	for _, l := range layers {
		for _, k := range l {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

func codexSet(c *wave.CodexConfig) map[string]bool {
	if c == nil {
		return nil
	}
	return map[string]bool{"command": c.Command != nil, "profileName": c.ProfileName != nil, "config": c.Config != nil,
		"search": c.Search != nil, "images": c.Images != nil, "addDirs": c.AddDirs != nil, "json": c.JSON != nil,
		"ephemeral": c.Ephemeral != nil, "sandbox": c.Sandbox != nil}
}

func claudeSet(c *wave.ClaudeConfig) map[string]bool {
	if c == nil {
		return map[string]bool{}
	}
	return map[string]bool{"command": c.Command != nil, "model": c.Model != nil, "agent": c.Agent != nil,
		"permissionMode": c.PermissionMode != nil, "permissionPromptTool": c.PermissionPromptTool != nil, "effort": c.Effort != nil,
		"maxTurns": c.MaxTurns != nil, "mcpConfig": c.McpConfig != nil, "settings": c.Settings != nil,
		"settingsJson": c.SettingsJSON != nil, "hooksJson": c.HooksJSON != nil, "allowedHttpHookUrls": c.AllowedHTTPHookURLs != nil,
		"outputFormat": c.OutputFormat != nil, "allowedTools": c.AllowedTools != nil, "disallowedTools": c.DisallowedTools != nil}
}

func opencodeSet(c *wave.OpencodeConfig) map[string]bool {
	if c == nil {
		return map[string]bool{}
	}
	return map[string]bool{"command": c.Command != nil, "model": c.Model != nil, "agent": c.Agent != nil, "attach": c.Attach != nil,
		"files": c.Files != nil, "format": c.Format != nil, "steps": c.Steps != nil, "instructions": c.Instructions != nil,
		"permission": c.Permission != nil, "configJson": c.ConfigJSON != nil}
}

// MarshalJSON writes the reference's executorResolved object, key for key
// and in its order, followed by our local and shell sections when set.
func (r Resolved) MarshalJSON() ([]byte, error) {
	k := r.keys
	if k.codex == nil { // built without Resolve: derive the order from the values
		k = keyOrder(config.Executors{Codex: r.Codex, Claude: config.ClaudeDefaults{ClaudeConfig: r.Claude.ClaudeConfig},
			Opencode: r.Opencode.OpencodeConfig}, &config.Profile{}, &wave.ExecutorConfig{})
	}
	o := object{
		{"id", r.ID}, {"initialExecutorId", r.InitialExecutorID}, {"model", r.Model}, {"role", r.Role},
		{"profile", r.Profile}, {"selectedBy", r.SelectedBy}, {"fallbacks", list(r.Fallbacks)}, {"tags", list(r.Tags)},
		{"retryPolicy", r.RetryPolicy}, {"allowFallbackOnRetry", r.AllowFallbackOnRetry}, {"budget", r.Budget},
		{"fallbackUsed", r.FallbackUsed}, {"fallbackReason", r.FallbackReason}, {"executorHistory", history(r.History)},
		{"codex", fields(k.codex, codexValue(r.Codex))},
		{"claude", fields(k.claude, claudeValue(r.Claude))},
		{"opencode", fields(k.opencode, opencodeValue(r.Opencode))},
	}
	if r.Local != (wave.LocalConfig{}) {
		o = append(o, field{"local", r.Local})
	}
	if r.Shell.Command != nil {
		o = append(o, field{"shell", r.Shell})
	}
	return o.MarshalJSON()
}

func codexValue(c wave.CodexConfig) func(string) any {
	return func(k string) any {
		switch k {
		case "command":
			return c.Command
		case "profileName":
			return c.ProfileName
		case "config":
			return list(c.Config)
		case "search":
			return c.Search
		case "images":
			return list(c.Images)
		case "addDirs":
			return list(c.AddDirs)
		case "json":
			return c.JSON
		case "ephemeral":
			return c.Ephemeral
		case "sandbox":
			return c.Sandbox
		}
		return nil
	}
}

func claudeValue(c ClaudeResolved) func(string) any {
	return func(k string) any {
		switch k {
		case "command":
			return c.Command
		case "model":
			return c.Model
		case "agent":
			return c.Agent
		case "appendSystemPromptMode":
			return c.AppendSystemPromptMode
		case "permissionMode":
			return c.PermissionMode
		case "permissionPromptTool":
			return c.PermissionPromptTool
		case "effort":
			return c.Effort
		case "maxTurns":
			return c.MaxTurns
		case "mcpConfig":
			return list(c.McpConfig)
		case "strictMcpConfig":
			return c.StrictMcpConfig
		case "settings":
			return c.Settings
		case "settingsJson":
			return c.SettingsJSON
		case "hooksJson":
			return c.HooksJSON
		case "allowedHttpHookUrls":
			return list(c.AllowedHTTPHookURLs)
		case "outputFormat":
			return c.OutputFormat
		case "allowedTools":
			return list(c.AllowedTools)
		case "disallowedTools":
			return list(c.DisallowedTools)
		case "maxTurnsSource":
			return c.MaxTurnsSource
		}
		return nil
	}
}

func opencodeValue(c OpencodeResolved) func(string) any {
	return func(k string) any {
		switch k {
		case "command":
			return c.Command
		case "model":
			return c.Model
		case "agent":
			return c.Agent
		case "attach":
			return c.Attach
		case "files":
			return list(c.Files)
		case "format":
			return c.Format
		case "steps":
			return c.Steps
		case "instructions":
			return list(c.Instructions)
		case "permission":
			return c.Permission
		case "configJson":
			return c.ConfigJSON
		case "stepsSource":
			return c.StepsSource
		}
		return nil
	}
}

func fields(keys []string, value func(string) any) object {
	o := make(object, 0, len(keys))
	for _, k := range keys {
		o = append(o, field{k, value(k)})
	}
	return o
}

// list keeps an absent list as [] like the reference.
func list(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func history(h []HistoryEntry) []HistoryEntry {
	if h == nil {
		return []HistoryEntry{}
	}
	return h
}

type field struct {
	key string
	val any
}

// object is a JSON object that keeps its key order.
type object []field

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := encode(&b, f.key); err != nil {
			return nil, err
		}
		b.WriteByte(':')
		if err := encode(&b, f.val); err != nil {
			return nil, fmt.Errorf("executorResolved %s: %w", f.key, err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// encode writes v without HTML escaping (the manifest keeps <, > and &
// as they are) and without the encoder's trailing newline.
func encode(b *bytes.Buffer, v any) error {
	e := json.NewEncoder(b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1)
	return nil
}
