package executor

import "github.com/wave-orchestrator/wave-orchestrator/sandbox"

// SandboxNeeds is what executor id's CLI needs inside a sandbox
// (docs/security-model.md): the files of its home it reads — its
// credentials and settings, copied in privately, never the rest of the
// home — and where its model endpoint is, which the sandbox's proxy
// always lets through: the URL in its base-URL variables when set, else
// the vendor's API. The local and shell executors declare nothing.
func SandboxNeeds(id string) sandbox.Needs {
	switch id {
	case Claude:
		return sandbox.Needs{
			Home: []sandbox.HomeFile{
				{Env: "CLAUDE_CONFIG_DIR", Path: ".credentials.json", Else: ".claude/.credentials.json"},
				{Env: "CLAUDE_CONFIG_DIR", Path: "settings.json", Else: ".claude/settings.json"},
				{Env: "CLAUDE_CONFIG_DIR", Path: ".claude.json", Else: ".claude.json"},
			},
			EndpointEnv: []string{"ANTHROPIC_BASE_URL"},
			Endpoints:   []string{"api.anthropic.com:443"},
		}
	case Codex:
		return sandbox.Needs{
			Home: []sandbox.HomeFile{
				{Env: "CODEX_HOME", Path: "auth.json", Else: ".codex/auth.json"},
				{Env: "CODEX_HOME", Path: "config.toml", Else: ".codex/config.toml"},
			},
			EndpointEnv: []string{"OPENAI_BASE_URL"},
			// chatgpt.com serves the accounts that sign in with ChatGPT.
			Endpoints: []string{"api.openai.com:443", "chatgpt.com:443"},
		}
	case Opencode:
		return sandbox.Needs{
			Home: []sandbox.HomeFile{
				{Env: "XDG_CONFIG_HOME", Path: "opencode/opencode.json", Else: ".config/opencode/opencode.json"},
				{Env: "XDG_DATA_HOME", Path: "opencode/auth.json", Else: ".local/share/opencode/auth.json"},
			},
			EndpointEnv: []string{"ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"},
			Endpoints:   []string{"api.anthropic.com:443", "api.openai.com:443"},
		}
	}
	return sandbox.Needs{}
}
