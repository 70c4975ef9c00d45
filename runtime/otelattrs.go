package runtime

import (
	"strconv"

	"github.com/wave-orchestrator/wave-orchestrator/internal/otelenv"
)

// resourceAttrs is what every agent's OTEL_RESOURCE_ATTRIBUTES carries
// about its run, so an agent CLI's own telemetry (Claude Code's, Codex's)
// rolls up by lane, wave, agent, issue and run beside this tool's spans
// (docs/observability.md). env is the agent's environment as built so far.
func resourceAttrs(p *Payload, env map[string]string) []otelenv.KV {
	kv := []otelenv.KV{{Key: otelenv.Lane, Value: p.Lane}}
	issue := env["WAVE_ISSUE_NUMBER"]
	if issue == "" {
		kv = append(kv, otelenv.KV{Key: otelenv.Wave, Value: strconv.Itoa(p.WaveNumber)})
	}
	return append(kv,
		otelenv.KV{Key: otelenv.Agent, Value: p.AgentID},
		otelenv.KV{Key: otelenv.Attempt, Value: strconv.Itoa(p.Attempt)},
		otelenv.KV{Key: otelenv.Issue, Value: issue},
		otelenv.KV{Key: otelenv.RunID, Value: p.RunID},
		otelenv.KV{Key: otelenv.BacklogRun, Value: env["WAVE_BACKLOG_RUN_ID"]},
		otelenv.KV{Key: otelenv.Executor, Value: p.ExecutorID})
}
