package wavemode

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// closureEvents returns "phase:action" for every closure event in order.
func closureEvents(evs []state.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.EntityType == state.EntityClosure {
			p, _ := ev.Data["phase"].(string)
			out = append(out, p+":"+ev.Action)
		}
	}
	return out
}

func TestLaunchAllPass(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1"), e2etest.ImplAgent("A2"), e2etest.ImplAgent("A3")}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r)
	if res.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	evs := r.Events()
	order := e2etest.StartOrder(evs)
	// Implementation agents start before any closure agent, and closure
	// runs A8 → A9 → A0, each started only after the previous finished.
	if len(order) != 6 {
		t.Fatalf("started %v, want 6 runs", order)
	}
	impl := order[:3]
	slices.Sort(impl)
	if !slices.Equal(impl, []string{"A1", "A2", "A3"}) || !slices.Equal(order[3:], []string{"A8", "A9", "A0"}) {
		t.Fatalf("start order %v", order)
	}
	if got := closureEvents(evs); !slices.Equal(got, []string{
		"cont-eval:skipped", "security-review:skipped",
		"integrating:running", "integrating:passed",
		"docs-closure:running", "docs-closure:passed",
		"cont-qa-closure:running", "cont-qa-closure:passed",
	}) {
		t.Fatalf("closure events %v", got)
	}
	// One stage at a time: each closure agent's run finished before the next started.
	finished := map[string]int{}
	for i, ev := range evs {
		if ev.EntityType == state.EntityAgentRun && ev.Action == state.AgentCompleted {
			id, _ := ev.Data["agentId"].(string)
			finished[id] = i
		}
	}
	started := map[string]int{}
	for i, ev := range evs {
		if ev.EntityType == state.EntityAgentRun && ev.Action == "started" {
			id, _ := ev.Data["agentId"].(string)
			started[id] = i
		}
	}
	if !(finished["A8"] < started["A9"] && finished["A9"] < started["A0"]) {
		t.Fatalf("closure overlapped: finished %v started %v", finished, started)
	}
	for _, f := range []string{"src/a1.txt", "src/a2.txt", "src/a3.txt", "docs/plans/waves/reviews/wave-0-cont-qa.md"} {
		if _, err := os.Stat(filepath.Join(r.Root, f)); err != nil {
			t.Errorf("deliverable %s: %v", f, err)
		}
	}
	var st state.Wave
	e2etest.ReadJSONFile(t, r.Layout().StatePath(0), &st)
	if st.Status != state.WaveCompleted {
		t.Fatalf("state.json status %q", st.Status)
	}
}

func TestLaunchRetriesOnlyTheFailedAgent(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.fail-attempts: 1"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r)
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	launched, _ := e2etest.AgentStarts(r.Events())
	if launched["A1"] != 2 || launched["A2"] != 1 {
		t.Fatalf("launches %v: want A1 twice, A2 once", launched)
	}
	if _, err := os.Stat(filepath.Join(r.Layout().RunDir(0, "A1", 2), "status.json")); err != nil {
		t.Fatalf("second attempt has its own run dir: %v", err)
	}
}

func TestLaunchFailsAfterRetriesWithReport(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.fail-attempts: 9"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r)
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var line string
	for _, l := range e2etest.Lines(res.Stdout) {
		if strings.Contains(l, "- A1:") {
			line = l
		}
	}
	if line == "" || !strings.Contains(line, "agent.log") || !strings.Contains(line, "1") {
		t.Fatalf("failure report does not name A1, its status code and log:\n%s", res.Stdout)
	}
	launched, _ := e2etest.AgentStarts(r.Events())
	if launched["A1"] != 2 || launched["A0"] != 0 {
		t.Fatalf("launches %v", launched)
	}
}

func TestLaunchContQaFailExits42(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	cl := e2etest.ClosureAgents()
	cl[2].Knobs = []string{"local.verdict: FAIL"}
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, cl...)...)
	res := e2etest.Launch(t, r, "--max-retries-per-wave", "0")
	if res.Code != 42 {
		t.Fatalf("exit %d, want 42\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
}

func TestLaunchExitCodeHonoured(t *testing.T) { e2etest.ExitCodeHonoured(t, e2etest.NewRepo(t)) }

func TestSecurityBlockedThenResumeFromSecurityReview(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	agents := append([]e2etest.Agent{e2etest.ImplAgent("A1"), e2etest.ImplAgent("A2"), e2etest.SecurityAgent("local.security: blocked")}, e2etest.ClosureAgents()...)
	r.WriteWave(0, agents...)
	res := e2etest.Launch(t, r, "--max-retries-per-wave", "0")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	launched, _ := e2etest.AgentStarts(r.Events())
	for _, id := range []string{"A8", "A9", "A0"} {
		if launched[id] != 0 {
			t.Fatalf("%s ran after security blocked: %v", id, launched)
		}
	}
	if launched["S1"] != 1 {
		t.Fatalf("security reviewer runs %v", launched)
	}
	// The reviewer is fixed; resume from security-review re-runs it and
	// every later stage, in order, and reuses A1/A2.
	agents[2] = e2etest.SecurityAgent()
	r.WriteWave(0, agents...)
	before := len(r.Events())
	res = r.Run(e2etest.Context(t), "resume", "--lane", "main", "--wave", "0", "--phase", "security-review", "--no-dashboard")
	if res.Code != 0 {
		t.Fatalf("resume exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	evs := r.Events()[before:]
	if got := e2etest.StartOrder(evs); !slices.Equal(got, []string{"S1", "A8", "A9", "A0"}) {
		t.Fatalf("resume ran %v, want S1 A8 A9 A0", got)
	}
}

func TestRerunReusesUnchangedAgents(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	a1, a2 := e2etest.ImplAgent("A1"), e2etest.ImplAgent("A2")
	r.WriteWave(0, append([]e2etest.Agent{a1, a2}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("first run exit %d\n%s", res.Code, res.Stderr)
	}
	a2.Prompt = "Do the work of Part A2, now with a changed prompt."
	r.WriteWave(0, append([]e2etest.Agent{a1, a2}, e2etest.ClosureAgents()...)...)
	before := len(r.Events())
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("rerun exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	evs := r.Events()[before:]
	launched, _ := e2etest.AgentStarts(evs)
	reused := 0
	for _, ev := range evs {
		if ev.EntityType == state.EntityAgentRun && ev.Action == state.AgentReused {
			if id, _ := ev.Data["agentId"].(string); id == "A1" {
				reused++
			}
		}
	}
	if reused != 1 || launched["A1"] != 0 || launched["A2"] != 1 || launched["A0"] != 1 {
		t.Fatalf("reused A1 %d times, launches %v", reused, launched)
	}
}

func TestSecondLauncherExits32(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 30s")}, e2etest.ClosureAgents()...)...)
	ctx := e2etest.Context(t)
	first := r.Command(ctx, "launch", "--lane", "main", "--no-dashboard")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		first.Process.Kill()
		first.Wait()
		res := r.Run(context.Background(), "stop", "--lane", "main")
		t.Logf("stop: %d %s %s", res.Code, res.Stdout, res.Stderr)
		e2etest.WaitTerminal(t, filepath.Join(r.Layout().RunDir(0, "A1", 1), "runtime.json"))
	})
	e2etest.WaitFor(t, "first launcher to start A1", 30*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(r.Layout().RunDir(0, "A1", 1), "runtime.json"))
		return err == nil
	})
	res := r.Run(ctx, "launch", "--lane", "main", "--no-dashboard")
	if res.Code != 32 || !strings.Contains(res.Stderr, "pid") {
		t.Fatalf("second launcher exit %d, stderr %q; want 32 naming the holder's pid", res.Code, res.Stderr)
	}
}

// A launcher that dies — kill -9, or a plain SIGTERM/Ctrl-C — leaves its
// agents running in tmux; the next launch adopts them instead of
// launching them again, and every result is kept.
func TestKilledLauncherRunsAreAdopted(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { testLauncherDeathAdoption(t, sig) })
	}
}

func testLauncherDeathAdoption(t *testing.T, sig syscall.Signal) {
	r := e2etest.NewRepo(t)
	var impl []e2etest.Agent
	for _, id := range []string{"A1", "A2", "A3", "A4", "A5"} {
		impl = append(impl, e2etest.ImplAgent(id, "local.delay: 3s"))
	}
	r.WriteWave(0, append(impl, e2etest.ClosureAgents()...)...)
	ctx := e2etest.Context(t)
	first := r.Command(ctx, "launch", "--lane", "main", "--no-dashboard")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	e2etest.WaitFor(t, "five running agents", 30*time.Second, func() bool {
		n := 0
		for _, id := range []string{"A1", "A2", "A3", "A4", "A5"} {
			var rec struct {
				TerminalDisposition string `json:"terminalDisposition"`
			}
			b, err := os.ReadFile(filepath.Join(r.Layout().RunDir(0, id, 1), "runtime.json"))
			if err == nil && strings.Contains(string(b), `"running"`) {
				_ = rec
				n++
			}
		}
		return n == 5
	})
	_ = first.Process.Signal(sig)
	_ = first.Wait()
	res := e2etest.Launch(t, r)
	if res.Code != 0 {
		t.Fatalf("relaunch exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	launched, adopted := e2etest.AgentStarts(r.Events())
	for _, id := range []string{"A1", "A2", "A3", "A4", "A5"} {
		if launched[id] != 1 || adopted[id] != 1 {
			t.Fatalf("%s launched %d adopted %d; want one launch and one adoption", id, launched[id], adopted[id])
		}
		if _, err := os.Stat(filepath.Join(r.Root, "src", strings.ToLower(id)+".txt")); err != nil {
			t.Fatalf("result of %s lost: %v", id, err)
		}
	}
}

// A failed agent whose policy allows fallback is retried on the next
// executor of its chain: attempt 1 on shell (exits 1), attempt 2 on local.
func TestRetrySwitchesToFallbackExecutor(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	a1 := e2etest.ImplAgent("A1", "id: shell", "shell.command: false {agent}", "fallbacks: local", "retry-policy: fallback-allowed")
	r.WriteWave(0, append([]e2etest.Agent{a1}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r)
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var execs []string
	for _, ev := range r.Events() {
		if ev.EntityType == state.EntityAgentRun && ev.Action == "started" && ev.Data["agentId"] == "A1" {
			e, _ := ev.Data["executorId"].(string)
			execs = append(execs, e)
		}
	}
	if !slices.Equal(execs, []string{"shell", "local"}) {
		t.Fatalf("A1 ran on %v, want shell then local", execs)
	}
	if !strings.Contains(res.Stdout, "falls back from shell to local") {
		t.Fatalf("no fallback line in the launcher output:\n%s", res.Stdout)
	}
}

// A prompt edited while the launcher was dead is not answered by the run
// of the old prompt: the agent reruns, and so does closure.
func TestAdoptionSkipsRunsOfAnOldPrompt(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	a1 := e2etest.ImplAgent("A1", "local.delay: 2s")
	r.WriteWave(0, append([]e2etest.Agent{a1}, e2etest.ClosureAgents()...)...)
	e2etest.KillLauncherWhileRunning(t, r, "A1")
	a1.Prompt = "Part A1, reworded while the launcher was down."
	r.WriteWave(0, append([]e2etest.Agent{a1}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	launched, adopted := e2etest.AgentStarts(r.Events())
	if launched["A1"] != 2 || adopted["A1"] != 0 {
		t.Fatalf("A1 launched %d adopted %d: want a fresh run of the new prompt", launched["A1"], adopted["A1"])
	}
}

// After a launcher died, `status` says the wave is interrupted; `stop`
// then closes the run so the next launch starts afresh instead of
// adopting what was just terminated.
func TestStopAfterLauncherDeath(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 60s")}, e2etest.ClosureAgents()...)...)
	e2etest.KillLauncherWhileRunning(t, r, "A1")
	st := r.Run(e2etest.Context(t), "status", "--lane", "main", "--json")
	var lane state.Lane
	if err := json.Unmarshal([]byte(st.Stdout), &lane); err != nil || len(lane.Waves) != 1 || lane.Waves[0].Status != state.WaveInterrupted {
		t.Fatalf("status after launcher death: %v %s", err, st.Stdout)
	}
	if res := r.Run(e2etest.Context(t), "stop", "--lane", "main"); res.Code != 0 || !strings.Contains(res.Stdout, "1 run(s) terminated") {
		t.Fatalf("stop: %d %s %s", res.Code, res.Stdout, res.Stderr)
	}
	e2etest.WaitTerminal(t, filepath.Join(r.Layout().RunDir(0, "A1", 1), "runtime.json"))
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r, "--max-retries-per-wave", "0"); res.Code != 0 {
		t.Fatalf("launch after stop: %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if _, adopted := e2etest.AgentStarts(r.Events()); adopted["A1"] != 0 {
		t.Fatal("the terminated run was adopted")
	}
}

// Agent ids that map to one tmux session name are refused before anything
// starts (they would kill each other's runs and share run directories).
func TestCollidingAgentIDsAreRefused(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	a, b := e2etest.ImplAgent("A.1"), e2etest.ImplAgent("A_1")
	b.Owns = []string{"src/other.txt"}
	r.WriteWave(0, append([]e2etest.Agent{a, b}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r)
	if res.Code != 1 || !strings.Contains(res.Stderr, `"A.1" and "A_1"`) {
		t.Fatalf("exit %d stderr %q", res.Code, res.Stderr)
	}
	if _, err := os.Stat(r.Layout().RunsDir(0)); !os.IsNotExist(err) {
		t.Fatal("runs were created before the refusal")
	}
}

// `stop` clears sessions a finished launch kept (--keep-sessions).
func TestStopClearsKeptSessions(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r, "--keep-sessions"); res.Code != 0 {
		t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
	}
	sock := r.Layout().Socket()
	if out, err := exec.Command("tmux", "-L", sock, "ls").CombinedOutput(); err != nil || !strings.Contains(string(out), "w0-A0") {
		t.Fatalf("kept sessions: %v %s", err, out)
	}
	if res := r.Run(e2etest.Context(t), "stop", "--lane", "main"); res.Code != 0 {
		t.Fatalf("stop: %d %s", res.Code, res.Stderr)
	}
	if out, err := exec.Command("tmux", "-L", sock, "ls").CombinedOutput(); err == nil && strings.TrimSpace(string(out)) != "" {
		t.Fatalf("sessions left after stop: %s", out)
	}
}
