package runtime

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestReaderNeverSeesPartialRecord(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), runtimeFile)
	rec := Record{RunID: strings.Repeat("x", 4096), TerminalDisposition: Running}
	if err := WriteJSON(path, rec); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 1000 {
			rec.HeartbeatIntervalMs = i
			if err := WriteJSON(path, rec); err != nil {
				t.Error(err)
				return
			}
		}
		close(stop)
	}()
	reads := 0
	for done := false; !done; reads++ {
		select {
		case <-stop:
			done = true
		default:
		}
		got, err := ReadRecord(path)
		if err != nil || len(got.RunID) != 4096 {
			t.Fatalf("read %d: %v", reads, err)
		}
	}
	wg.Wait()
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), tmpDir, "*")); len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

func TestWatcherReportsCorruptRecordAndKeepsGoing(t *testing.T) {
	t.Parallel()
	bad, good := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := NewWatcher(slogDiscard(), WithSweep(50*time.Millisecond))
	w.Add(bad)
	w.Add(good)
	go w.Run(ctx)

	if err := os.WriteFile(filepath.Join(bad, runtimeFile), []byte(`{"schemaVersion":1,"runId":"w1-`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := nextChange(t, w, bad)
	if !errors.Is(c.Obs.Err, ErrUnreadable) || !strings.Contains(c.Obs.Err.Error(), filepath.Join(bad, runtimeFile)) {
		t.Fatalf("err = %v, want ErrUnreadable naming the path", c.Obs.Err)
	}
	// The watcher still delivers other runs, and the repaired one.
	code := 0
	fin := time.Now()
	done := Record{RunID: "w1-B-a1", TerminalDisposition: Completed, ExitCode: &code, FinishedAt: &fin}
	if err := WriteJSON(filepath.Join(good, runtimeFile), done); err != nil {
		t.Fatal(err)
	}
	if c := nextChange(t, w, good); c.Obs.Verdict.State != StateCompleted {
		t.Fatalf("good run: %+v", c.Obs.Verdict)
	}
	if err := WriteJSON(filepath.Join(bad, runtimeFile), done); err != nil {
		t.Fatal(err)
	}
	if c := nextChange(t, w, bad); c.Obs.Err != nil || c.Obs.Verdict.State != StateCompleted {
		t.Fatalf("repaired run: %+v %v", c.Obs.Verdict, c.Obs.Err)
	}
}

// nextChange returns the next change for dir, skipping others'.
func nextChange(t *testing.T, w *Watcher, dir string) Change {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case c, ok := <-w.Changes():
			if !ok {
				t.Fatal("watcher stopped")
			}
			if c.RunDir == dir && (c.Obs.Record != nil || c.Obs.Err != nil) {
				return c
			}
		case <-timeout:
			t.Fatalf("no change for %s", dir)
		}
	}
}

// slowBackend stands in for a tmux server busy creating sessions: Observe
// answers from the files, but for block (every directory when empty) only
// after gate is closed. calls counts Observe calls per directory.
type slowBackend struct {
	block string
	gate  chan struct{}
	mu    sync.Mutex
	calls map[string]int
}

func newSlowBackend() *slowBackend {
	return &slowBackend{gate: make(chan struct{}), calls: map[string]int{}}
}

func (b *slowBackend) Start(context.Context, []*Payload) error { return nil }

func (b *slowBackend) Terminate(context.Context, string, time.Duration, bool) error { return nil }

func (b *slowBackend) Observe(ctx context.Context, dir string, now time.Time) (Observation, error) {
	obs := ObserveFiles(dir, now) // what was true when the call began
	b.mu.Lock()
	b.calls[dir]++
	b.mu.Unlock()
	if b.block != "" && b.block != dir {
		return obs, obs.Err
	}
	select {
	case <-b.gate:
	case <-ctx.Done():
	}
	return obs, obs.Err
}

func (b *slowBackend) count(dir string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls[dir]
}

// runningRecord is a running record whose runner is this test process.
func runningRecord(t *testing.T, id string) Record {
	start, _, err := ProcStartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return Record{RunID: id, TerminalDisposition: Running, RunnerPid: os.Getpid(), RunnerStartTime: start,
		StartedAt: time.Now(), LastHeartbeatAt: time.Now(), HeartbeatIntervalMs: 60_000}
}

func finished(rec Record) Record {
	code, now := 0, time.Now()
	rec.TerminalDisposition, rec.ExitCode, rec.FinishedAt = Completed, &code, &now
	return rec
}

// A run's exit must reach the consumer while the backend (tmux) is stuck:
// file events never wait on it.
func TestWatcherDeliversExitWhileBackendIsSlow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := newSlowBackend()
	defer close(b.gate)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := NewWatcher(slogDiscard(), WithBackend(b), WithSweep(10*time.Millisecond))
	w.Add(dir)
	go w.Run(ctx)
	// A launching record (no runner yet) is what made the old watcher ask
	// tmux from its event loop.
	rec := Record{RunID: "w1-A-a1", TerminalDisposition: Launching, StartedAt: time.Now(), LastHeartbeatAt: time.Now()}
	if err := WriteJSON(filepath.Join(dir, runtimeFile), rec); err != nil {
		t.Fatal(err)
	}
	if c := nextChange(t, w, dir); c.Obs.Verdict.State != StateLaunching {
		t.Fatalf("first change %+v", c.Obs.Verdict)
	}
	waitFor(t, "the sweep to be stuck in the backend", func() bool { return b.count(dir) > 0 })
	if err := WriteJSON(filepath.Join(dir, runtimeFile), finished(rec)); err != nil {
		t.Fatal(err)
	}
	if c := nextChange(t, w, dir); c.Obs.Verdict.State != StateCompleted {
		t.Fatalf("final change %+v", c.Obs.Verdict)
	}
}

// A sweep that began before a run finished must not report the run as
// running again after its final change.
func TestWatcherDropsStaleSweep(t *testing.T) {
	t.Parallel()
	done, other := t.TempDir(), t.TempDir()
	b := newSlowBackend()
	b.block = done
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := runningRecord(t, "w1-A-a1")
	// A stale heartbeat makes every sweep observe the runs again.
	rec.HeartbeatIntervalMs, rec.LastHeartbeatAt = 1, time.Now().Add(-time.Hour)
	for _, d := range []string{done, other} {
		if err := WriteJSON(filepath.Join(d, runtimeFile), rec); err != nil {
			t.Fatal(err)
		}
	}
	w := NewWatcher(slogDiscard(), WithBackend(b), WithSweep(10*time.Millisecond))
	w.Add(done)
	w.Add(other)
	go w.Run(ctx)
	for range 2 {
		if c := <-w.Changes(); c.Obs.Verdict.State != StateRunning {
			t.Fatalf("first change %+v", c)
		}
	}
	waitFor(t, "a sweep to be stuck", func() bool { return b.count(done) > 0 })
	if err := WriteJSON(filepath.Join(done, runtimeFile), finished(rec)); err != nil {
		t.Fatal(err)
	}
	if c := nextChange(t, w, done); c.Obs.Verdict.State != StateCompleted {
		t.Fatalf("final change %+v", c.Obs.Verdict)
	}
	close(b.gate) // the stuck sweep returns "running" for done
	// Two more sweeps of the unfinished run mean the stale batch was
	// received and delivered by the event loop.
	n := b.count(other)
	waitFor(t, "two more sweeps", func() bool { return b.count(other) >= n+2 })
	for {
		select {
		case c := <-w.Changes():
			if c.RunDir == done {
				t.Fatalf("stale change after the final one: %+v", c.Obs.Verdict)
			}
		default:
			return
		}
	}
}

// WithLaunchGrace decides how long a launching run may lack its session.
func TestLaunchGraceOption(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dir := t.TempDir()
	rec := Record{RunID: "w1-A-a1", TerminalDisposition: Launching, SessionName: "never-started",
		StartedAt: time.Now().Add(-2 * time.Second)}
	if err := WriteJSON(filepath.Join(dir, runtimeFile), rec); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		b    *TmuxBackend
		want State
	}{
		{h.b, StateLaunching}, // default 10s
		{NewTmuxBackend(h.tm, "", nil, WithLaunchGrace(time.Second)), StateLost},
	} {
		obs, _ := tc.b.Observe(context.Background(), dir, time.Now())
		if obs.Verdict.State != tc.want {
			t.Errorf("grace %s: %+v, want %s", tc.b.launchGrace, obs.Verdict, tc.want)
		}
	}
}

// The sweep skips live runs whose files did not change, but a runner whose
// heartbeats stop is still reported, and so is one that dies.
func TestWatcherSweepReportsStaleHeartbeatAndDeadRunner(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := runningRecord(t, "w1-A-a1")
	rec.HeartbeatIntervalMs = 20
	if err := WriteJSON(filepath.Join(dir, runtimeFile), rec); err != nil {
		t.Fatal(err)
	}
	w := NewWatcher(slogDiscard(), WithSweep(10*time.Millisecond))
	w.Add(dir)
	go w.Run(ctx)
	if c := nextChange(t, w, dir); c.Obs.Verdict.State != StateRunning || len(c.Obs.Verdict.Warnings) != 0 {
		t.Fatalf("first change %+v", c.Obs.Verdict)
	}
	c := nextChange(t, w, dir)
	if v := c.Obs.Verdict; v.State != StateRunning || len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], "heartbeat") {
		t.Fatalf("after heartbeats stopped: %+v", v)
	}

	// A runner killed without a file event: only the sweep can see it.
	other := t.TempDir()
	runner := exec.Command("sleep", "60")
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	defer runner.Process.Kill()
	rec = runningRecord(t, "w1-B-a1")
	rec.RunnerPid = runner.Process.Pid
	rec.RunnerStartTime, _, _ = ProcStartTime(rec.RunnerPid)
	if err := WriteJSON(filepath.Join(other, runtimeFile), rec); err != nil {
		t.Fatal(err)
	}
	w.Add(other)
	if c := nextChange(t, w, other); c.Obs.Verdict.State != StateRunning {
		t.Fatalf("live runner: %+v", c.Obs.Verdict)
	}
	runner.Process.Kill()
	runner.Wait()
	if c := nextChange(t, w, other); c.Obs.Verdict.State != StateLost {
		t.Fatalf("killed runner: %+v", c.Obs.Verdict)
	}
}
