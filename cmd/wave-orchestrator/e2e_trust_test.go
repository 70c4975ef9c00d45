package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// startAndKillLauncher starts a launcher, waits until the first runs of
// ids are all running, and kills the launcher with SIGKILL.
func startAndKillLauncher(t *testing.T, r *testRepo, ids ...string) {
	t.Helper()
	first := r.command(ctxFor(t), "launch", "--lane", "main", "--no-dashboard")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "running agents "+strings.Join(ids, ","), 30*time.Second, func() bool {
		for _, id := range ids {
			b, err := os.ReadFile(filepath.Join(r.layout().RunDir(0, id, 1), "runtime.json"))
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
	r := newRepo(t)
	ids := []string{"A1", "A2", "A3"}
	var impl []agentSpec
	for _, id := range ids {
		impl = append(impl, implAgent(id, "local.delay: 3s"))
	}
	r.writeWave(0, append(impl, closureAgents()...)...)
	r.write(".wave/lanes/main/events.jsonl", `{"recordVersion":1,"id":"ctrl-wave_run-torn","lane":"main","wave":0,"entityType":"wave_ru`)
	startAndKillLauncher(t, r, ids...)
	res := launch(t, r)
	if res.code != 0 {
		t.Fatalf("relaunch exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs, bad, err := state.ReadEvents(r.layout().EventsPath())
	if err != nil || len(bad) != 1 || !strings.HasSuffix(bad[0], ":1") {
		t.Fatalf("events: err %v, bad lines %v; want only the torn first line", err, bad)
	}
	launched, adopted := agentStarts(evs)
	for _, id := range ids {
		if launched[id] != 1 || adopted[id] != 1 {
			t.Fatalf("%s launched %d adopted %d; want one launch and one adoption", id, launched[id], adopted[id])
		}
	}
}

// Deleting the lock file under a running launcher does not let a second
// launcher run the same lane: it exits 32.
func TestDeletedLockFileKeepsSecondLauncherOut(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.delay: 3s")}, closureAgents()...)...)
	ctx := ctxFor(t)
	first := r.start(ctx, "launch", "--lane", "main", "--no-dashboard")
	waitFor(t, "A1 running", 30*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(r.layout().RunDir(0, "A1", 1), "runtime.json"))
		return err == nil && strings.Contains(string(b), `"running"`)
	})
	if err := os.Remove(r.layout().LockPath()); err != nil {
		t.Fatal(err)
	}
	res := r.run(ctx, "launch", "--lane", "main", "--no-dashboard")
	if res.code != 32 {
		t.Fatalf("second launcher exit %d, stderr %q; want 32", res.code, res.stderr)
	}
	if out := first.wait(t, "first launcher", time.Minute); out.code != 0 {
		t.Fatalf("first launcher exit %d\n%s\n%s", out.code, out.stdout, out.stderr)
	}
}

// A corrupt ledger.json is reported, kept as a backup and rebuilt from
// the events; --auto-next then goes on with the next wave.
func TestCorruptLedgerDoesNotStopAutoNext(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	if res := launch(t, r, "--start-wave", "0", "--end-wave", "0"); res.code != 0 {
		t.Fatalf("wave 0: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	r.writeWave(1, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	r.write(".wave/lanes/main/ledger.json", "{\"completedWaves\": [0,")
	res := launch(t, r, "--auto-next")
	if res.code != 0 || !strings.Contains(res.stdout, "ledger") || !strings.Contains(res.stdout, "rebuilt") {
		t.Fatalf("auto-next over a corrupt ledger: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	waves := map[int]int{}
	for _, ev := range r.events() {
		if ev.EntityType == state.EntityWaveRun && ev.Action == "started" {
			waves[ev.Wave]++
		}
	}
	if waves[0] != 1 || waves[1] != 1 {
		t.Fatalf("wave runs started %v; want wave 0 once (before) and wave 1 once", waves)
	}
	if backups, _ := filepath.Glob(r.layout().LedgerPath() + ".corrupt-*"); len(backups) != 1 {
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
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1\x1b]0;owned\x07")}, closureAgents()...)...)
	res := launch(t, r)
	if res.code != 1 || !strings.Contains(res.stderr, "docs/plans/waves/wave-0.md:5: agent A1\\x1b]0;owned\\x07: agent-id-control-character") {
		t.Fatalf("exit %d stderr %q", res.code, res.stderr)
	}
	if hasRawControl(res.stderr) || hasRawControl(res.stdout) {
		t.Fatalf("raw control characters printed: %q %q", res.stdout, res.stderr)
	}
	if _, err := os.Stat(r.layout().RunsDir(0)); !os.IsNotExist(err) {
		t.Fatal("runs were created before the refusal")
	}
}

// Untrusted text that reaches launch output, status and coord list (here
// a blocker's summary) is printed escaped.
func TestUntrustedTextIsPrintedEscaped(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	hostile := "stop\x1b[2J\x1b]0;owned\x07\u009b1m"
	if res := r.run(ctxFor(t), "coord", "post", "--lane", "main", "--wave", "0", "--agent", "A1", "--kind", "blocker", "--summary", hostile); res.code != 0 {
		t.Fatalf("post: %d %s", res.code, res.stderr)
	}
	want := `stop\x1b[2J\x1b]0;owned\x07\u009b1m`
	res := launch(t, r)
	if res.code != 43 || !strings.Contains(res.stdout, want) || hasRawControl(res.stdout) || hasRawControl(res.stderr) {
		t.Fatalf("launch exit %d\nstdout %q\nstderr %q", res.code, res.stdout, res.stderr)
	}
	for _, args := range [][]string{{"coord", "list", "--lane", "main", "--wave", "0"}, {"status", "--lane", "main"}, {"dashboard", "--lane", "main"}} {
		out := r.run(ctxFor(t), args...)
		if out.code != 0 || hasRawControl(out.stdout) || hasRawControl(out.stderr) {
			t.Fatalf("%v: exit %d\nstdout %q\nstderr %q", args, out.code, out.stdout, out.stderr)
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
	r := newRepo(t)
	fake := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(fake, []byte(fakeClaudeJSON), 0o755); err != nil {
		t.Fatal(err)
	}
	// env.IS_SANDBOX: as root, preflight refuses claude's default
	// bypassPermissions unless the agent's environment says sandbox.
	a1 := implAgent("A1", "id: claude", "claude.command: "+fake, "claude.output_format: json", "env.IS_SANDBOX: 1")
	r.writeWave(0, append([]agentSpec{a1}, closureAgents()...)...)
	res := launch(t, r, "--max-retries-per-wave", "0")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

// `--repo-root R launch` run from another directory: the agent's PWD is
// its working directory R, not the launcher's (opencode resolves --file
// against $PWD). printenv, not a shell: a shell repairs a stale PWD.
func TestAgentPWDIsItsWorkingDirectory(t *testing.T) {
	r := newRepo(t)
	probe := agentSpec{id: "A1", title: "PWD probe", owns: []string{"src/pwd.txt"}, knobs: []string{"id: shell", "shell.command: printenv PWD"}}
	r.writeWave(0, append([]agentSpec{probe}, closureAgents()...)...)
	cmd := r.command(ctxFor(t), "launch", "--lane", "main", "--no-dashboard", "--max-retries-per-wave", "0")
	cmd.Dir = t.TempDir()
	cmd.Env = append(cmd.Env, "PWD="+cmd.Dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("launch: %v\n%s", err, out)
	}
	log, err := os.ReadFile(filepath.Join(r.layout().RunDir(0, "A1", 1), "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := strings.Cut(string(log), "\n"); strings.TrimSpace(got) != r.root {
		t.Fatalf("agent PWD %q, want %q", got, r.root)
	}
}

// executors.env.scrub: [] keeps ANTHROPIC_BASE_URL; executors.shell.env
// and the agent's env.NAME entries reach the agent, agent over vendor; a
// secret-looking value is redacted in launch.json yet reaches the agent.
func TestExecutorEnvAndEmptyScrubReachTheAgent(t *testing.T) {
	r := newRepo(t)
	r.write("wave.config.yaml", strings.Replace(testConfig, "executors:\n  default: local\n",
		"executors:\n  default: local\n  env:\n    scrub: []\n  shell:\n    env:\n      PROBE_BASE: vendor\n      PROBE_BOTH: vendor\n", 1))
	probe := agentSpec{id: "A1", title: "env probe", owns: []string{"src/env.txt"}, knobs: []string{"id: shell",
		"shell.command: printenv PROBE_BASE PROBE_BOTH PROBE_API_KEY ANTHROPIC_BASE_URL", "env.PROBE_BOTH: agent", "env.PROBE_API_KEY: s3cret-value"}}
	r.writeWave(0, append([]agentSpec{probe}, closureAgents()...)...)
	cmd := r.command(ctxFor(t), "launch", "--lane", "main", "--no-dashboard", "--max-retries-per-wave", "0")
	cmd.Env = append(cmd.Env, "ANTHROPIC_BASE_URL=http://127.0.0.1:9")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("launch: %v\n%s", err, out)
	}
	dir := r.layout().RunDir(0, "A1", 1)
	log, err := os.ReadFile(filepath.Join(dir, "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	got := lines(strings.ReplaceAll(string(log), "\r", ""))
	want := []string{"vendor", "agent", "s3cret-value", "http://127.0.0.1:9"}
	if len(got) < 4 || !slices.Equal(got[:4], want) {
		t.Fatalf("agent saw %q, want %q", got, want)
	}
	var payload struct {
		Env map[string]string `json:"env"`
	}
	readJSONFile(t, filepath.Join(dir, "launch.json"), &payload)
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
	for _, kind := range []string{"human-escalation", "clarification-request"} {
		t.Run(kind, func(t *testing.T) {
			r := newRepo(t)
			r.writeWave(0, append([]agentSpec{implAgent("A1", "local.fail-attempts: 9")}, closureAgents()...)...)
			post := r.run(ctxFor(t), "coord", "post", "--lane", "main", "--wave", "0", "--agent", "A0", "--kind", kind,
				"--target", "agent:A1", "--summary", "which schema does A1 implement?")
			if post.code != 0 {
				t.Fatalf("post: %d %s", post.code, post.stderr)
			}
			res := launch(t, r, "--max-retries-per-wave", "2")
			if res.code != 43 || !strings.Contains(res.stdout, "coordination-blocker-open") || !strings.Contains(res.stdout, "A1 is not retried") {
				t.Fatalf("exit %d, want 43 naming the record\n%s\n%s", res.code, res.stdout, res.stderr)
			}
			if launched, _ := agentStarts(r.events()); launched["A1"] != 1 {
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
	r := newRepo(t)
	fake := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(fake, []byte(fakeClaudeText), 0o755); err != nil {
		t.Fatal(err)
	}
	r.write("wave.config.yaml", strings.Replace(testConfig, "executors:\n  default: local\n",
		"executors:\n  default: local\n  claude:\n    command: "+fake+"\nruntimePolicy:\n  runtimeMixTargets:\n    local: 3\n", 1))
	a1 := implAgent("A1", "id: shell", "shell.command: false {agent}", "fallbacks: local, claude", "retry-policy: fallback-allowed")
	r.writeWave(0, append([]agentSpec{a1}, closureAgents()...)...)
	res := launch(t, r)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	var execs []string
	blocked := false
	for _, ev := range r.events() {
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
	if !strings.Contains(res.stdout, "A1 fallback to local blocked (retry-fallback-blocked)") {
		t.Fatalf("no blocked-fallback line in the launcher output:\n%s", res.stdout)
	}
}
