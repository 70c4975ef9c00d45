package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// runWith runs the binary on the repo with extra environment entries
// (later entries win, so "PATH=..." replaces the PATH).
func (r *testRepo) runWith(ctx context.Context, env []string, args ...string) result {
	r.t.Helper()
	cmd := r.command(ctx, args...)
	cmd.Env = append(cmd.Env, env...)
	return runCmd(r.t, cmd)
}

func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", cmd.Args, err)
	}
	return result{code: code, stdout: so.String(), stderr: se.String()}
}

// pathOf is a PATH of one directory holding links to the named tools
// (and scripts: name → body, written as executables).
func pathOf(t *testing.T, tools []string, scripts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, tool := range tools {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s not on PATH: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// nothingStarted fails the test if the launch left any run or event.
func nothingStarted(t *testing.T, r *testRepo) {
	t.Helper()
	if runs, _ := filepath.Glob(filepath.Join(r.layout().StateDir, "waves", "*", "runs", "*")); len(runs) > 0 {
		t.Errorf("run directories were created: %v", runs)
	}
	if _, err := os.Stat(r.layout().EventsPath()); err == nil {
		t.Errorf("events were recorded although nothing should have started")
	}
}

func TestLaunchWithoutTmuxFailsBeforeStarting(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1"), implAgent("A2")}, closureAgents()...)...)
	noTmux := "PATH=" + pathOf(t, []string{"git"}, nil)
	for _, args := range [][]string{
		{"launch", "--lane", "main", "--no-dashboard"},
		{"launch", "--lane", "main"},
		{"resume", "--lane", "main", "--wave", "0", "--phase", "integrating"},
	} {
		res := r.runWith(ctxFor(t), []string{noTmux}, args...)
		if res.code != 1 {
			t.Fatalf("%v without tmux: exit %d, want 1\n%s%s", args, res.code, res.stdout, res.stderr)
		}
		want := "wave-orchestrator: cannot " + args[0] + " lane main, nothing was started:\n  - tmux: not found on PATH; install tmux >= 3.2"
		if !strings.HasPrefix(res.stderr, want) || strings.Count(res.stderr, "\n") != 2 {
			t.Errorf("%v: stderr is not the one problem on its line:\n%s", args, res.stderr)
		}
		if strings.Contains(res.stdout, "dashboard:") {
			t.Errorf("%v: printed a dashboard line before failing:\n%s", args, res.stdout)
		}
		nothingStarted(t, r)
	}
}

func TestLaunchWithMissingExecutorsExits43NamingAgents(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1", "id: claude"), implAgent("A2", "id: codex")}, closureAgents()...)...)
	path := "PATH=" + pathOf(t, []string{"git", "tmux"}, nil)
	res := r.runWith(ctxFor(t), []string{path}, "launch", "--lane", "main", "--no-dashboard")
	if res.code != 43 {
		t.Fatalf("launch without claude and codex: exit %d, want 43\n%s%s", res.code, res.stdout, res.stderr)
	}
	got := lines(res.stderr)
	want := []string{
		"wave-orchestrator: cannot launch lane main, nothing was started:",
		"  - executor claude: not on PATH (needed by wave 0 A1); install it, put it on PATH, or give those agents another executor (`### Executor` id, or --executor)",
		"  - executor codex: not on PATH (needed by wave 0 A2); install it, put it on PATH, or give those agents another executor (`### Executor` id, or --executor)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stderr:\n%s\nwant:\n%s", res.stderr, strings.Join(want, "\n"))
	}
	nothingStarted(t, r)
	// --executor replaces the missing ones: the same wave then launches.
	res = r.runWith(ctxFor(t), []string{path}, "launch", "--lane", "main", "--no-dashboard", "--executor", "local", "--dry-run")
	if res.code != 0 {
		t.Fatalf("dry run: exit %d\n%s", res.code, res.stderr)
	}
}

// fakeClaude stands in for the claude CLI: it is only ever started to
// see that preflight let it through.
const fakeClaude = "#!/bin/sh\necho fake claude\nexit 0\n"

func TestClaudeAsRootWithoutSandboxIsCaughtByPreflightAndDoctor(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: claude refuses bypassPermissions only as root")
	}
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1", "id: claude"), implAgent("A2", "id: claude")}, closureAgents()...)...)
	path := "PATH=" + pathOf(t, []string{"git", "tmux"}, map[string]string{"claude": fakeClaude})
	res := r.runWith(ctxFor(t), []string{path, "IS_SANDBOX="}, "launch", "--lane", "main", "--no-dashboard")
	if res.code != 43 {
		t.Fatalf("launch as root without IS_SANDBOX: exit %d, want 43\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stderr, "executor claude: runs as root with permission mode bypassPermissions, which claude refuses unless IS_SANDBOX=1 (needed by wave 0 A1, wave 0 A2); run as a non-root user, or set IS_SANDBOX=1") {
		t.Fatalf("stderr does not explain the root problem:\n%s", res.stderr)
	}
	nothingStarted(t, r)

	doc := r.runWith(ctxFor(t), []string{path, "IS_SANDBOX="}, "doctor")
	if doc.code != 1 || !strings.Contains(doc.stdout, "error executor claude: runs as root") {
		t.Fatalf("doctor: exit %d, want 1 reporting the root problem\n%s", doc.code, doc.stdout)
	}

	// With IS_SANDBOX=1 the launch gets past preflight and starts claude.
	res = r.runWith(ctxFor(t), []string{path, "IS_SANDBOX=1"}, "launch", "--lane", "main", "--no-dashboard", "--max-retries-per-wave", "0")
	if res.code == 43 || strings.Contains(res.stderr, "nothing was started") {
		t.Fatalf("launch with IS_SANDBOX=1 stopped in preflight: exit %d\n%s", res.code, res.stderr)
	}
	if launched, _ := agentStarts(r.events()); launched["A1"] != 1 {
		t.Fatalf("A1 launched %d times, want 1", launched["A1"])
	}
	doc = r.runWith(ctxFor(t), []string{path, "IS_SANDBOX=1"}, "doctor")
	if strings.Contains(doc.stdout, "runs as root") {
		t.Fatalf("doctor still reports the root problem with IS_SANDBOX=1:\n%s", doc.stdout)
	}
}

// failingTmux answers `tmux -V` but cannot create sessions, as a tmux
// whose socket directory is unusable does.
const failingTmux = `#!/bin/sh
for a in "$@"; do
  case "$a" in
    -V) echo "tmux 3.4"; exit 0;;
    list-sessions) echo "no server running on /tmp/unusable/default" >&2; exit 1;;
  esac
done
echo "error creating /tmp/unusable/default (Permission denied)" >&2
exit 1
`

func TestStartFailureClosesRunsAndWave(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1"), implAgent("A2")}, closureAgents()...)...)
	path := "PATH=" + pathOf(t, []string{"git"}, map[string]string{"tmux": failingTmux})
	res := r.runWith(ctxFor(t), []string{path}, "launch", "--lane", "main", "--no-dashboard")
	if res.code != 1 {
		t.Fatalf("launch with a broken tmux: exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	if n := strings.Count(res.stderr, "did not start"); n != 1 || !strings.Contains(res.stderr, "Permission denied") {
		t.Errorf("stderr should give the reason once (%d times):\n%s", n, res.stderr)
	}
	if len(res.stderr) > 300 {
		t.Errorf("stderr is %d characters, want a short line:\n%s", len(res.stderr), res.stderr)
	}
	for _, id := range []string{"A1", "A2"} {
		if d := r.disposition(id, 1); d != "failed" {
			t.Errorf("%s runtime.json disposition %q, want failed", id, d)
		}
	}
	l := r.status(t)
	w := l.FindWave(0)
	if w.Status != state.WaveFailed {
		t.Fatalf("wave status %q, want failed", w.Status)
	}
	for _, id := range []string{"A1", "A2"} {
		if a := agentOf(t, l, 0, id); a.State != state.AgentFailed || !strings.Contains(a.Detail, "Permission denied") {
			t.Errorf("%s in status: state %q detail %q, want failed with the reason", id, a.State, a.Detail)
		}
	}
	// Nothing is in flight, so stop has nothing to do and succeeds.
	if res := r.run(ctxFor(t), "stop", "--lane", "main"); res.code != 0 || !strings.Contains(res.stdout, "0 run(s) terminated") {
		t.Fatalf("stop after a failed start: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// brokenTmux fails every call with an error tmux gives no class to.
const brokenTmux = "#!/bin/sh\necho 'protocol version mismatch (client 8, server 7)' >&2\nexit 1\n"

func TestStopExitsNonZeroSayingWhatFailed(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, implAgent("A1"))
	path := "PATH=" + pathOf(t, []string{"git"}, map[string]string{"tmux": brokenTmux})
	res := r.runWith(ctxFor(t), []string{path}, "stop", "--lane", "main")
	if res.code != 1 {
		t.Fatalf("stop with a broken tmux: exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stderr, "stop lane main: 1 thing(s) failed:\n  - list sessions on tmux socket "+r.layout().Socket()) ||
		!strings.Contains(res.stderr, "protocol version mismatch") {
		t.Fatalf("stderr does not say what failed:\n%s", res.stderr)
	}
}

func TestStatusAfterStopWithoutLauncherShowsNoLauncher(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, implAgent("A1"))
	if res := r.run(ctxFor(t), "stop", "--lane", "main"); res.code != 0 {
		t.Fatalf("stop: exit %d\n%s", res.code, res.stderr)
	}
	if l := r.status(t); l.Launcher != nil {
		t.Fatalf("status after stop shows launcher %+v, want none (stop is no launcher)", l.Launcher)
	}
	res := r.run(ctxFor(t), "status", "--lane", "main")
	if !strings.Contains(res.stdout, "no launcher") {
		t.Fatalf("status text after stop:\n%s", res.stdout)
	}
	if _, err := lanes.ReadLockInfo(r.layout().LockPath()); err == nil {
		t.Fatal("stop recorded itself as the lock holder")
	}
}

func TestExecutorNotFoundDuringRunIsNoUsableExecutor(t *testing.T) {
	r := newRepo(t)
	// sh is on PATH (preflight passes); the tool it runs is not: the
	// agent exits 127, as any wrapper around a missing CLI does.
	missing := implAgent("A1", "id: shell", "shell.command: sh -c no-such-agent-cli-xyz")
	r.writeWave(0, append([]agentSpec{missing, implAgent("A2")}, closureAgents()...)...)
	res := launch(t, r)
	if res.code != 43 {
		t.Fatalf("launch with an agent CLI missing: exit %d, want 43\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "A1: executor-unavailable, executor shell could not be started (exit 127): ") ||
		!strings.Contains(res.stdout, "no-such-agent-cli-xyz: not found") {
		t.Fatalf("report lacks the real reason:\n%s", res.stdout)
	}
	if launched, _ := agentStarts(r.events()); launched["A1"] != 1 {
		t.Fatalf("A1 launched %d times: the same missing executor was retried", launched["A1"])
	}

	// With a fallback the retry moves to it and the wave passes.
	r2 := newRepo(t)
	withFallback := implAgent("A1", "id: shell", "shell.command: sh -c no-such-agent-cli-xyz", "fallbacks: local")
	r2.writeWave(0, append([]agentSpec{withFallback, implAgent("A2")}, closureAgents()...)...)
	if res := launch(t, r2); res.code != 0 {
		t.Fatalf("launch with a fallback: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
