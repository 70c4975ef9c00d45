package executor

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// Vendor env (lane ← profile) and the agent's env.NAME entries reach the
// launch spec, agent over vendor; a fallback takes the new vendor's env;
// WAVE_* stays ours.
func TestBuildEnvMergesVendorThenAgent(t *testing.T) {
	root, run := t.TempDir(), t.TempDir()
	promptPath := filepath.Join(run, "prompt.md")
	if err := os.WriteFile(promptPath, []byte("p"), 0o644); err != nil {
		t.Fatal(err)
	}
	lane := testLane(root)
	lane.Executors.Codex.Env = map[string]string{"BASE_URL": "http://lane", "SHARED": "lane", "WAVE_AGENT_ID": "spoof"}
	lane.Executors.Claude.Env = map[string]string{"IS_SANDBOX": "1", "SHARED": "claude-lane"}
	lane.Executors.Profiles["env"] = config.Profile{Codex: &wave.CodexConfig{Env: map[string]string{"SHARED": "profile", "PROFILE_ONLY": "p"}}}
	a := implAgent()
	a.Executor.Profile = ptr("env")
	a.Executor.Env = map[string]string{"SHARED": "agent", "API_TOKEN": "t0ken"}
	r, err := Resolve(&a, "implementation", lane, "", false)
	if err != nil {
		t.Fatal(err)
	}
	build := func(r Resolved) Spec {
		spec, err := Build(BuildInput{Agent: &a, Wave: testWave(), Resolved: r, Lane: lane, RunDir: run, PromptPath: promptPath, Attempt: 1})
		if err != nil {
			t.Fatal(err)
		}
		return spec
	}
	env := build(r).Env
	for k, want := range map[string]string{"BASE_URL": "http://lane", "SHARED": "agent", "PROFILE_ONLY": "p", "API_TOKEN": "t0ken", "WAVE_AGENT_ID": "A1"} {
		if env[k] != want {
			t.Errorf("codex %s = %q, want %q", k, env[k], want)
		}
	}
	fb, _ := fallback(r, 2, "failed", func(string) bool { return true })
	if fb.ID != Claude {
		t.Fatalf("fallback to %s", fb.ID)
	}
	env = build(fb).Env
	if env["IS_SANDBOX"] != "1" || env["SHARED"] != "agent" || env["BASE_URL"] != "" {
		t.Errorf("claude fallback env %v", env)
	}
}

// executors.env.scrub: nil means the default list, an empty list none.
func TestScrubNilIsDefaultEmptyIsOff(t *testing.T) {
	lane := testLane(t.TempDir())
	lane.Executors.Env.Scrub = nil
	if got := scrubList(lane); !reflect.DeepEqual(got, DefaultScrub) {
		t.Errorf("nil scrub -> %v, want %v", got, DefaultScrub)
	}
	lane.Executors.Env.Scrub = []string{}
	if got := scrubList(lane); len(got) != 0 {
		t.Errorf("empty scrub -> %v, want none", got)
	}
}

// Every wave agent run gets LPM_AUTH_STICKY_KEY naming its lane, wave,
// attempt and agent, so a credential broker keeps one lease per run; a
// value the user configured for the agent wins, then one set in the
// environment the launch runs in, and backlog workers (no wave) get none.
func TestBuildSetsStickyKeyUnlessConfigured(t *testing.T) {
	root, run := t.TempDir(), t.TempDir()
	promptPath := filepath.Join(run, "prompt.md")
	if err := os.WriteFile(promptPath, []byte("p"), 0o644); err != nil {
		t.Fatal(err)
	}
	lane := testLane(root)
	build := func(a wave.Agent, attempt int, worker *WorkerInfo, launchEnv map[string]string) map[string]string {
		t.Helper()
		r, err := Resolve(&a, "implementation", lane, "", false)
		if err != nil {
			t.Fatal(err)
		}
		w := testWave()
		w.Number = 3
		lookup := func(k string) (string, bool) { v, ok := launchEnv[k]; return v, ok }
		spec, err := Build(BuildInput{Agent: &a, Wave: w, Resolved: r, Lane: lane, RunDir: run, PromptPath: promptPath, Attempt: attempt,
			Worker: worker, LaunchEnv: lookup})
		if err != nil {
			t.Fatal(err)
		}
		return spec.Env
	}
	a := implAgent()
	configured := func() wave.Agent {
		c := a
		ec := *a.Executor
		ec.Env = map[string]string{StickyKeyEnv: "mine"}
		c.Executor = &ec
		return c
	}()
	fromLaunch := map[string]string{StickyKeyEnv: "from-the-launch"}
	tests := []struct {
		name      string
		agent     wave.Agent
		attempt   int
		worker    *WorkerInfo
		launchEnv map[string]string
		want      string
	}{
		{"default", a, 2, nil, nil, "wave:main:3:2:A1"},
		{"configured value wins", configured, 2, nil, nil, "mine"},
		{"the launch environment's wins over the default", a, 2, nil, fromLaunch, "from-the-launch"},
		{"an empty one in the launch environment does not", a, 2, nil, map[string]string{StickyKeyEnv: ""}, "wave:main:3:2:A1"},
		{"configured value wins over the launch environment's", configured, 2, nil, fromLaunch, "mine"},
		{"backlog worker gets none", a, 1, &WorkerInfo{Issue: 7, Branch: "b", Target: "t", Worktree: root}, fromLaunch, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := build(tc.agent, tc.attempt, tc.worker, tc.launchEnv)[StickyKeyEnv]; got != tc.want {
				t.Fatalf("%s = %q, want %q", StickyKeyEnv, got, tc.want)
			}
		})
	}
}
