package drive

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

const ctxTimeout = 2 * time.Minute

// runAt runs the binary in dir without --repo-root.
func runAt(t *testing.T, dir string, env []string, args ...string) e2etest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ctxTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e2etest.Bin(), args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "TMUX_TMPDIR="+e2etest.TmuxDir(), "WAVE_REPO_ROOT="), env...)
	return e2etest.RunCmd(t, cmd)
}

func TestRepoRootFoundFromSubdirectory(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	nested := filepath.Join(r.Root, "docs", "plans", "waves")
	res := runAt(t, nested, nil, "doctor")
	if !strings.Contains(res.Stdout, "config: "+filepath.Join(r.Root, "wave.config.yaml")) {
		t.Fatalf("doctor from %s did not find the repo's config:\n%s%s", nested, res.Stdout, res.Stderr)
	}
	// A dry run from the subdirectory writes under the root's state dir.
	if res := runAt(t, nested, nil, "launch", "--dry-run"); res.Code != 0 {
		t.Fatalf("dry run from a subdirectory: exit %d\n%s", res.Code, res.Stderr)
	}
	if _, err := os.Stat(filepath.Join(r.Root, ".wave", "lanes", "main", "dry-run")); err != nil {
		t.Fatalf("dry run did not use the repo root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(nested, ".wave")); err == nil {
		t.Fatal("dry run wrote state under the subdirectory")
	}

	// --repo-root and WAVE_REPO_ROOT still win over discovery.
	other := t.TempDir()
	res = runAt(t, nested, []string{"WAVE_REPO_ROOT=" + other}, "doctor")
	if !strings.Contains(res.Stdout, "config: (defaults") {
		t.Fatalf("WAVE_REPO_ROOT did not win:\n%s", res.Stdout)
	}
	res = runAt(t, nested, nil, "--repo-root", other, "doctor")
	if !strings.Contains(res.Stdout, "config: (defaults") {
		t.Fatalf("--repo-root did not win:\n%s", res.Stdout)
	}
}

func TestRepoRootIsGitTopLevelWithoutConfig(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	gittest.Init(t, top)
	sub := filepath.Join(top, "pkg", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// A config above the work tree belongs to another project: never used.
	if err := os.WriteFile(filepath.Join(filepath.Dir(top), "wave.config.yaml"), []byte("bogus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := runAt(t, sub, nil, "init"); res.Code != 0 {
		t.Fatalf("init from a subdirectory: exit %d\n%s", res.Code, res.Stderr)
	}
	if _, err := os.Stat(filepath.Join(top, "wave.config.yaml")); err != nil {
		t.Fatalf("init did not write at the git top level: %v", err)
	}
	if _, err := os.Stat(filepath.Join(sub, "wave.config.yaml")); err == nil {
		t.Fatal("init wrote into the subdirectory")
	}
}

func TestLaunchUnknownLaneSaysHowLanesAreDeclared(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, e2etest.ImplAgent("A1"))
	res := r.Run(e2etest.Context(t), "launch", "--lane", "nope", "--no-dashboard")
	if res.Code != 2 {
		t.Fatalf("launch --lane nope: exit %d, want 2\n%s", res.Code, res.Stderr)
	}
	want := "wave-orchestrator: unknown lane \"nope\" (known lanes: main); declare it under `lanes: {nope: {}}` in wave.config.yaml, or create its waves directory docs/nope/plans/waves\n"
	if res.Stderr != want {
		t.Fatalf("stderr:\n%q\nwant:\n%q", res.Stderr, want)
	}
	// A declared lane without its directory is a plain error naming it.
	r.Write("wave.config.yaml", e2etest.Config+"lanes:\n  side: {}\n")
	res = r.Run(e2etest.Context(t), "launch", "--lane", "side", "--no-dashboard")
	if res.Code != 1 || !strings.Contains(res.Stderr, "lane side: waves directory docs/side/plans/waves does not exist") {
		t.Fatalf("declared lane without waves: exit %d\n%s", res.Code, res.Stderr)
	}
}

func TestMissingWaveIsUsageErrorBeforeAnythingStarts(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"launch", "--start-wave", "7", "--no-dashboard"}, "lane main: no wave numbered 7 or later; the lane's waves are 0"},
		{[]string{"launch", "--start-wave", "3", "--end-wave", "5"}, "lane main: no wave in range 3..5; the lane's waves are 0"},
		// Without --no-dashboard: the dashboard line must not come first.
		{[]string{"resume", "--wave", "9"}, "lane main: no wave 9; the lane's waves are 0"},
	} {
		res := r.Run(e2etest.Context(t), tc.args...)
		if res.Code != 2 || res.Stderr != "wave-orchestrator: "+tc.want+"\n" {
			t.Errorf("%v: exit %d, want 2\nstderr %q\nwant %q", tc.args, res.Code, res.Stderr, tc.want)
		}
		if res.Stdout != "" {
			t.Errorf("%v printed before validating:\n%s", tc.args, res.Stdout)
		}
	}
	e2etest.NothingStarted(t, r)
	if _, err := os.Stat(r.Layout().LockPath()); err == nil {
		t.Error("the lane lock was taken for an invalid request")
	}
}

func TestDoctorCountsEachFindingOnceOnItsLine(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, e2etest.ImplAgent("A1"))
	r.Write("wave.config.yaml", strings.Replace(e2etest.Config, "heartbeatIntervalMs: 200", "heartbeatIntervalMs: fast", 1)+"bogus: 1\nprojectNam: x\n")
	res := r.Run(e2etest.Context(t), "doctor")
	if res.Code != 1 {
		t.Fatalf("doctor: exit %d, want 1\n%s", res.Code, res.Stdout)
	}
	var errs []string
	for _, l := range e2etest.Lines(res.Stdout) {
		if strings.HasPrefix(l, "error ") {
			errs = append(errs, l)
		} else if !strings.HasPrefix(l, "ok ") && !strings.HasPrefix(l, "warn ") {
			t.Errorf("doctor line without a level (a finding spilled over lines): %q", l)
		}
	}
	if len(errs) != 3 {
		t.Fatalf("doctor printed %d error lines, want 3:\n%s", len(errs), res.Stdout)
	}
	for i, key := range []string{"runtime.heartbeatIntervalMs", "bogus", "projectNam"} {
		found := false
		for _, e := range errs {
			found = found || strings.Contains(e, key)
		}
		if !found {
			t.Errorf("error %d: no line names %s:\n%s", i, key, res.Stdout)
		}
	}
	if !strings.Contains(res.Stderr, "doctor: 3 error(s)") {
		t.Errorf("doctor's count: %s", res.Stderr)
	}
}

func TestUnknownWaveVariableWarnsWithSuggestion(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, e2etest.ImplAgent("A1"))
	res := r.RunWith(e2etest.Context(t), []string{"WAVE_RUNTIME_HEARTBEAT_INTERVL_MS=500", "WAVE_LANE=main"}, "status", "--lane", "main")
	if res.Code != 0 {
		t.Fatalf("status: exit %d\n%s", res.Code, res.Stderr)
	}
	want := "wave-orchestrator: warning: environment variable WAVE_RUNTIME_HEARTBEAT_INTERVL_MS is not a wave-orchestrator setting and is ignored; did you mean WAVE_RUNTIME_HEARTBEAT_INTERVAL_MS?\n"
	if res.Stderr != want {
		t.Fatalf("stderr:\n%q\nwant:\n%q", res.Stderr, want)
	}
}

func TestLaunchPrintsHowToWatchEachAgent(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r)
	if res.Code != 0 {
		t.Fatalf("launch: exit %d\n%s", res.Code, res.Stderr)
	}
	sock := r.Layout().Socket()
	for _, id := range []string{"A1", "A2", "A8", "A9", "A0"} {
		if want := "watch: tmux -L " + sock + " attach -t w0-" + id; !strings.Contains(res.Stdout, want) {
			t.Errorf("launch --no-dashboard does not say %q:\n%s", want, res.Stdout)
		}
	}
	if !strings.Contains(res.Stdout, "--repo-root "+r.Root+" --lane main attach --agent <AGENT>") {
		t.Errorf("launch does not say how to attach with wave-orchestrator:\n%s", res.Stdout)
	}
}

// complete runs cobra's hidden __complete and returns the offered values
// (descriptions cut) and the directive line.
func complete(t *testing.T, r *e2etest.Repo, args ...string) ([]string, string) {
	t.Helper()
	res := r.Run(e2etest.Context(t), append([]string{"__complete"}, args...)...)
	if res.Code != 0 {
		t.Fatalf("__complete %v: exit %d\n%s", args, res.Code, res.Stderr)
	}
	var vals []string
	directive := ""
	for _, l := range e2etest.Lines(res.Stdout) {
		if strings.HasPrefix(l, ":") {
			directive = l
			continue
		}
		v, _, _ := strings.Cut(l, "\t")
		vals = append(vals, v)
	}
	return vals, directive
}

func TestCompletionsComeFromTheRepo(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.Write("wave.config.yaml", e2etest.Config+"lanes:\n  side: {}\n")
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	r.WriteWave(3, append([]e2etest.Agent{e2etest.ImplAgent("B7")}, e2etest.ClosureAgents()...)...)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--lane", ""}, "main side"},
		{[]string{"status", "-w", ""}, "0 3"},
		{[]string{"launch", "--start-wave", ""}, "0 3"},
		{[]string{"attach", "--agent", ""}, "A1 A2 A8 A9 A0 B7"},
		{[]string{"attach", "-w", "3", "--agent", ""}, "B7 A8 A9 A0"},
		{[]string{"stop", "-a", ""}, "A1 A2 A8 A9 A0 B7"},
		{[]string{"resume", "--phase", ""}, "design implementation cont-eval security-review integrating docs-closure cont-qa-closure"},
		{[]string{"launch", "--executor", ""}, "codex claude opencode local shell"},
	} {
		vals, dir := complete(t, r, tc.args...)
		if strings.Join(vals, " ") != tc.want || dir != ":4" {
			t.Errorf("__complete %v = %v %s, want %s :4 (no file completion)", tc.args, vals, dir, tc.want)
		}
	}
	// A lane that has run is offered even when it is not declared.
	r.Write("docs/adhoc/plans/waves/wave-0.md", "")
	if err := os.MkdirAll(filepath.Join(r.Root, ".wave", "lanes", "adhoc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if vals, _ := complete(t, r, "status", "--lane", ""); strings.Join(vals, " ") != "adhoc main side" {
		t.Errorf("lanes %v, want adhoc main side", vals)
	}
}
