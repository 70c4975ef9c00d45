package executor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
)

// A collector's token travels in OTEL_EXPORTER_OTLP_HEADERS (or a
// signal's own list): no agent or worker gets it unless
// executors.env.keep names it. The endpoint, which holds no credential,
// still reaches every agent, so an agent CLI's own telemetry can export.
func TestAnAgentNeverSeesTheCollectorsTokenUnlessKept(t *testing.T) {
	env := []string{"PATH=/bin", "OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318",
		"OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20collector-token", "OTEL_EXPORTER_OTLP_METRICS_HEADERS=x-tenant=t1"}
	worker := &WorkerInfo{Issue: 3, Branch: "wave/x-i3", Target: "wave/x", Worktree: "/w", TokenEnv: "ACME_GH"}
	for _, tt := range []struct {
		name   string
		extra  string
		id     string
		worker *WorkerInfo
		want   []string
	}{
		{"a wave agent", "", Claude, nil, []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "PATH"}},
		{"a backlog worker", "", Codex, worker, []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "PATH"}},
		{"kept by executors.env.keep", "  env:\n    keep: [OTEL_EXPORTER_OTLP_HEADERS]\n", Claude, worker,
			[]string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS", "PATH"}},
	} {
		if got := seenFrom(t, secretLane(t, tt.extra), tt.id, tt.worker, env); !slices.Equal(got, tt.want) {
			t.Errorf("%s (%s) sees %q, want %q", tt.name, tt.id, got, tt.want)
		}
	}
}

// seenFrom is the names of env an agent of id gets from environ.
func seenFrom(t *testing.T, lane *config.Lane, id string, worker *WorkerInfo, environ []string) []string {
	t.Helper()
	run := t.TempDir()
	prompt := filepath.Join(run, "prompt.md")
	if err := os.WriteFile(prompt, []byte("p"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := implAgent()
	a.Executor.ID = &id
	a.Executor.Fallbacks = nil
	r, err := Resolve(&a, "implementation", lane, "", false)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := Build(BuildInput{Agent: &a, Wave: testWave(), Resolved: r, Lane: lane, RunDir: run, PromptPath: prompt,
		Attempt: 1, Self: "/bin/wave-orchestrator", Worker: worker})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, kv := range spec.Environ(environ) {
		k, _, _ := strings.Cut(kv, "=")
		if _, ours := spec.Env[k]; !ours {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	return names
}
