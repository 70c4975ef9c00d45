package drive

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
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
func submitFromShell(t *testing.T, r *e2etest.Repo, extra ...string) submittedJSON {
	t.Helper()
	args := []string{e2etest.ShellQuote(e2etest.Bin()), "--repo-root", e2etest.ShellQuote(r.Root), "submit", "--json", "--no-dashboard"}
	for _, a := range extra {
		args = append(args, e2etest.ShellQuote(a))
	}
	sh := exec.CommandContext(e2etest.Context(t), "sh", "-c", strings.Join(args, " ")+"; exit $?")
	sh.Dir = r.Root
	sh.Env = append(os.Environ(), "TMUX_TMPDIR="+e2etest.TmuxDir())
	res := e2etest.RunCmd(t, sh)
	if res.Code != 0 {
		t.Fatalf("submit: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	var s submittedJSON
	if err := json.Unmarshal([]byte(res.Stdout), &s); err != nil || s.RunID == "" || s.Lane != "main" || s.StatePath == "" {
		t.Fatalf("submit --json: %v %q", err, res.Stdout)
	}
	return s
}

// runState reads a submitted run's state file.
func runState(t *testing.T, path string) e2etest.SubmittedRun {
	t.Helper()
	var s e2etest.SubmittedRun
	b, err := os.ReadFile(path)
	if err == nil {
		_ = json.Unmarshal(b, &s)
	}
	return s
}

// A client shell submits a run and exits; the run goes on detached, and
// `wait` from another process gets its exit code, 0.
func TestSubmittedRunOutlivesItsClientAndWaitGetsItsExitCode(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 1s")}, e2etest.ClosureAgents()...)...)
	s := submitFromShell(t, r)
	w := r.Run(e2etest.Context(t), "wait", "--run-id", s.RunID, "--timeout-seconds", "100")
	if w.Code != 0 || !strings.Contains(w.Stdout, "state=completed") {
		t.Fatalf("wait: exit %d\n%s%s", w.Code, w.Stdout, w.Stderr)
	}
	st := r.Run(e2etest.Context(t), "status", "--run-id", s.RunID, "--json")
	var rec e2etest.SubmittedRun
	if err := json.Unmarshal([]byte(st.Stdout), &rec); err != nil || rec.State != e2etest.RunCompleted || rec.ExitCode == nil || *rec.ExitCode != 0 || rec.Pid == 0 {
		t.Fatalf("status --run-id: %v %s", err, st.Stdout)
	}
}

// A submitted launcher killed with SIGKILL is restarted once by the
// watcher, adopts its live agents, and the run still ends completed.
func TestKilledSubmittedLauncherIsRestartedAndCompletes(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 3s")}, e2etest.ClosureAgents()...)...)
	s := submitFromShell(t, r)
	var pid int
	e2etest.WaitFor(t, "A1 running under the submitted launcher", 30*time.Second, func() bool {
		pid = runState(t, s.StatePath).Pid
		b, err := os.ReadFile(r.Layout().RunDir(0, "A1", 1) + "/runtime.json")
		return pid > 0 && err == nil && strings.Contains(string(b), `"running"`)
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w := r.Run(e2etest.Context(t), "wait", "--run-id", s.RunID, "--json")
	var rec e2etest.SubmittedRun
	if err := json.Unmarshal([]byte(w.Stdout), &rec); err != nil {
		t.Fatalf("wait --json: %v %q %s", err, w.Stdout, w.Stderr)
	}
	if w.Code != 0 || rec.State != e2etest.RunCompleted || rec.Restarts != 1 || rec.Pid == pid {
		t.Fatalf("after kill -9: exit %d state %s restarts %d pid %d (killed %d)\n%s", w.Code, rec.State, rec.Restarts, rec.Pid, pid, w.Stderr)
	}
	launched, adopted := e2etest.AgentStarts(r.Events())
	if launched["A1"] != 1 || adopted["A1"] != 1 {
		t.Fatalf("A1 launched %d adopted %d; want one launch, one adoption", launched["A1"], adopted["A1"])
	}
}

// A second submit while a run is active is queued and runs after it;
// --no-queue refuses with 32 instead.
func TestSecondSubmitIsQueuedOrRefusedWithNoQueue(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 2s")}, e2etest.ClosureAgents()...)...)
	first := submitFromShell(t, r)
	refused := r.Run(e2etest.Context(t), "submit", "--no-queue", "--no-dashboard")
	if refused.Code != e2etest.ExitLocked {
		t.Fatalf("submit --no-queue during a run: exit %d, want 32\n%s%s", refused.Code, refused.Stdout, refused.Stderr)
	}
	second := submitFromShell(t, r)
	if !second.Queued {
		t.Fatalf("second submit not reported queued: %+v", second)
	}
	if w := r.Run(e2etest.Context(t), "wait", "--run-id", second.RunID); w.Code != 0 {
		t.Fatalf("queued run: exit %d\n%s%s", w.Code, w.Stdout, w.Stderr)
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
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 20s")}, e2etest.ClosureAgents()...)...)
	s := submitFromShell(t, r)
	w := r.Run(e2etest.Context(t), "wait", "--run-id", s.RunID, "--timeout-seconds", "1")
	if w.Code != e2etest.ExitTimeout {
		t.Fatalf("wait: exit %d, want 124\n%s%s", w.Code, w.Stdout, w.Stderr)
	}
	if st := runState(t, s.StatePath); st.Terminal() {
		t.Fatalf("run ended by a timed-out wait: %+v", st)
	}
	queued := submitFromShell(t, r)
	if res := r.Run(e2etest.Context(t), "stop"); res.Code != 0 {
		t.Fatalf("stop: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	w = r.Run(e2etest.Context(t), "wait", "--run-id", s.RunID, "--json")
	var rec e2etest.SubmittedRun
	if err := json.Unmarshal([]byte(w.Stdout), &rec); err != nil || w.Code == 0 || rec.State != e2etest.RunStopped {
		t.Fatalf("stopped run: exit %d %v %s%s", w.Code, err, w.Stdout, w.Stderr)
	}
	if q := runState(t, queued.StatePath); q.State != e2etest.RunStopped || q.StartedAt != nil {
		t.Fatalf("queued run after stop: %+v", q)
	}
}

// A submitted launcher that dies a second time is not restarted again:
// the run fails, saying why.
func TestSubmittedLauncherDyingTwiceFailsTheRunWithTheReason(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 30s")}, e2etest.ClosureAgents()...)...)
	s := submitFromShell(t, r)
	var first int
	e2etest.WaitFor(t, "the submitted launcher", 30*time.Second, func() bool {
		first = runState(t, s.StatePath).Pid
		return first > 0
	})
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var second int
	e2etest.WaitFor(t, "the restarted launcher", 30*time.Second, func() bool {
		st := runState(t, s.StatePath)
		second = st.Pid
		return st.Restarts == 1 && second > 0 && second != first
	})
	if err := syscall.Kill(second, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w := r.Run(e2etest.Context(t), "wait", "--run-id", s.RunID, "--json")
	var rec e2etest.SubmittedRun
	if err := json.Unmarshal([]byte(w.Stdout), &rec); err != nil || w.Code == 0 || rec.State != e2etest.RunFailed || !strings.Contains(rec.Why, "died twice") {
		t.Fatalf("after two deaths: exit %d %v %s%s", w.Code, err, w.Stdout, w.Stderr)
	}
	_ = r.Run(e2etest.Context(t), "stop")
}

// submit --wave N submits a resume of wave N; a launch-only flag with it
// is a usage error before anything is queued.
func TestSubmitWithWaveIsAResume(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	if res := r.Run(e2etest.Context(t), "submit", "--wave", "0", "--start-wave", "1"); res.Code != e2etest.ExitUsage || !strings.Contains(res.Stderr, "--start-wave is a launch flag") {
		t.Fatalf("submit --wave with --start-wave: exit %d %s", res.Code, res.Stderr)
	}
	s := submitFromShell(t, r, "--wave", "0", "--phase", "implementation")
	if w := r.Run(e2etest.Context(t), "wait", "--run-id", s.RunID); w.Code != 0 {
		t.Fatalf("submitted resume: exit %d\n%s%s", w.Code, w.Stdout, w.Stderr)
	}
	if rec := runState(t, s.StatePath); rec.Command != "resume" || !slices.Contains(rec.Args, "--phase=implementation") {
		t.Fatalf("submitted resume recorded as %s %v", rec.Command, rec.Args)
	}
}

// A submit while a foreground launch holds the lane is queued, and waits
// its turn: it starts once the launch has ended, and passes.
func TestASubmitDuringAForegroundLaunchWaitsItsTurnAndRuns(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	gate := filepath.Join(t.TempDir(), "gate")
	r.Write("agent.sh", "#!/bin/sh\nuntil [ -e "+e2etest.ShellQuote(gate)+" ]; do sleep 0.05; done\n"+
		"mkdir -p src && echo done > src/a1.txt\n"+
		"echo '[wave-proof] completion=contract durability=none proof=unit state=met'\necho '[wave-doc-delta] state=owned'\n")
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "id: shell", "shell.command: sh agent.sh")}, e2etest.ClosureAgents()...)...)
	fg := r.Command(e2etest.Context(t), "launch", "--no-dashboard")
	var console e2etest.SyncBuf
	fg.Stdout, fg.Stderr = &console, &console
	if err := fg.Start(); err != nil {
		t.Fatal(err)
	}
	e2etest.WaitFor(t, "the foreground launch to hold the lane", 30*time.Second, func() bool { return lanes.Held(r.Layout().LockPath()) })
	s := submitFromShell(t, r)
	if !s.Queued {
		t.Fatalf("submit during a foreground launch not reported queued: %+v", s)
	}
	e2etest.WaitFor(t, "the queued run to wait for the lane", 30*time.Second, func() bool {
		st := runState(t, s.StatePath)
		return st.Terminal() || strings.Contains(r.Capture(lanes.LauncherSession), "waits for lane main")
	})
	if st := runState(t, s.StatePath); st.State != "queued" || st.Pid != 0 {
		t.Fatalf("the queued run while the foreground launch holds the lane: %+v", st)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fg.Wait(); err != nil {
		t.Fatalf("foreground launch: %v\n%s", err, console.String())
	}
	w := r.Run(e2etest.Context(t), "wait", "--run-id", s.RunID, "--json")
	var rec e2etest.SubmittedRun
	if err := json.Unmarshal([]byte(w.Stdout), &rec); err != nil || w.Code != 0 || rec.State != e2etest.RunCompleted || rec.StartedAt == nil {
		t.Fatalf("the queued run: exit %d %v %s%s", w.Code, err, w.Stdout, w.Stderr)
	}
	var fgEnd time.Time
	for _, ev := range r.Events() {
		if ev.EntityType == state.EntityWaveRun && ev.Action == state.WaveCompleted && fgEnd.IsZero() {
			fgEnd = ev.RecordedAt
		}
	}
	if fgEnd.IsZero() || rec.StartedAt.Before(fgEnd) {
		t.Fatalf("the queued run started at %v, before the foreground launch's wave ended at %v", rec.StartedAt, fgEnd)
	}
}

// A submitted run whose wave failed says why: the agent and its failure,
// not an empty why.
func TestAFailedSubmittedRunSaysWhichAgentFailed(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "id: shell", "shell.command: sh -c 'exit 3'")}, e2etest.ClosureAgents()...)...)
	s := submitFromShell(t, r, "--max-retries-per-wave", "0")
	w := r.Run(e2etest.Context(t), "wait", "--run-id", s.RunID, "--json")
	var rec e2etest.SubmittedRun
	if err := json.Unmarshal([]byte(w.Stdout), &rec); err != nil || w.Code == 0 || rec.State != e2etest.RunFailed {
		t.Fatalf("failing run: exit %d %v %s%s", w.Code, err, w.Stdout, w.Stderr)
	}
	if !strings.HasPrefix(rec.Why, "wave 0 failed: A1: ") {
		t.Fatalf("why = %q, want the wave's failure naming A1", rec.Why)
	}
	if st := r.Run(e2etest.Context(t), "status", "--run-id", s.RunID); !strings.Contains(st.Stdout, "why: wave 0 failed: A1: ") {
		t.Fatalf("status --run-id does not say why:\n%s", st.Stdout)
	}
}

// After a submitted run ended, doctor does not take the watcher's own
// launcher session (its last pane kept for inspection) for a leftover.
func TestDoctorAfterASubmittedRunDoesNotWarnAboutTheLauncherSession(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	s := submitFromShell(t, r)
	if w := r.Run(e2etest.Context(t), "wait", "--run-id", s.RunID); w.Code != 0 {
		t.Fatalf("wait: exit %d %s%s", w.Code, w.Stdout, w.Stderr)
	}
	e2etest.WaitFor(t, "the watcher to end", 30*time.Second, func() bool { return !watcherHeld(r) })
	if r.Capture(lanes.LauncherSession) == "" {
		t.Fatal("the launcher session is gone: the test would prove nothing")
	}
	doc := r.Run(e2etest.Context(t), "doctor")
	if strings.Contains(doc.Stdout, "tmux session(s)") {
		t.Fatalf("doctor after a submitted run:\n%s", doc.Stdout)
	}
}

// watcherHeld reports whether the lane's submitted-run watcher holds its
// lock.
func watcherHeld(r *e2etest.Repo) bool {
	fl := flock.New(filepath.Join(r.Layout().SubmittedDir(), "watcher.lock"))
	ok, err := fl.TryLock()
	if err != nil {
		return true
	}
	if ok {
		_ = fl.Unlock()
	}
	return !ok
}
