package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// submitted is what `submit --json` prints.
type submittedJSON struct {
	RunID     string `json:"runId"`
	Lane      string `json:"lane"`
	StatePath string `json:"statePath"`
	Queued    bool   `json:"queued"`
}

// submitFromShell runs `submit --json` in a client shell that exits right
// after, as an agent's tool call would.
func submitFromShell(t *testing.T, r *testRepo, extra ...string) submittedJSON {
	t.Helper()
	args := []string{shellQuote(binPath), "--repo-root", shellQuote(r.root), "submit", "--json", "--no-dashboard"}
	for _, a := range extra {
		args = append(args, shellQuote(a))
	}
	sh := exec.CommandContext(ctxFor(t), "sh", "-c", strings.Join(args, " ")+"; exit $?")
	sh.Dir = r.root
	sh.Env = append(os.Environ(), "TMUX_TMPDIR="+tmuxTmp)
	res := runCmd(t, sh)
	if res.code != 0 {
		t.Fatalf("submit: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	var s submittedJSON
	if err := json.Unmarshal([]byte(res.stdout), &s); err != nil || s.RunID == "" || s.Lane != "main" || s.StatePath == "" {
		t.Fatalf("submit --json: %v %q", err, res.stdout)
	}
	return s
}

// runState reads a submitted run's state file.
func runState(t *testing.T, path string) submittedRun {
	t.Helper()
	var s submittedRun
	b, err := os.ReadFile(path)
	if err == nil {
		_ = json.Unmarshal(b, &s)
	}
	return s
}

// A client shell submits a run and exits; the run goes on detached, and
// `wait` from another process gets its exit code, 0.
func TestSubmittedRunOutlivesItsClientAndWaitGetsItsExitCode(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.delay: 1s")}, closureAgents()...)...)
	s := submitFromShell(t, r)
	w := r.run(ctxFor(t), "wait", "--run-id", s.RunID, "--timeout-seconds", "100")
	if w.code != 0 || !strings.Contains(w.stdout, "state=completed") {
		t.Fatalf("wait: exit %d\n%s%s", w.code, w.stdout, w.stderr)
	}
	st := r.run(ctxFor(t), "status", "--run-id", s.RunID, "--json")
	var rec submittedRun
	if err := json.Unmarshal([]byte(st.stdout), &rec); err != nil || rec.State != runCompleted || rec.ExitCode == nil || *rec.ExitCode != 0 || rec.Pid == 0 {
		t.Fatalf("status --run-id: %v %s", err, st.stdout)
	}
}

// A submitted launcher killed with SIGKILL is restarted once by the
// watcher, adopts its live agents, and the run still ends completed.
func TestKilledSubmittedLauncherIsRestartedAndCompletes(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.delay: 3s")}, closureAgents()...)...)
	s := submitFromShell(t, r)
	var pid int
	waitFor(t, "A1 running under the submitted launcher", 30*time.Second, func() bool {
		pid = runState(t, s.StatePath).Pid
		b, err := os.ReadFile(r.layout().RunDir(0, "A1", 1) + "/runtime.json")
		return pid > 0 && err == nil && strings.Contains(string(b), `"running"`)
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w := r.run(ctxFor(t), "wait", "--run-id", s.RunID, "--json")
	var rec submittedRun
	if err := json.Unmarshal([]byte(w.stdout), &rec); err != nil {
		t.Fatalf("wait --json: %v %q %s", err, w.stdout, w.stderr)
	}
	if w.code != 0 || rec.State != runCompleted || rec.Restarts != 1 || rec.Pid == pid {
		t.Fatalf("after kill -9: exit %d state %s restarts %d pid %d (killed %d)\n%s", w.code, rec.State, rec.Restarts, rec.Pid, pid, w.stderr)
	}
	launched, adopted := agentStarts(r.events())
	if launched["A1"] != 1 || adopted["A1"] != 1 {
		t.Fatalf("A1 launched %d adopted %d; want one launch, one adoption", launched["A1"], adopted["A1"])
	}
}

// A second submit while a run is active is queued and runs after it;
// --no-queue refuses with 32 instead.
func TestSecondSubmitIsQueuedOrRefusedWithNoQueue(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.delay: 2s")}, closureAgents()...)...)
	first := submitFromShell(t, r)
	refused := r.run(ctxFor(t), "submit", "--no-queue", "--no-dashboard")
	if refused.code != exitcode.LaneBusy {
		t.Fatalf("submit --no-queue during a run: exit %d, want 32\n%s%s", refused.code, refused.stdout, refused.stderr)
	}
	second := submitFromShell(t, r)
	if !second.Queued {
		t.Fatalf("second submit not reported queued: %+v", second)
	}
	if w := r.run(ctxFor(t), "wait", "--run-id", second.RunID); w.code != 0 {
		t.Fatalf("queued run: exit %d\n%s%s", w.code, w.stdout, w.stderr)
	}
	a, b := runState(t, first.StatePath), runState(t, second.StatePath)
	if a.FinishedAt == nil || b.StartedAt == nil || b.StartedAt.Before(*a.FinishedAt) {
		t.Fatalf("queued run started before the first ended: first %+v second %+v", a, b)
	}
}

// wait gives up with 124 and changes nothing when the run outlasts
// --timeout-seconds; `stop` then ends the run as stopped, and a queued
// one never starts.
func TestWaitTimesOutWith124AndStopEndsSubmittedRuns(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.delay: 20s")}, closureAgents()...)...)
	s := submitFromShell(t, r)
	w := r.run(ctxFor(t), "wait", "--run-id", s.RunID, "--timeout-seconds", "1")
	if w.code != exitcode.Timeout {
		t.Fatalf("wait: exit %d, want 124\n%s%s", w.code, w.stdout, w.stderr)
	}
	if st := runState(t, s.StatePath); st.terminal() {
		t.Fatalf("run ended by a timed-out wait: %+v", st)
	}
	queued := submitFromShell(t, r)
	if res := r.run(ctxFor(t), "stop"); res.code != 0 {
		t.Fatalf("stop: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	w = r.run(ctxFor(t), "wait", "--run-id", s.RunID, "--json")
	var rec submittedRun
	if err := json.Unmarshal([]byte(w.stdout), &rec); err != nil || w.code == 0 || rec.State != runStopped {
		t.Fatalf("stopped run: exit %d %v %s%s", w.code, err, w.stdout, w.stderr)
	}
	if q := runState(t, queued.StatePath); q.State != runStopped || q.StartedAt != nil {
		t.Fatalf("queued run after stop: %+v", q)
	}
}

// A submitted launcher that dies a second time is not restarted again:
// the run fails, saying why.
func TestSubmittedLauncherDyingTwiceFailsTheRunWithTheReason(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.delay: 30s")}, closureAgents()...)...)
	s := submitFromShell(t, r)
	var first int
	waitFor(t, "the submitted launcher", 30*time.Second, func() bool {
		first = runState(t, s.StatePath).Pid
		return first > 0
	})
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var second int
	waitFor(t, "the restarted launcher", 30*time.Second, func() bool {
		st := runState(t, s.StatePath)
		second = st.Pid
		return st.Restarts == 1 && second > 0 && second != first
	})
	if err := syscall.Kill(second, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w := r.run(ctxFor(t), "wait", "--run-id", s.RunID, "--json")
	var rec submittedRun
	if err := json.Unmarshal([]byte(w.stdout), &rec); err != nil || w.code == 0 || rec.State != runFailed || !strings.Contains(rec.Why, "died twice") {
		t.Fatalf("after two deaths: exit %d %v %s%s", w.code, err, w.stdout, w.stderr)
	}
	_ = r.run(ctxFor(t), "stop")
}

// submit --wave N submits a resume of wave N; a launch-only flag with it
// is a usage error before anything is queued.
func TestSubmitWithWaveIsAResume(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	if res := r.run(ctxFor(t), "submit", "--wave", "0", "--start-wave", "1"); res.code != exitcode.Usage || !strings.Contains(res.stderr, "--start-wave is a launch flag") {
		t.Fatalf("submit --wave with --start-wave: exit %d %s", res.code, res.stderr)
	}
	s := submitFromShell(t, r, "--wave", "0", "--phase", "implementation")
	if w := r.run(ctxFor(t), "wait", "--run-id", s.RunID); w.code != 0 {
		t.Fatalf("submitted resume: exit %d\n%s%s", w.code, w.stdout, w.stderr)
	}
	if rec := runState(t, s.StatePath); rec.Command != "resume" || !slices.Contains(rec.Args, "--phase=implementation") {
		t.Fatalf("submitted resume recorded as %s %v", rec.Command, rec.Args)
	}
}
