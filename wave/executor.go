package wave

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/suggest"
)

// ExecutorIDs are the executor ids a wave file may name.
var ExecutorIDs = []string{"codex", "claude", "opencode", "local", "shell"}

var executorBulletRe = regexp.MustCompile(`^-\s+([a-zA-Z0-9._-]+)\s*:\s*(.+?)\s*$`)

// badValue is a value error with its rule.
type badValue struct{ rule, msg string }

func (e *badValue) Error() string { return e.msg }

func enumErr(key, v string, want []string) error {
	return &badValue{"bad-enum", fmt.Sprintf("%s %q: want one of %s", key, v, strings.Join(want, ", "))}
}

func valueErr(key, v, want string) error {
	return &badValue{"bad-value", fmt.Sprintf("%s %q: want %s", key, v, want)}
}

func enum(key, v string, want ...string) (string, error) {
	v = strings.ToLower(v)
	if !slices.Contains(want, v) {
		return "", enumErr(key, v, want)
	}
	return v, nil
}

func positiveInt(key, v string) (*int, error) {
	n, err := leadingInt(v)
	if err != nil || n <= 0 {
		return nil, valueErr(key, v, "a positive integer")
	}
	return &n, nil
}

// leadingInt parses like JavaScript's parseInt: optional sign, leading digits.
func leadingInt(v string) (int, error) {
	v = jsTrim(v)
	end := 0
	if end < len(v) && (v[end] == '-' || v[end] == '+') {
		end++
	}
	for end < len(v) && v[end] >= '0' && v[end] <= '9' {
		end++
	}
	return strconv.Atoi(v[:end])
}

func boolean(key, v string) (*bool, error) {
	t := true
	f := false
	switch strings.ToLower(v) {
	case "true", "1", "yes", "on":
		return &t, nil
	case "false", "0", "no", "off":
		return &f, nil
	}
	return nil, valueErr(key, v, "true/false, yes/no, on/off or 1/0")
}

func list(v string) []string {
	out := []string{}
	for _, s := range strings.Split(v, ",") {
		if s = cleanExecutorValue(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func jsonAny(key, v string) (any, error) {
	var x any
	if err := json.Unmarshal([]byte(v), &x); err != nil {
		return nil, valueErr(key, v, "JSON ("+err.Error()+")")
	}
	return x, nil
}

func jsonObject(key, v string) (map[string]any, error) {
	var x map[string]any
	if err := json.Unmarshal([]byte(v), &x); err != nil || x == nil {
		return nil, valueErr(key, v, "a JSON object")
	}
	return x, nil
}

func cleanExecutorValue(v string) string {
	v = jsTrim(v)
	v = wrapQuoteEdgeRe.ReplaceAllString(v, "")
	return v
}

func str(v string) *string { return &v }

func (c *ExecutorConfig) codex() *CodexConfig {
	if c.Codex == nil {
		c.Codex = &CodexConfig{}
	}
	return c.Codex
}

func (c *ExecutorConfig) claude() *ClaudeConfig {
	if c.Claude == nil {
		c.Claude = &ClaudeConfig{}
	}
	return c.Claude
}

func (c *ExecutorConfig) opencode() *OpencodeConfig {
	if c.Opencode == nil {
		c.Opencode = &OpencodeConfig{}
	}
	return c.Opencode
}

func (c *ExecutorConfig) local() *LocalConfig {
	if c.Local == nil {
		c.Local = &LocalConfig{}
	}
	return c.Local
}

func (c *ExecutorConfig) budget() *Budget {
	if c.Budget == nil {
		c.Budget = &Budget{}
	}
	return c.Budget
}

// executorKeys maps every `### Executor` key to its setter.
var executorKeys = map[string]func(c *ExecutorConfig, k, v string) error{
	"id": func(c *ExecutorConfig, k, v string) (err error) {
		var id string
		id, err = enum(k, v, ExecutorIDs...)
		c.ID = &id
		return err
	},
	"profile": func(c *ExecutorConfig, k, v string) error { c.Profile = str(strings.ToLower(v)); return nil },
	"model":   func(c *ExecutorConfig, k, v string) error { c.Model = str(v); return nil },
	"fallbacks": func(c *ExecutorConfig, k, v string) error {
		c.Fallbacks = []string{}
		for _, f := range list(v) {
			id, err := enum(k, f, ExecutorIDs...)
			if err != nil {
				return err
			}
			c.Fallbacks = append(c.Fallbacks, id)
		}
		return nil
	},
	"tags": func(c *ExecutorConfig, k, v string) error { c.Tags = list(v); return nil },
	"retry-policy": func(c *ExecutorConfig, k, v string) (err error) {
		var p string
		p, err = enum(k, v, "sticky", "fallback-allowed")
		c.RetryPolicy = &p
		return err
	},
	"allow-fallback-on-retry": func(c *ExecutorConfig, k, v string) (err error) {
		c.AllowFallbackOnRetry, err = boolean(k, v)
		return err
	},
	"budget.turns": func(c *ExecutorConfig, k, v string) (err error) {
		c.budget().Turns, err = positiveInt(k, v)
		return err
	},
	"budget.minutes": func(c *ExecutorConfig, k, v string) (err error) {
		c.budget().Minutes, err = positiveInt(k, v)
		return err
	},
	"budget.tokens": func(c *ExecutorConfig, k, v string) error {
		n, err := positiveInt(k, v)
		if n != nil {
			t := int64(*n)
			c.budget().Tokens = &t
		}
		return err
	},
	"budget.costUsd": func(c *ExecutorConfig, k, v string) error {
		f, err := strconv.ParseFloat(jsTrim(strings.TrimPrefix(jsTrim(v), "$")), 64)
		if err != nil || !(f > 0) {
			return valueErr(k, v, "a positive number of dollars")
		}
		c.budget().CostUSD = &f
		return nil
	},
	"codex.command": func(c *ExecutorConfig, k, v string) error { c.codex().Command = str(v); return nil },
	"codex.sandbox": func(c *ExecutorConfig, k, v string) error {
		s, err := enum(k, v, "read-only", "workspace-write", "danger-full-access")
		c.codex().Sandbox = &s
		return err
	},
	"codex.profile_name": func(c *ExecutorConfig, k, v string) error { c.codex().ProfileName = str(v); return nil },
	"codex.config":       func(c *ExecutorConfig, k, v string) error { c.codex().Config = list(v); return nil },
	"codex.search": func(c *ExecutorConfig, k, v string) (err error) {
		c.codex().Search, err = boolean(k, v)
		return err
	},
	"codex.images":   func(c *ExecutorConfig, k, v string) error { c.codex().Images = list(v); return nil },
	"codex.add_dirs": func(c *ExecutorConfig, k, v string) error { c.codex().AddDirs = list(v); return nil },
	"codex.json": func(c *ExecutorConfig, k, v string) (err error) {
		c.codex().JSON, err = boolean(k, v)
		return err
	},
	"codex.ephemeral": func(c *ExecutorConfig, k, v string) (err error) {
		c.codex().Ephemeral, err = boolean(k, v)
		return err
	},
	"claude.command":                func(c *ExecutorConfig, k, v string) error { c.claude().Command = str(v); return nil },
	"claude.agent":                  func(c *ExecutorConfig, k, v string) error { c.claude().Agent = str(v); return nil },
	"claude.permission_mode":        func(c *ExecutorConfig, k, v string) error { c.claude().PermissionMode = str(v); return nil },
	"claude.permission_prompt_tool": func(c *ExecutorConfig, k, v string) error { c.claude().PermissionPromptTool = str(v); return nil },
	"claude.effort": func(c *ExecutorConfig, k, v string) error {
		e, err := enum(k, v, "low", "medium", "high", "max")
		c.claude().Effort = &e
		return err
	},
	"claude.max_turns": func(c *ExecutorConfig, k, v string) (err error) {
		c.claude().MaxTurns, err = positiveInt(k, v)
		return err
	},
	"claude.mcp_config": func(c *ExecutorConfig, k, v string) error { c.claude().McpConfig = list(v); return nil },
	"claude.settings":   func(c *ExecutorConfig, k, v string) error { c.claude().Settings = str(v); return nil },
	"claude.settings_json": func(c *ExecutorConfig, k, v string) (err error) {
		c.claude().SettingsJSON, err = jsonObject(k, v)
		return err
	},
	"claude.hooks_json": func(c *ExecutorConfig, k, v string) (err error) {
		c.claude().HooksJSON, err = jsonObject(k, v)
		return err
	},
	"claude.allowed_http_hook_urls": func(c *ExecutorConfig, k, v string) error { c.claude().AllowedHTTPHookURLs = list(v); return nil },
	"claude.output_format": func(c *ExecutorConfig, k, v string) error {
		f, err := enum(k, v, "text", "json", "stream-json")
		c.claude().OutputFormat = &f
		return err
	},
	"claude.allowed_tools":    func(c *ExecutorConfig, k, v string) error { c.claude().AllowedTools = list(v); return nil },
	"claude.disallowed_tools": func(c *ExecutorConfig, k, v string) error { c.claude().DisallowedTools = list(v); return nil },
	"opencode.command":        func(c *ExecutorConfig, k, v string) error { c.opencode().Command = str(v); return nil },
	"opencode.agent":          func(c *ExecutorConfig, k, v string) error { c.opencode().Agent = str(v); return nil },
	"opencode.attach":         func(c *ExecutorConfig, k, v string) error { c.opencode().Attach = str(v); return nil },
	"opencode.files":          func(c *ExecutorConfig, k, v string) error { c.opencode().Files = list(v); return nil },
	"opencode.format": func(c *ExecutorConfig, k, v string) error {
		f, err := enum(k, v, "default", "json")
		c.opencode().Format = &f
		return err
	},
	"opencode.steps": func(c *ExecutorConfig, k, v string) (err error) {
		c.opencode().Steps, err = positiveInt(k, v)
		return err
	},
	"opencode.instructions": func(c *ExecutorConfig, k, v string) error { c.opencode().Instructions = list(v); return nil },
	"opencode.permission": func(c *ExecutorConfig, k, v string) (err error) {
		c.opencode().Permission, err = jsonAny(k, v)
		return err
	},
	"opencode.config_json": func(c *ExecutorConfig, k, v string) (err error) {
		c.opencode().ConfigJSON, err = jsonObject(k, v)
		return err
	},
	"local.delay": func(c *ExecutorConfig, k, v string) error {
		if d, err := time.ParseDuration(v); err != nil || d < 0 {
			return valueErr(k, v, "a non-negative Go duration such as 2s or 150ms")
		}
		c.local().Delay = str(v)
		return nil
	},
	"local.exit-code": func(c *ExecutorConfig, k, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 255 {
			return valueErr(k, v, "an integer 0-255")
		}
		c.local().ExitCode = &n
		return nil
	},
	"local.fail-attempts": func(c *ExecutorConfig, k, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return valueErr(k, v, "an integer >= 0")
		}
		c.local().FailAttempts = &n
		return nil
	},
	"local.verdict": func(c *ExecutorConfig, k, v string) error {
		u := strings.ToUpper(v)
		want := []string{"PASS", "CONCERNS", "BLOCKED", "HOLD", "FAIL"}
		if !slices.Contains(want, u) {
			return enumErr(k, v, want)
		}
		c.local().Verdict = &u
		return nil
	},
	"local.security": func(c *ExecutorConfig, k, v string) error {
		s, err := enum(k, v, "clear", "concerns", "blocked")
		c.local().Security = &s
		return err
	},
	"local.ask": func(c *ExecutorConfig, k, v string) error {
		if strings.TrimSpace(v) == "" {
			return valueErr(k, v, "a question")
		}
		c.local().Ask = str(v)
		return nil
	},
	"shell.command": func(c *ExecutorConfig, k, v string) error {
		c.Shell = &ShellConfig{Command: str(v)}
		return nil
	},
}

var envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// setExecutorKey applies one `### Executor` entry, its value already
// cleaned, to c: the one path for wave files and for the flat maps of
// config (backlog.executor), so both accept the same keys and values. A
// problem comes back naming its rule; nil means the entry was set.
func setExecutorKey(c *ExecutorConfig, key, val string) *badValue {
	if name, ok := strings.CutPrefix(key, "env."); ok {
		return setEnvEntry(c, name, val)
	}
	set, ok := executorKeys[key]
	switch {
	case !ok:
		return &badValue{"unknown-executor-key", fmt.Sprintf("unknown executor key %q%s", key,
			suggest.Hint(key, slices.Sorted(maps.Keys(executorKeys))))}
	case val == "":
		return &badValue{"empty-executor-value", fmt.Sprintf("executor key %q has an empty value", key)}
	}
	if err := set(c, key, val); err != nil {
		rule := "bad-value"
		if bv, ok := err.(*badValue); ok {
			rule = bv.rule
		}
		return &badValue{rule, "executor " + err.Error()}
	}
	c.Keys = append(c.Keys, key)
	return nil
}

// setEnvEntry reads an `env.NAME: value` entry (`""` sets an empty
// value, e.g. to blank a proxy for one agent).
func setEnvEntry(c *ExecutorConfig, name, val string) *badValue {
	if !envNameRe.MatchString(name) {
		return &badValue{"bad-env-name", fmt.Sprintf("executor env.%s: %q is not an environment variable name", name, name)}
	}
	if _, dup := c.Env[name]; dup {
		return &badValue{"duplicate-entry", fmt.Sprintf("executor env.%s is set twice", name)}
	}
	if c.Env == nil {
		c.Env = map[string]string{}
	}
	c.Env[name] = val
	return nil
}

// parseExecutor reads the `### Executor` bullets. Unknown keys, empty
// values and bad values are problems; the rest is kept.
func parseExecutor(d *doc, b *block, ps *problems, agent string) *ExecutorConfig {
	if b == nil || d.text(b) == "" {
		return nil
	}
	c := &ExecutorConfig{Fallbacks: []string{}, Tags: []string{}}
	d.items(b, func(line int, s string) {
		m := executorBulletRe.FindStringSubmatch(s)
		if m == nil {
			ps.add(line, agent, "malformed-bullet", "executor setting %q: want \"- <key>: <value>\"", s)
			return
		}
		key, val := m[1], cleanExecutorValue(m[2])
		if key == "shell.command" {
			// Our key, not the reference's: a template such as
			// `sh -c "…"` ends in a quote that is part of the command,
			// so only a whole-value backtick wrapping is removed.
			val = jsTrim(m[2])
			if len(val) >= 2 && val[0] == '`' && val[len(val)-1] == '`' {
				val = val[1 : len(val)-1]
			}
		}
		if bv := setExecutorKey(c, key, val); bv != nil {
			ps.add(line, agent, bv.rule, "%s", bv.msg)
		}
	})
	return c
}
