package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// recordingClaude records its argv (one per line) and environment.
const recordingClaude = `#!/bin/sh
for a in "$@"; do printf '%s\n' "$a"; done > "$0.argv"
env > "$0.env"
echo ok
`

// The probe before a salvage relaunch runs as a worker would: the
// configured claude.command and model, executors.claude.env and the
// worker's env.IS_SANDBOX, with a shell's ANTHROPIC_BASE_URL and the
// GitHub token scrubbed — not the supervisor's own environment.
func TestProbeSeesExactlyWhatAWorkerWould(t *testing.T) {
	f := newFixture(t)
	fake := filepath.Join(t.TempDir(), "my-claude")
	if err := os.WriteFile(fake, []byte(recordingClaude), 0o755); err != nil {
		t.Fatal(err)
	}
	f.config = strings.Replace(baseConfig, "executors:\n  default: local\n",
		"executors:\n  default: local\n  claude:\n    env:\n      PROBE_VENDOR: from-config\n", 1)
	f.config = strings.Replace(f.config, "    id: local\n", "    id: claude\n    claude.command: "+fake+
		"\n    model: model-x\n    env.IS_SANDBOX: \"1\"\n", 1)
	f.issue(1, "Anything", "Files: a/**")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/leaked")
	t.Setenv("GITHUB_TOKEN", "ghp-leaked")
	t.Setenv("IS_SANDBOX", "0")
	o := f.options(context.Background(), &syncBuffer{})
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := s.probe(t.Context()); !ok {
		t.Fatalf("probe failed: %s", why)
	}
	argv, _ := os.ReadFile(fake + ".argv")
	wantArgv := []string{"-p", "--no-session-persistence", "--max-turns", "1", "--model", "model-x", "reply ok"}
	if got := lines(string(argv)); !slices.Equal(got, wantArgv) {
		t.Errorf("probe argv %q, want %q", got, wantArgv)
	}
	envb, _ := os.ReadFile(fake + ".env")
	env := lines(string(envb))
	// What a worker's launch gets, built by the worker's own path.
	res, err := ResolveWorker(o.Config, o.Lane, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prompt.md"), []byte("work"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec, err := executor.Build(executor.BuildInput{Agent: &wave.Agent{ID: "i1"}, Wave: &wave.Wave{}, Resolved: res, Lane: o.Lane,
		RunDir: dir, PromptPath: filepath.Join(dir, "prompt.md"), LogPath: filepath.Join(dir, "agent.log"), Attempt: 1, Self: binPath,
		Worker: &executor.WorkerInfo{Issue: 1, TokenEnv: o.Config.GitHub.TokenEnv}})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Argv[0] != fake {
		t.Fatalf("worker argv[0] %q, want the configured command", spec.Argv[0])
	}
	for k, v := range spec.Env {
		if !strings.HasPrefix(k, "WAVE_") && !slices.Contains(env, k+"="+v) {
			t.Errorf("the probe lacks the worker's %s=%s", k, v)
		}
	}
	for _, k := range spec.Scrub {
		for _, kv := range env {
			if strings.HasPrefix(kv, k+"=") {
				t.Errorf("the probe saw %s, which a worker's environment is scrubbed of", kv)
			}
		}
	}
	for _, want := range []string{"PROBE_VENDOR=from-config", "IS_SANDBOX=1"} {
		if !slices.Contains(env, want) {
			t.Errorf("probe env lacks %s", want)
		}
	}
}

// A salvage held by a failing probe shows in `backlog status`, with the
// failures so far and the probe's reason.
func TestStatusShowsTheSalvageAFailingProbeHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.config = baseConfig + "  probe:\n    argv: [sh, -c, \"echo Not logged in; exit 1\"]\n"
	f.issue(1, "Always broken", "Files: a/**\n\nlocal-agent: fail-attempts=9")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan result, 1)
	go func() { done <- f.runCtx(ctx, nil, 1) }()
	var probes []ProbeWait
	waitFor(t, "the probe to fail", func() bool {
		if dir := f.currentRunDir(); dir != "" {
			probes = readProbes(dir)
		}
		return len(probes) > 0
	})
	v, err := Status(context.Background(), f.currentRunDir(), nil, true, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Probes) != 1 || v.Probes[0].Issue != 1 || v.Probes[0].MaxTries != maxProbeTries {
		t.Fatalf("status probes %+v", v.Probes)
	}
	if want, line := "waiting: probe failed 1×: sh: exit status 1: Not logged in (#1's salvage relaunch", backlog.ProbeLine(v.Probes[0]); !strings.Contains(line, want) {
		t.Errorf("status line %q lacks %q", line, want)
	}
	cancel()
	<-done
}

func lines(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '\n' })
}
