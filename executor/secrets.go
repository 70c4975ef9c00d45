package executor

import (
	"slices"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// Credentials lists, per executor, the secret variables its CLI reads to
// reach its model: the only ones of the launcher's secrets (see
// config.SecretEnvNames) its agents keep. Its configured env (executors.
// <id>.env, an agent's env.NAME) is given on top, and executors.env.keep
// adds names for every executor.
var Credentials = map[string][]string{
	// The API key, a gateway's bearer token, a subscription's OAuth
	// token, and the Bedrock and Vertex credentials Claude Code reads.
	Claude: {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK",
		"GOOGLE_APPLICATION_CREDENTIALS"},
	Codex: {"OPENAI_API_KEY", "CODEX_API_KEY", "AZURE_OPENAI_API_KEY"},
	// opencode talks to whichever provider its model names.
	Opencode: {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY",
		"GOOGLE_GENERATIVE_AI_API_KEY", "GROQ_API_KEY", "XAI_API_KEY", "MISTRAL_API_KEY", "DEEPSEEK_API_KEY",
		"AZURE_API_KEY", "OPENCODE_API_KEY"},
	// local simulates an agent and needs nothing; a shell command gets
	// what executors.env.keep names.
	Local: nil,
	Shell: nil,
}

// envFilter is what an agent of executor id on lane loses of the
// launcher's environment: the scrub list, every variable the
// configuration names as a credential (the GitHub token, each notify
// sink's urlEnv) and, outside a pod, every variable whose name says it is
// a secret — except its executor's Credentials and executors.env.keep. A
// backlog worker or reviewer (tokenEnv set) keeps no configured
// credential whatever keep says: it works on text anyone can write.
//
// A pod's environment is already only what the lane hands its agents
// (kubernetes.envFrom, passEnv), so there the name rule is not applied.
func envFilter(lane *config.Lane, id, tokenEnv string) runtime.EnvFilter {
	keep := union(Credentials[id], lane.Executors.Env.Keep)
	f := runtime.EnvFilter{Scrub: scrubList(lane), ScrubSecrets: !lane.Runtime.UsesKubernetes()}
	configured := lane.SecretEnv
	if tokenEnv != "" {
		configured = union(configured, []string{tokenEnv})
	}
	for _, k := range configured {
		if tokenEnv != "" || !slices.Contains(keep, k) {
			f.Scrub = union(f.Scrub, []string{k})
		}
	}
	if f.ScrubSecrets {
		f.KeepSecrets = keep
	}
	return f
}
