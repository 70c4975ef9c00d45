package runtime

import (
	"strings"
	"testing"
)

func agentEnvMap(base []string, p *Payload) map[string]string {
	env := map[string]string{}
	for _, kv := range agentEnv(base, p) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}

func TestEveryAgentsTelemetryCarriesItsLaneWaveAgentAndRun(t *testing.T) {
	t.Parallel()
	p := &Payload{Lane: "main", WaveNumber: 2, AgentID: "A1", Attempt: 3, RunID: "w2-A1-a3", ExecutorID: "claude", RunDir: "/r"}
	env := agentEnvMap([]string{"PATH=/bin", "OTEL_RESOURCE_ATTRIBUTES=team=infra,wave.lane=outer"}, p)
	want := "team=infra,wave.lane=main,wave.number=2,wave.agent=A1,wave.attempt=3,wave.run_id=w2-A1-a3,wave.executor=claude"
	if got := env["OTEL_RESOURCE_ATTRIBUTES"]; got != want {
		t.Errorf("OTEL_RESOURCE_ATTRIBUTES = %q, want %q", got, want)
	}
}

func TestABacklogWorkersTelemetryCarriesItsIssueAndBacklogRun(t *testing.T) {
	t.Parallel()
	p := &Payload{Lane: "main", AgentID: "i12", Attempt: 1, RunID: "i12-a1", ExecutorID: "codex", RunDir: "/r",
		Env: map[string]string{"WAVE_ISSUE_NUMBER": "12", "WAVE_BACKLOG_RUN_ID": "20260101-x-abc123",
			"OTEL_RESOURCE_ATTRIBUTES": "from.config=1"}}
	env := agentEnvMap([]string{"PATH=/bin"}, p)
	want := "from.config=1,wave.lane=main,wave.agent=i12,wave.attempt=1,wave.issue=12,wave.run_id=i12-a1," +
		"wave.backlog.run_id=20260101-x-abc123,wave.executor=codex"
	if got := env["OTEL_RESOURCE_ATTRIBUTES"]; got != want {
		t.Errorf("OTEL_RESOURCE_ATTRIBUTES = %q, want %q", got, want)
	}
}
