package wavemode

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// startAndKillLauncher starts a launcher, waits until the first runs of
// ids are all running, and kills the launcher with SIGKILL.
func startAndKillLauncher(t *testing.T, r *e2etest.Repo, ids ...string) {
	t.Helper()
	first := r.Command(e2etest.Context(t), "launch", "--lane", "main", "--no-dashboard")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	e2etest.WaitFor(t, "running agents "+strings.Join(ids, ","), 30*time.Second, func() bool {
		for _, id := range ids {
			b, err := os.ReadFile(filepath.Join(r.Layout().RunDir(0, id, 1), "runtime.json"))
			if err != nil || !strings.Contains(string(b), `"running"`) {
				return false
			}
		}
		return true
	})
	_ = first.Process.Signal(syscall.SIGKILL)
	_ = first.Wait()
}

// A torn last line in events.jsonl (a crash or a full disk mid-append)
// must not swallow the next wave run's start: after a kill -9 the next
// launch still sees the interrupted run and adopts its agents instead of
// launching them again.
func TestTornEventTailDoesNotHideInterruptedRun(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	ids := []string{"A1", "A2", "A3"}
	var impl []e2etest.Agent
	for _, id := range ids {
		impl = append(impl, e2etest.ImplAgent(id, "local.delay: 3s"))
	}
	r.WriteWave(0, append(impl, e2etest.ClosureAgents()...)...)
	r.Write(".wave/lanes/main/events.jsonl", `{"recordVersion":1,"id":"ctrl-wave_run-torn","lane":"main","wave":0,"entityType":"wave_ru`)
	startAndKillLauncher(t, r, ids...)
	res := e2etest.Launch(t, r)
	if res.Code != 0 {
		t.Fatalf("relaunch exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	evs, bad, err := state.ReadEvents(r.Layout().EventsPath())
	if err != nil || len(bad) != 1 || !strings.HasSuffix(bad[0], ":1") {
		t.Fatalf("events: err %v, bad lines %v; want only the torn first line", err, bad)
	}
	launched, adopted := e2etest.AgentStarts(evs)
	for _, id := range ids {
		if launched[id] != 1 || adopted[id] != 1 {
			t.Fatalf("%s launched %d adopted %d; want one launch and one adoption", id, launched[id], adopted[id])
		}
	}
}

// Deleting the lock file under a running launcher does not let a second
// launcher run the same lane: it exits 32.
func TestDeletedLockFileKeepsSecondLauncherOut(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 3s")}, e2etest.ClosureAgents()...)...)
	ctx := e2etest.Context(t)
	first := r.Start(ctx, "launch", "--lane", "main", "--no-dashboard")
	e2etest.WaitFor(t, "A1 running", 30*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(r.Layout().RunDir(0, "A1", 1), "runtime.json"))
		return err == nil && strings.Contains(string(b), `"running"`)
	})
	if err := os.Remove(r.Layout().LockPath()); err != nil {
		t.Fatal(err)
	}
	res := r.Run(ctx, "launch", "--lane", "main", "--no-dashboard")
	if res.Code != 32 {
		t.Fatalf("second launcher exit %d, stderr %q; want 32", res.Code, res.Stderr)
	}
	if out := first.Wait(t, "first launcher", time.Minute); out.Code != 0 {
		t.Fatalf("first launcher exit %d\n%s\n%s", out.Code, out.Stdout, out.Stderr)
	}
}

// A corrupt ledger.json is reported, kept as a backup and rebuilt from
// the events; --auto-next then goes on with the next wave.
func TestCorruptLedgerDoesNotStopAutoNext(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r, "--start-wave", "0", "--end-wave", "0"); res.Code != 0 {
		t.Fatalf("wave 0: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	r.WriteWave(1, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	r.Write(".wave/lanes/main/ledger.json", "{\"completedWaves\": [0,")
	res := e2etest.Launch(t, r, "--auto-next")
	if res.Code != 0 || !strings.Contains(res.Stdout, "ledger") || !strings.Contains(res.Stdout, "rebuilt") {
		t.Fatalf("auto-next over a corrupt ledger: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	waves := map[int]int{}
	for _, ev := range r.Events() {
		if ev.EntityType == state.EntityWaveRun && ev.Action == "started" {
			waves[ev.Wave]++
		}
	}
	if waves[0] != 1 || waves[1] != 1 {
		t.Fatalf("wave runs started %v; want wave 0 once (before) and wave 1 once", waves)
	}
	if backups, _ := filepath.Glob(r.Layout().LedgerPath() + ".corrupt-*"); len(backups) != 1 {
		t.Fatalf("backups %v", backups)
	}
}

// hasRawControl reports a control character other than newline in s.
func hasRawControl(s string) bool {
	for _, line := range strings.Split(s, "\n") {
		if termtext.HasControl(strings.ReplaceAll(line, "\t", " ")) {
			return true
		}
	}
	return false
}

// An agent id carrying an escape sequence is refused before anything
// starts, naming file, line, agent and rule, and the terminal never
// receives the sequence.
func TestAgentIDWithEscapeSequenceIsRefused(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1\x1b]0;owned\x07")}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r)
	if res.Code != 1 || !strings.Contains(res.Stderr, "docs/plans/waves/wave-0.md:5: agent A1\\x1b]0;owned\\x07: agent-id-control-character") {
		t.Fatalf("exit %d stderr %q", res.Code, res.Stderr)
	}
	if hasRawControl(res.Stderr) || hasRawControl(res.Stdout) {
		t.Fatalf("raw control characters printed: %q %q", res.Stdout, res.Stderr)
	}
	if _, err := os.Stat(r.Layout().RunsDir(0)); !os.IsNotExist(err) {
		t.Fatal("runs were created before the refusal")
	}
}

// Untrusted text that reaches launch output, status and coord list (here
// a blocker's summary) is printed escaped.
func TestUntrustedTextIsPrintedEscaped(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	hostile := "stop\x1b[2J\x1b]0;owned\x07\u009b1m"
	if res := r.Run(e2etest.Context(t), "coord", "post", "--lane", "main", "--wave", "0", "--agent", "A1", "--kind", "blocker", "--summary", hostile); res.Code != 0 {
		t.Fatalf("post: %d %s", res.Code, res.Stderr)
	}
	want := `stop\x1b[2J\x1b]0;owned\x07\u009b1m`
	res := e2etest.Launch(t, r)
	if res.Code != 43 || !strings.Contains(res.Stdout, want) || hasRawControl(res.Stdout) || hasRawControl(res.Stderr) {
		t.Fatalf("launch exit %d\nstdout %q\nstderr %q", res.Code, res.Stdout, res.Stderr)
	}
	for _, args := range [][]string{{"coord", "list", "--lane", "main", "--wave", "0"}, {"status", "--lane", "main"}, {"dashboard", "--lane", "main"}} {
		out := r.Run(e2etest.Context(t), args...)
		if out.Code != 0 || hasRawControl(out.Stdout) || hasRawControl(out.Stderr) {
			t.Fatalf("%v: exit %d\nstdout %q\nstderr %q", args, out.Code, out.Stdout, out.Stderr)
		}
	}
}

// fakeClaudeJSON stands for `claude -p --output-format json`: it lands
// the deliverable and prints its whole answer, markers included, as the
// "result" string of one JSON object, as claude does.
const fakeClaudeJSON = `#!/bin/sh
mkdir -p src && echo done > src/a1.txt
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"Landed src/a1.txt.\n\n[wave-proof] completion=contract durability=none proof=unit state=met\n[wave-doc-delta] state=owned","session_id":"s-1"}'
`

// With claude.output_format json the markers claude printed are inside
// the JSON "result" string; the gate reads them there.
func TestClaudeJSONOutputMarkersPassTheGate(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	fake := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(fake, []byte(fakeClaudeJSON), 0o755); err != nil {
		t.Fatal(err)
	}
	// env.IS_SANDBOX: as root, preflight refuses claude's default
	// bypassPermissions unless the agent's environment says sandbox.
	a1 := e2etest.ImplAgent("A1", "id: claude", "claude.command: "+fake, "claude.output_format: json", "env.IS_SANDBOX: 1")
	r.WriteWave(0, append([]e2etest.Agent{a1}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r, "--max-retries-per-wave", "0")
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
}

// `--repo-root R launch` run from another directory: the agent's PWD is
// its working directory R, not the launcher's (opencode resolves --file
// against $PWD). printenv, not a shell: a shell repairs a stale PWD.
func TestAgentPWDIsItsWorkingDirectory(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	probe := e2etest.Agent{Id: "A1", Title: "PWD probe", Owns: []string{"src/pwd.txt"}, Knobs: []string{"id: shell", "shell.command: printenv PWD"}}
	r.WriteWave(0, append([]e2etest.Agent{probe}, e2etest.ClosureAgents()...)...)
	cmd := r.Command(e2etest.Context(t), "launch", "--lane", "main", "--no-dashboard", "--max-retries-per-wave", "0")
	cmd.Dir = t.TempDir()
	cmd.Env = append(cmd.Env, "PWD="+cmd.Dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("launch: %v\n%s", err, out)
	}
	log, err := os.ReadFile(filepath.Join(r.Layout().RunDir(0, "A1", 1), "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := strings.Cut(string(log), "\n"); strings.TrimSpace(got) != r.Root {
		t.Fatalf("agent PWD %q, want %q", got, r.Root)
	}
}

// executors.env.scrub: [] keeps ANTHROPIC_BASE_URL; executors.shell.env
// and the agent's env.NAME entries reach the agent, agent over vendor; a
// secret-looking value is redacted in launch.json yet reaches the agent.
func TestExecutorEnvAndEmptyScrubReachTheAgent(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.Write("wave.config.yaml", strings.Replace(e2etest.Config, "executors:\n  default: local\n",
		"executors:\n  default: local\n  env:\n    scrub: []\n  shell:\n    env:\n      PROBE_BASE: vendor\n      PROBE_BOTH: vendor\n", 1))
	probe := e2etest.Agent{Id: "A1", Title: "env probe", Owns: []string{"src/env.txt"}, Knobs: []string{"id: shell",
		"shell.command: printenv PROBE_BASE PROBE_BOTH PROBE_API_KEY ANTHROPIC_BASE_URL", "env.PROBE_BOTH: agent", "env.PROBE_API_KEY: s3cret-value"}}
	r.WriteWave(0, append([]e2etest.Agent{probe}, e2etest.ClosureAgents()...)...)
	cmd := r.Command(e2etest.Context(t), "launch", "--lane", "main", "--no-dashboard", "--max-retries-per-wave", "0")
	cmd.Env = append(cmd.Env, "ANTHROPIC_BASE_URL=http://127.0.0.1:9")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("launch: %v\n%s", err, out)
	}
	dir := r.Layout().RunDir(0, "A1", 1)
	log, err := os.ReadFile(filepath.Join(dir, "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	got := e2etest.Lines(strings.ReplaceAll(string(log), "\r", ""))
	want := []string{"vendor", "agent", "s3cret-value", "http://127.0.0.1:9"}
	if len(got) < 4 || !slices.Equal(got[:4], want) {
		t.Fatalf("agent saw %q, want %q", got, want)
	}
	var payload struct {
		Env map[string]string `json:"env"`
	}
	e2etest.ReadJSONFile(t, filepath.Join(dir, "launch.json"), &payload)
	if payload.Env["PROBE_API_KEY"] != "<redacted>" || payload.Env["PROBE_BOTH"] != "agent" {
		t.Fatalf("launch.json env %v: want PROBE_API_KEY redacted", payload.Env)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "launch.json")); strings.Contains(string(b), "s3cret-value") {
		t.Fatal("launch.json holds the secret")
	}
}

// An open human escalation or clarification request addressed to a
// failed implementation agent stops its retries: the launch exits 43
// naming the record, and the agent ran once.
func TestHumanInputAddressedToAgentStopsItsRetries(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"human-escalation", "clarification-request"} {
		t.Run(kind, func(t *testing.T) {
			r := e2etest.NewRepo(t)
			r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.fail-attempts: 9")}, e2etest.ClosureAgents()...)...)
			post := r.Run(e2etest.Context(t), "coord", "post", "--lane", "main", "--wave", "0", "--agent", "A0", "--kind", kind,
				"--target", "agent:A1", "--summary", "which schema does A1 implement?")
			if post.Code != 0 {
				t.Fatalf("post: %d %s", post.Code, post.Stderr)
			}
			res := e2etest.Launch(t, r, "--max-retries-per-wave", "2")
			if res.Code != 43 || !strings.Contains(res.Stdout, "coordination-blocker-open") || !strings.Contains(res.Stdout, "A1 is not retried") {
				t.Fatalf("exit %d, want 43 naming the record\n%s\n%s", res.Code, res.Stdout, res.Stderr)
			}
			if launched, _ := e2etest.AgentStarts(r.Events()); launched["A1"] != 1 {
				t.Fatalf("A1 launched %d times, want once", launched["A1"])
			}
		})
	}
}

// fakeClaudeText lands A1's deliverable and prints its markers.
const fakeClaudeText = `#!/bin/sh
mkdir -p src && echo done > src/a1.txt
echo '[wave-proof] completion=contract durability=none proof=unit state=met'
echo '[wave-doc-delta] state=owned'
`

// A retry's executor fallback keeps the lane's runtimeMixTargets: the
// fallback to local (already at its target of 3, the closure agents) is
// blocked and the next candidate, claude, runs the retry.
func TestRetryFallbackRespectsRuntimeMixTargets(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	fake := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(fake, []byte(fakeClaudeText), 0o755); err != nil {
		t.Fatal(err)
	}
	r.Write("wave.config.yaml", strings.Replace(e2etest.Config, "executors:\n  default: local\n",
		"executors:\n  default: local\n  claude:\n    command: "+fake+"\nruntimePolicy:\n  runtimeMixTargets:\n    local: 3\n", 1))
	a1 := e2etest.ImplAgent("A1", "id: shell", "shell.command: false {agent}", "fallbacks: local, claude", "retry-policy: fallback-allowed")
	r.WriteWave(0, append([]e2etest.Agent{a1}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r)
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var execs []string
	blocked := false
	for _, ev := range r.Events() {
		if ev.EntityType == state.EntityAgentRun && ev.Action == "started" && ev.Data["agentId"] == "A1" {
			e, _ := ev.Data["executorId"].(string)
			execs = append(execs, e)
		}
		if ev.EntityType == state.EntityRetry && ev.Action == "retry-fallback-blocked" && ev.Data["executorId"] == "local" {
			blocked = true
		}
	}
	if !slices.Equal(execs, []string{"shell", "claude"}) || !blocked {
		t.Fatalf("A1 ran on %v (fallback to local blocked recorded: %v), want shell then claude", execs, blocked)
	}
	if !strings.Contains(res.Stdout, "A1 fallback to local blocked (retry-fallback-blocked)") {
		t.Fatalf("no blocked-fallback line in the launcher output:\n%s", res.Stdout)
	}
}
