package wavemode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

func TestLaunchWithoutTmuxFailsBeforeStarting(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	noTmux := "PATH=" + e2etest.PathOf(t, []string{"git"}, nil)
	for _, args := range [][]string{
		{"launch", "--lane", "main", "--no-dashboard"},
		{"launch", "--lane", "main"},
		{"resume", "--lane", "main", "--wave", "0", "--phase", "integrating"},
	} {
		res := r.RunWith(e2etest.Context(t), []string{noTmux}, args...)
		if res.Code != 1 {
			t.Fatalf("%v without tmux: exit %d, want 1\n%s%s", args, res.Code, res.Stdout, res.Stderr)
		}
		want := "wave-orchestrator: cannot " + args[0] + " lane main, nothing was started:\n  - tmux: not found on PATH; install tmux >= 3.2"
		if !strings.HasPrefix(res.Stderr, want) || strings.Count(res.Stderr, "\n") != 2 {
			t.Errorf("%v: stderr is not the one problem on its line:\n%s", args, res.Stderr)
		}
		if strings.Contains(res.Stdout, "dashboard:") {
			t.Errorf("%v: printed a dashboard line before failing:\n%s", args, res.Stdout)
		}
		e2etest.NothingStarted(t, r)
	}
}

// A missing executor fails the launch before anything starts, naming the
// agents and the fix that moves them: --executor only for agents that
// name no executor of their own, their wave file for those that do.
func TestLaunchWithMissingExecutorsExits43NamingAgentsAndTheFix(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.Write("wave.config.yaml", strings.Replace(e2etest.Config, "default: local", "default: codex", 1))
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "id: claude"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	// A2 names no executor: the lane's default (codex) is its.
	file := filepath.Join(r.Root, "docs", "plans", "waves", "wave-0.md")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	head, a2, _ := strings.Cut(string(b), "## Agent A2")
	r.Write("docs/plans/waves/wave-0.md", head+"## Agent A2"+strings.Replace(a2, "- id: local\n", "", 1))
	path := "PATH=" + e2etest.PathOf(t, []string{"git", "tmux"}, nil)
	res := r.RunWith(e2etest.Context(t), []string{path}, "launch", "--lane", "main", "--no-dashboard")
	if res.Code != 43 {
		t.Fatalf("launch without claude and codex: exit %d, want 43\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	named := "  - executor claude: not on PATH (needed by wave 0 A1); install it, put it on PATH, or change the `- id:` under those agents' `### Executor` in their wave file (--executor changes only agents that name no executor)"
	want := []string{
		"wave-orchestrator: cannot launch lane main, nothing was started:",
		named,
		"  - executor codex: not on PATH (needed by wave 0 A2); install it, put it on PATH, or run those agents on another executor with --executor ID (or executors.default in wave.config.yaml)",
	}
	if got := e2etest.Lines(res.Stderr); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stderr:\n%s\nwant:\n%s", res.Stderr, strings.Join(want, "\n"))
	}
	e2etest.NothingStarted(t, r)
	// --executor moves A2, as its fix says, and not A1, as A1's says.
	res = r.RunWith(e2etest.Context(t), []string{path}, "launch", "--lane", "main", "--no-dashboard", "--executor", "local")
	want = []string{"wave-orchestrator: cannot launch lane main, nothing was started:", named}
	if got := e2etest.Lines(res.Stderr); res.Code != 43 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("launch --executor local: exit %d, want 43 and A1 alone\n%s", res.Code, res.Stderr)
	}
	e2etest.NothingStarted(t, r)
}

func TestClaudeAsRootWithoutSandboxIsCaughtByPreflightAndDoctor(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root: claude refuses bypassPermissions only as root")
	}
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "id: claude"), e2etest.ImplAgent("A2", "id: claude")}, e2etest.ClosureAgents()...)...)
	path := "PATH=" + e2etest.PathOf(t, []string{"git", "tmux"}, map[string]string{"claude": e2etest.FakeClaude})
	res := r.RunWith(e2etest.Context(t), []string{path, "IS_SANDBOX="}, "launch", "--lane", "main", "--no-dashboard")
	if res.Code != 43 {
		t.Fatalf("launch as root without IS_SANDBOX: exit %d, want 43\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stderr, "executor claude: runs as root with permission mode bypassPermissions, which claude refuses unless IS_SANDBOX=1 (needed by wave 0 A1, wave 0 A2); run as a non-root user, or set IS_SANDBOX=1") {
		t.Fatalf("stderr does not explain the root problem:\n%s", res.Stderr)
	}
	e2etest.NothingStarted(t, r)

	doc := r.RunWith(e2etest.Context(t), []string{path, "IS_SANDBOX="}, "doctor")
	if doc.Code != 1 || !strings.Contains(doc.Stdout, "error executor claude: runs as root") {
		t.Fatalf("doctor: exit %d, want 1 reporting the root problem\n%s", doc.Code, doc.Stdout)
	}

	// With IS_SANDBOX=1 the launch gets past preflight and starts claude.
	res = r.RunWith(e2etest.Context(t), []string{path, "IS_SANDBOX=1"}, "launch", "--lane", "main", "--no-dashboard", "--max-retries-per-wave", "0")
	if res.Code == 43 || strings.Contains(res.Stderr, "nothing was started") {
		t.Fatalf("launch with IS_SANDBOX=1 stopped in preflight: exit %d\n%s", res.Code, res.Stderr)
	}
	if launched, _ := e2etest.AgentStarts(r.Events()); launched["A1"] != 1 {
		t.Fatalf("A1 launched %d times, want 1", launched["A1"])
	}
	doc = r.RunWith(e2etest.Context(t), []string{path, "IS_SANDBOX=1"}, "doctor")
	if strings.Contains(doc.Stdout, "runs as root") {
		t.Fatalf("doctor still reports the root problem with IS_SANDBOX=1:\n%s", doc.Stdout)
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
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	path := "PATH=" + e2etest.PathOf(t, []string{"git"}, map[string]string{"tmux": failingTmux})
	res := r.RunWith(e2etest.Context(t), []string{path}, "launch", "--lane", "main", "--no-dashboard")
	if res.Code != 1 {
		t.Fatalf("launch with a broken tmux: exit %d, want 1\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if n := strings.Count(res.Stderr, "did not start"); n != 1 || !strings.Contains(res.Stderr, "Permission denied") {
		t.Errorf("stderr should give the reason once (%d times):\n%s", n, res.Stderr)
	}
	if len(res.Stderr) > 300 {
		t.Errorf("stderr is %d characters, want a short line:\n%s", len(res.Stderr), res.Stderr)
	}
	for _, id := range []string{"A1", "A2"} {
		if d := r.Disposition(id, 1); d != "failed" {
			t.Errorf("%s runtime.json disposition %q, want failed", id, d)
		}
	}
	l := r.Status(t)
	w := l.FindWave(0)
	if w.Status != state.WaveFailed {
		t.Fatalf("wave status %q, want failed", w.Status)
	}
	for _, id := range []string{"A1", "A2"} {
		if a := e2etest.AgentOf(t, l, 0, id); a.State != state.AgentFailed || !strings.Contains(a.Detail, "Permission denied") {
			t.Errorf("%s in status: state %q detail %q, want failed with the reason", id, a.State, a.Detail)
		}
	}
	// Nothing is in flight, so stop has nothing to do and succeeds.
	if res := r.Run(e2etest.Context(t), "stop", "--lane", "main"); res.Code != 0 || !strings.Contains(res.Stdout, "0 run(s) terminated") {
		t.Fatalf("stop after a failed start: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
}

// brokenTmux fails every call with an error tmux gives no class to.
const brokenTmux = "#!/bin/sh\necho 'protocol version mismatch (client 8, server 7)' >&2\nexit 1\n"

func TestStopExitsNonZeroSayingWhatFailed(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, e2etest.ImplAgent("A1"))
	path := "PATH=" + e2etest.PathOf(t, []string{"git"}, map[string]string{"tmux": brokenTmux})
	res := r.RunWith(e2etest.Context(t), []string{path}, "stop", "--lane", "main")
	if res.Code != 1 {
		t.Fatalf("stop with a broken tmux: exit %d, want 1\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stderr, "stop lane main: 1 thing(s) failed:\n  - list sessions on tmux socket "+r.Layout().Socket()) ||
		!strings.Contains(res.Stderr, "protocol version mismatch") {
		t.Fatalf("stderr does not say what failed:\n%s", res.Stderr)
	}
}

func TestStatusAfterStopWithoutLauncherShowsNoLauncher(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, e2etest.ImplAgent("A1"))
	if res := r.Run(e2etest.Context(t), "stop", "--lane", "main"); res.Code != 0 {
		t.Fatalf("stop: exit %d\n%s", res.Code, res.Stderr)
	}
	if l := r.Status(t); l.Launcher != nil {
		t.Fatalf("status after stop shows launcher %+v, want none (stop is no launcher)", l.Launcher)
	}
	res := r.Run(e2etest.Context(t), "status", "--lane", "main")
	if !strings.Contains(res.Stdout, "no launcher") {
		t.Fatalf("status text after stop:\n%s", res.Stdout)
	}
	if _, err := lanes.ReadLockInfo(r.Layout().LockPath()); err == nil {
		t.Fatal("stop recorded itself as the lock holder")
	}
}

func TestExecutorNotFoundDuringRunIsNoUsableExecutor(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	// sh is on PATH (preflight passes); the tool it runs is not: the
	// agent exits 127, as any wrapper around a missing CLI does.
	missing := e2etest.ImplAgent("A1", "id: shell", "shell.command: sh -c no-such-agent-cli-xyz")
	r.WriteWave(0, append([]e2etest.Agent{missing, e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r)
	if res.Code != 43 {
		t.Fatalf("launch with an agent CLI missing: exit %d, want 43\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stdout, "A1: executor-unavailable, executor shell could not be started (exit 127): ") ||
		!strings.Contains(res.Stdout, "no-such-agent-cli-xyz: not found") {
		t.Fatalf("report lacks the real reason:\n%s", res.Stdout)
	}
	if launched, _ := e2etest.AgentStarts(r.Events()); launched["A1"] != 1 {
		t.Fatalf("A1 launched %d times: the same missing executor was retried", launched["A1"])
	}

	// With a fallback the retry moves to it and the wave passes.
	r2 := e2etest.NewRepo(t)
	withFallback := e2etest.ImplAgent("A1", "id: shell", "shell.command: sh -c no-such-agent-cli-xyz", "fallbacks: local")
	r2.WriteWave(0, append([]e2etest.Agent{withFallback, e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r2); res.Code != 0 {
		t.Fatalf("launch with a fallback: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
}
