package submitted

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

func TestASubmittedRunEndsCompletedWithItsLaunchersExitCode(t *testing.T) {
	l := newTestLane(t)
	r, busy := l.submit("exit 0")
	if busy || r.State != Queued {
		t.Fatalf("first submit on an idle lane: busy %v, state %s", busy, r.State)
	}
	end := l.wait(r.RunID)
	if end.State != Completed || end.ExitStatus() != 0 || end.Pid == 0 || end.StartedAt == nil || end.FinishedAt == nil || end.Why != "" {
		t.Fatalf("run: %+v", end)
	}
}

// A run submitted while a foreground launcher holds the lane waits its
// turn: it stays queued, its launcher never starts, until the lane is
// free; then it runs.
func TestAQueuedRunWaitsForAForegroundLauncherToFreeTheLane(t *testing.T) {
	l := newTestLane(t)
	ran := filepath.Join(t.TempDir(), "ran")
	lock, err := lanes.AcquireLock(l.layout.LockPath())
	if err != nil {
		t.Fatal(err)
	}
	r, busy := l.submit(": > " + shq(ran))
	if !busy {
		t.Fatal("a submit while a launcher holds the lane is not reported queued")
	}
	eventually(t, "the watcher to wait for the lane", func() bool { return strings.Contains(l.out.String(), "waits for lane main") })
	if st := l.read(r.RunID); st.State != Queued || st.StartedAt != nil || st.Pid != 0 {
		t.Fatalf("run while the lane is held: %+v", st)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the queued run's launcher started while the lane was held")
	}
	released := time.Now()
	if err := lock.Release(); err != nil {
		t.Fatal(err)
	}
	end := l.wait(r.RunID)
	if end.State != Completed || end.StartedAt.Before(released) {
		t.Fatalf("run after the lane was freed: %+v", end)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Fatalf("the launcher did not run: %v", err)
	}
}

// A launcher that finds the lane taken (exit 32) between the watcher's
// look and its start did nothing: the run is queued again and runs,
// with no failure and no restart counted.
func TestALauncherThatFindsTheLaneTakenLeavesItsRunQueued(t *testing.T) {
	l := newTestLane(t)
	once := filepath.Join(t.TempDir(), "once")
	r, _ := l.submit("if [ ! -e " + shq(once) + " ]; then : > " + shq(once) + "; echo 'another launcher is active' >&2; exit 32; fi; exit 0")
	end := l.wait(r.RunID)
	if end.State != Completed || end.Restarts != 0 || end.Why != "" {
		t.Fatalf("run: %+v", end)
	}
	if !strings.Contains(l.out.String(), "waits its turn again") {
		t.Fatalf("watcher output does not say the run was queued again:\n%s", l.out.String())
	}
}

// A run whose wave failed says which agents failed and how, not the
// launcher's empty last line.
func TestAFailedWaveRunSaysWhichAgentsFailedAndWhy(t *testing.T) {
	l := newTestLane(t)
	ev := state.NewEvent("main", 2, state.EntityWaveRun, "wave-2", state.WaveFailed, 2, map[string]any{"failures": []state.Failure{
		{AgentID: "A1", Gate: "implementation", StatusCode: "missing-marker", Detail: "no [wave-proof] line in its output."},
		{Gate: "cont-qa", StatusCode: "cont-qa-failed"},
	}})
	r, _ := l.submit(l.appendEvent(ev) + "; echo >&2; exit 1")
	end := l.wait(r.RunID)
	want := "wave 2 failed: A1: missing-marker (no [wave-proof] line in its output); cont-qa: cont-qa-failed"
	if end.State != Failed || end.ExitStatus() != exitcode.Failed || end.Why != want {
		t.Fatalf("run: state %s exit %d why %q, want failed, 1, %q", end.State, end.ExitStatus(), end.Why, want)
	}
}

// A launcher that ends before any wave says why on stderr: that is the
// run's why.
func TestARunThatFailsBeforeAnyWaveKeepsTheLaunchersLastLine(t *testing.T) {
	l := newTestLane(t)
	r, _ := l.submit("echo 'checking executors' >&2; echo 'executor codex: not on PATH' >&2; exit 43")
	end := l.wait(r.RunID)
	if end.State != Failed || end.ExitStatus() != exitcode.NeedsHuman || end.Why != "executor codex: not on PATH" {
		t.Fatalf("run: %+v", end)
	}
}

// A run is stopped, not failed, when its launcher recorded its wave
// stopped, or when `stop` asked the lane to stop while it ran; a stop
// asked before it started is not its own.
func TestARunIsStoppedWhenTheLaneWasAskedToStopOrItsWaveStopped(t *testing.T) {
	l := newTestLane(t)
	stopped := state.NewEvent("main", 0, state.EntityWaveRun, "wave-0", state.WaveStopped, 1, nil)
	r, _ := l.submit(l.appendEvent(stopped) + "; exit 1")
	if end := l.wait(r.RunID); end.State != Stopped || end.Why != "wave 0 stopped on request" {
		t.Fatalf("run whose wave stopped: %+v", end)
	}

	ask := `printf '{"stop":true,"requestedAt":"%s"}\n' "$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)" > ` + shq(l.layout.ControlPath())
	r, _ = l.submit(ask + "; echo 'lane main stopped on request' >&2; exit 1")
	if end := l.wait(r.RunID); end.State != Stopped || end.Why != "lane main stopped on request" {
		t.Fatalf("run the lane was asked to stop: %+v", end)
	}

	if err := jsonfile.Write(l.layout.ControlPath(), map[string]any{"stop": true, "requestedAt": time.Now().Add(-time.Hour).UTC()}); err != nil {
		t.Fatal(err)
	}
	r, _ = l.submit("echo 'wave 0: gate failed' >&2; exit 1")
	if end := l.wait(r.RunID); end.State != Failed {
		t.Fatalf("a stop asked before the run started stopped it: %+v", end)
	}
}

// A launcher killed by a signal is started again once; a second death
// fails the run, naming the signal.
func TestALauncherKilledBySignalIsRestartedOnceThenTheRunFails(t *testing.T) {
	l := newTestLane(t)
	once := filepath.Join(t.TempDir(), "once")
	r, _ := l.submit("if [ ! -e " + shq(once) + " ]; then : > " + shq(once) + "; kill -9 $$; fi; exit 0")
	if end := l.wait(r.RunID); end.State != Completed || end.Restarts != 1 || !strings.Contains(end.Why, "restarted once") {
		t.Fatalf("run killed once: %+v", end)
	}
	r, _ = l.submit("kill -9 $$")
	end := l.wait(r.RunID)
	if end.State != Failed || end.Restarts != 1 || end.ExitStatus() != 128+9 || !strings.Contains(end.Why, "died twice") || !strings.Contains(end.Why, "killed") {
		t.Fatalf("run killed twice: %+v", end)
	}
}

// Runs go one at a time, oldest first: the second starts once the first
// ended, and the second submit is reported queued.
func TestRunsGoOneAtATimeOldestFirst(t *testing.T) {
	l := newTestLane(t)
	gate := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	first, _ := l.submit("read line < " + shq(gate) + "; exit 0")
	eventually(t, "the first run's launcher", func() bool { return l.read(first.RunID).Pid != 0 })
	second, busy := l.submit("exit 0")
	if !busy {
		t.Fatal("a submit behind a running run is not reported queued")
	}
	// Opening the pipe waits for the launcher's read; closing it ends it.
	if f, err := os.OpenFile(gate, os.O_WRONLY, 0); err != nil {
		t.Fatal(err)
	} else {
		f.Close()
	}
	a, b := l.wait(first.RunID), l.wait(second.RunID)
	if a.State != Completed || b.State != Completed || b.StartedAt.Before(*a.FinishedAt) {
		t.Fatalf("first %+v, second %+v", a, b)
	}
}

func TestSubmitWithNoQueueOnABusyLaneRecordsNothing(t *testing.T) {
	l := newTestLane(t)
	lock, err := lanes.AcquireLock(l.layout.LockPath())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	_, busy, err := l.q.Submit(t.Context(), "launch", nil, true, func(context.Context) error {
		t.Fatal("a refused submit started a watcher")
		return nil
	})
	if !busy || !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "lane main has an active run") {
		t.Fatalf("submit --no-queue on a held lane: busy %v, %v", busy, err)
	}
	if runs, bad := l.q.Runs(); len(runs) != 0 || len(bad) != 0 {
		t.Fatalf("records after a refused submit: %v %v", runs, bad)
	}
}

// stop marks queued runs stopped before they start, and leaves ended
// ones alone.
func TestStopQueuedStopsOnlyRunsNotYetStarted(t *testing.T) {
	l := newTestLane(t)
	lock, err := lanes.AcquireLock(l.layout.LockPath())
	if err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(t.TempDir(), "ran")
	queued, _ := l.submit(": > " + shq(ran))
	eventually(t, "the watcher to wait for the lane", func() bool { return strings.Contains(l.out.String(), "waits for lane main") })
	ids, err := l.q.StopQueued(t.Context())
	if err != nil || len(ids) != 1 || ids[0] != queued.RunID {
		t.Fatalf("StopQueued: %v %v", ids, err)
	}
	if err := lock.Release(); err != nil {
		t.Fatal(err)
	}
	end := l.wait(queued.RunID)
	if end.State != Stopped || end.StartedAt != nil || !strings.Contains(end.Why, "before it started") {
		t.Fatalf("queued run after stop: %+v", end)
	}
	l.wg.Wait() // the watcher ends with nothing queued
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("a stopped queued run's launcher ran")
	}
	if ids, err := l.q.StopQueued(t.Context()); err != nil || len(ids) != 0 {
		t.Fatalf("StopQueued again: %v %v", ids, err)
	}
}

// A watcher that died left its run running: the next watcher fails it,
// saying how to adopt its agents, before it runs anything.
func TestTheNextWatcherFailsARunItsDeadWatcherLeftRunning(t *testing.T) {
	l := newTestLane(t)
	if err := os.MkdirAll(l.layout.SubmittedDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	orphan := NewRun("main", Running, "launch", nil, time.Now())
	orphan.Pid = 4242
	if err := l.q.st.write(orphan); err != nil {
		t.Fatal(err)
	}
	if err := l.watcher().Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if end := l.read(orphan.RunID); end.State != Failed || !strings.Contains(end.Why, "pid 4242") || !strings.Contains(end.Why, "resubmit") {
		t.Fatalf("orphan: %+v", end)
	}
}

// Wait gives up with ctx's error and the run as last read, changing
// nothing; a run id that is not a file name is refused.
func TestWaitGivesUpWithTheLastRecordAndChangesNothing(t *testing.T) {
	l := newTestLane(t)
	lock, err := lanes.AcquireLock(l.layout.LockPath())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	r, _ := l.submit("exit 0")
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	last, err := l.q.Wait(ctx, r.RunID)
	if !errors.Is(err, context.DeadlineExceeded) || last == nil || last.State != Queued {
		t.Fatalf("Wait past its deadline: %+v %v", last, err)
	}
	if _, err := l.q.Wait(t.Context(), "../x"); err == nil {
		t.Fatal("Wait accepted a run id with a path in it")
	}
	if _, err := l.q.StopQueued(t.Context()); err != nil {
		t.Fatal(err)
	}
}
