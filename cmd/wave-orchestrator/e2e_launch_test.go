package main

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

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func launch(t *testing.T, r *testRepo, extra ...string) result {
	t.Helper()
	args := append([]string{"launch", "--lane", "main", "--no-dashboard"}, extra...)
	return r.run(ctxFor(t), args...)
}

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
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1"), implAgent("A2"), implAgent("A3")}, closureAgents()...)...)
	res := launch(t, r)
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	evs := r.events()
	order := startOrder(evs)
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
		if _, err := os.Stat(filepath.Join(r.root, f)); err != nil {
			t.Errorf("deliverable %s: %v", f, err)
		}
	}
	var st state.Wave
	readJSONFile(t, r.layout().StatePath(0), &st)
	if st.Status != state.WaveCompleted {
		t.Fatalf("state.json status %q", st.Status)
	}
}

func TestLaunchRetriesOnlyTheFailedAgent(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.fail-attempts: 1"), implAgent("A2")}, closureAgents()...)...)
	res := launch(t, r)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	launched, _ := agentStarts(r.events())
	if launched["A1"] != 2 || launched["A2"] != 1 {
		t.Fatalf("launches %v: want A1 twice, A2 once", launched)
	}
	if _, err := os.Stat(filepath.Join(r.layout().RunDir(0, "A1", 2), "status.json")); err != nil {
		t.Fatalf("second attempt has its own run dir: %v", err)
	}
}

func TestLaunchFailsAfterRetriesWithReport(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.fail-attempts: 9"), implAgent("A2")}, closureAgents()...)...)
	res := launch(t, r)
	if res.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	var line string
	for _, l := range lines(res.stdout) {
		if strings.Contains(l, "- A1:") {
			line = l
		}
	}
	if line == "" || !strings.Contains(line, "agent.log") || !strings.Contains(line, "1") {
		t.Fatalf("failure report does not name A1, its status code and log:\n%s", res.stdout)
	}
	launched, _ := agentStarts(r.events())
	if launched["A1"] != 2 || launched["A0"] != 0 {
		t.Fatalf("launches %v", launched)
	}
}

func TestLaunchContQaFailExits42(t *testing.T) {
	r := newRepo(t)
	cl := closureAgents()
	cl[2].knobs = []string{"local.verdict: FAIL"}
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, cl...)...)
	res := launch(t, r, "--max-retries-per-wave", "0")
	if res.code != 42 {
		t.Fatalf("exit %d, want 42\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

func TestLaunchExitCodeHonoured(t *testing.T) { exitCodeHonoured(t, newRepo(t)) }

// exitCodeHonoured runs a wave whose A1 exits 3 on r: the launch fails
// naming the code, and status.json holds the real exit code.
func exitCodeHonoured(t *testing.T, r *testRepo) {
	t.Helper()
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.exit-code: 3")}, closureAgents()...)...)
	res := launch(t, r, "--max-retries-per-wave", "0")
	if res.code != 1 || !strings.Contains(res.stdout, "A1: 3") {
		t.Fatalf("exit %d, want 1 with A1: 3\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	var st struct {
		Code int `json:"code"`
	}
	readJSONFile(t, filepath.Join(r.layout().RunDir(0, "A1", 1), "status.json"), &st)
	if st.Code != 3 {
		t.Fatalf("status.json code %d, want the real exit code 3", st.Code)
	}
}

func TestSecurityBlockedThenResumeFromSecurityReview(t *testing.T) {
	r := newRepo(t)
	agents := append([]agentSpec{implAgent("A1"), implAgent("A2"), securityAgent("local.security: blocked")}, closureAgents()...)
	r.writeWave(0, agents...)
	res := launch(t, r, "--max-retries-per-wave", "0")
	if res.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	launched, _ := agentStarts(r.events())
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
	agents[2] = securityAgent()
	r.writeWave(0, agents...)
	before := len(r.events())
	res = r.run(ctxFor(t), "resume", "--lane", "main", "--wave", "0", "--phase", "security-review", "--no-dashboard")
	if res.code != 0 {
		t.Fatalf("resume exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := r.events()[before:]
	if got := startOrder(evs); !slices.Equal(got, []string{"S1", "A8", "A9", "A0"}) {
		t.Fatalf("resume ran %v, want S1 A8 A9 A0", got)
	}
}

func TestRerunReusesUnchangedAgents(t *testing.T) {
	r := newRepo(t)
	a1, a2 := implAgent("A1"), implAgent("A2")
	r.writeWave(0, append([]agentSpec{a1, a2}, closureAgents()...)...)
	if res := launch(t, r); res.code != 0 {
		t.Fatalf("first run exit %d\n%s", res.code, res.stderr)
	}
	a2.prompt = "Do the work of Part A2, now with a changed prompt."
	r.writeWave(0, append([]agentSpec{a1, a2}, closureAgents()...)...)
	before := len(r.events())
	if res := launch(t, r); res.code != 0 {
		t.Fatalf("rerun exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := r.events()[before:]
	launched, _ := agentStarts(evs)
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
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.delay: 30s")}, closureAgents()...)...)
	ctx := ctxFor(t)
	first := r.command(ctx, "launch", "--lane", "main", "--no-dashboard")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		first.Process.Kill()
		first.Wait()
		res := r.run(context.Background(), "stop", "--lane", "main")
		t.Logf("stop: %d %s %s", res.code, res.stdout, res.stderr)
		waitTerminal(t, filepath.Join(r.layout().RunDir(0, "A1", 1), "runtime.json"))
	})
	waitFor(t, "first launcher to start A1", 30*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(r.layout().RunDir(0, "A1", 1), "runtime.json"))
		return err == nil
	})
	res := r.run(ctx, "launch", "--lane", "main", "--no-dashboard")
	if res.code != 32 || !strings.Contains(res.stderr, "pid") {
		t.Fatalf("second launcher exit %d, stderr %q; want 32 naming the holder's pid", res.code, res.stderr)
	}
}

// A launcher that dies — kill -9, or a plain SIGTERM/Ctrl-C — leaves its
// agents running in tmux; the next launch adopts them instead of
// launching them again, and every result is kept.
func TestKilledLauncherRunsAreAdopted(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { testLauncherDeathAdoption(t, sig) })
	}
}

func testLauncherDeathAdoption(t *testing.T, sig syscall.Signal) {
	r := newRepo(t)
	var impl []agentSpec
	for _, id := range []string{"A1", "A2", "A3", "A4", "A5"} {
		impl = append(impl, implAgent(id, "local.delay: 3s"))
	}
	r.writeWave(0, append(impl, closureAgents()...)...)
	ctx := ctxFor(t)
	first := r.command(ctx, "launch", "--lane", "main", "--no-dashboard")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "five running agents", 30*time.Second, func() bool {
		n := 0
		for _, id := range []string{"A1", "A2", "A3", "A4", "A5"} {
			var rec struct {
				TerminalDisposition string `json:"terminalDisposition"`
			}
			b, err := os.ReadFile(filepath.Join(r.layout().RunDir(0, id, 1), "runtime.json"))
			if err == nil && strings.Contains(string(b), `"running"`) {
				_ = rec
				n++
			}
		}
		return n == 5
	})
	_ = first.Process.Signal(sig)
	_ = first.Wait()
	res := launch(t, r)
	if res.code != 0 {
		t.Fatalf("relaunch exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	launched, adopted := agentStarts(r.events())
	for _, id := range []string{"A1", "A2", "A3", "A4", "A5"} {
		if launched[id] != 1 || adopted[id] != 1 {
			t.Fatalf("%s launched %d adopted %d; want one launch and one adoption", id, launched[id], adopted[id])
		}
		if _, err := os.Stat(filepath.Join(r.root, "src", strings.ToLower(id)+".txt")); err != nil {
			t.Fatalf("result of %s lost: %v", id, err)
		}
	}
}

// waitTerminal waits until a runtime record is terminal, so nothing writes
// into the test's directories after it ends.
func waitTerminal(t *testing.T, path string) {
	waitFor(t, "terminal record "+path, 30*time.Second, func() bool {
		var rec struct {
			TerminalDisposition string `json:"terminalDisposition"`
		}
		b, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(b, &rec) != nil {
			return false
		}
		switch rec.TerminalDisposition {
		case "completed", "failed", "terminated":
			return true
		}
		return false
	})
}

// A failed agent whose policy allows fallback is retried on the next
// executor of its chain: attempt 1 on shell (exits 1), attempt 2 on local.
func TestRetrySwitchesToFallbackExecutor(t *testing.T) {
	r := newRepo(t)
	a1 := implAgent("A1", "id: shell", "shell.command: false {agent}", "fallbacks: local", "retry-policy: fallback-allowed")
	r.writeWave(0, append([]agentSpec{a1}, closureAgents()...)...)
	res := launch(t, r)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	var execs []string
	for _, ev := range r.events() {
		if ev.EntityType == state.EntityAgentRun && ev.Action == "started" && ev.Data["agentId"] == "A1" {
			e, _ := ev.Data["executorId"].(string)
			execs = append(execs, e)
		}
	}
	if !slices.Equal(execs, []string{"shell", "local"}) {
		t.Fatalf("A1 ran on %v, want shell then local", execs)
	}
	if !strings.Contains(res.stdout, "falls back from shell to local") {
		t.Fatalf("no fallback line in the launcher output:\n%s", res.stdout)
	}
}

// killLauncherWhileRunning starts a launcher, waits until agent id's first
// run is running, and kills the launcher with SIGKILL.
func killLauncherWhileRunning(t *testing.T, r *testRepo, id string) {
	t.Helper()
	first := r.command(ctxFor(t), "launch", "--lane", "main", "--no-dashboard")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, id+" running", 30*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(r.layout().RunDir(0, id, 1), "runtime.json"))
		return err == nil && strings.Contains(string(b), `"running"`)
	})
	_ = first.Process.Signal(syscall.SIGKILL)
	_ = first.Wait()
}

// A prompt edited while the launcher was dead is not answered by the run
// of the old prompt: the agent reruns, and so does closure.
func TestAdoptionSkipsRunsOfAnOldPrompt(t *testing.T) {
	r := newRepo(t)
	a1 := implAgent("A1", "local.delay: 2s")
	r.writeWave(0, append([]agentSpec{a1}, closureAgents()...)...)
	killLauncherWhileRunning(t, r, "A1")
	a1.prompt = "Part A1, reworded while the launcher was down."
	r.writeWave(0, append([]agentSpec{a1}, closureAgents()...)...)
	if res := launch(t, r); res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	launched, adopted := agentStarts(r.events())
	if launched["A1"] != 2 || adopted["A1"] != 0 {
		t.Fatalf("A1 launched %d adopted %d: want a fresh run of the new prompt", launched["A1"], adopted["A1"])
	}
}

// After a launcher died, `status` says the wave is interrupted; `stop`
// then closes the run so the next launch starts afresh instead of
// adopting what was just terminated.
func TestStopAfterLauncherDeath(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.delay: 60s")}, closureAgents()...)...)
	killLauncherWhileRunning(t, r, "A1")
	st := r.run(ctxFor(t), "status", "--lane", "main", "--json")
	var lane state.Lane
	if err := json.Unmarshal([]byte(st.stdout), &lane); err != nil || len(lane.Waves) != 1 || lane.Waves[0].Status != state.WaveInterrupted {
		t.Fatalf("status after launcher death: %v %s", err, st.stdout)
	}
	if res := r.run(ctxFor(t), "stop", "--lane", "main"); res.code != 0 || !strings.Contains(res.stdout, "1 run(s) terminated") {
		t.Fatalf("stop: %d %s %s", res.code, res.stdout, res.stderr)
	}
	waitTerminal(t, filepath.Join(r.layout().RunDir(0, "A1", 1), "runtime.json"))
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	if res := launch(t, r, "--max-retries-per-wave", "0"); res.code != 0 {
		t.Fatalf("launch after stop: %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if _, adopted := agentStarts(r.events()); adopted["A1"] != 0 {
		t.Fatal("the terminated run was adopted")
	}
}

// Agent ids that map to one tmux session name are refused before anything
// starts (they would kill each other's runs and share run directories).
func TestCollidingAgentIDsAreRefused(t *testing.T) {
	r := newRepo(t)
	a, b := implAgent("A.1"), implAgent("A_1")
	b.owns = []string{"src/other.txt"}
	r.writeWave(0, append([]agentSpec{a, b}, closureAgents()...)...)
	res := launch(t, r)
	if res.code != 1 || !strings.Contains(res.stderr, `"A.1" and "A_1"`) {
		t.Fatalf("exit %d stderr %q", res.code, res.stderr)
	}
	if _, err := os.Stat(r.layout().RunsDir(0)); !os.IsNotExist(err) {
		t.Fatal("runs were created before the refusal")
	}
}

// `stop` clears sessions a finished launch kept (--keep-sessions).
func TestStopClearsKeptSessions(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	if res := launch(t, r, "--keep-sessions"); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	sock := r.layout().Socket()
	if out, err := exec.Command("tmux", "-L", sock, "ls").CombinedOutput(); err != nil || !strings.Contains(string(out), "w0-A0") {
		t.Fatalf("kept sessions: %v %s", err, out)
	}
	if res := r.run(ctxFor(t), "stop", "--lane", "main"); res.code != 0 {
		t.Fatalf("stop: %d %s", res.code, res.stderr)
	}
	if out, err := exec.Command("tmux", "-L", sock, "ls").CombinedOutput(); err == nil && strings.TrimSpace(string(out)) != "" {
		t.Fatalf("sessions left after stop: %s", out)
	}
}
