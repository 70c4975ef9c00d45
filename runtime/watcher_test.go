package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestReaderNeverSeesPartialRecord(t *testing.T) {
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
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

func TestWatcherReportsCorruptRecordAndKeepsGoing(t *testing.T) {
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

func TestAdoptClassifiesLiveAndFinishedRuns(t *testing.T) {
	h := newHarness(t)
	root := t.TempDir()
	live := h.payload(t, filepath.Join(root, "waves", "1", "runs"), "A1", "hang")
	done := h.payload(t, filepath.Join(root, "waves", "1", "runs"), "A2", "exit", "0")
	done.SessionName = "w1-A2"
	if err := os.MkdirAll(filepath.Dir(live.RunDir), 0o755); err != nil {
		t.Fatal(err)
	}
	h.start(t, live, done)
	waitRunning(t, live)
	h.waitDone(t, done.RunDir)
	obs, err := Adopt(context.Background(), h.b, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 2 {
		t.Fatalf("%d observations, want 2", len(obs))
	}
	if obs[0].RunID != live.RunID || obs[0].Verdict.State != StateRunning || len(obs[0].Verdict.Warnings) != 0 {
		t.Fatalf("live run: %+v", obs[0])
	}
	if obs[1].RunID != done.RunID || obs[1].Verdict.State != StateCompleted {
		t.Fatalf("finished run: %+v", obs[1])
	}
	if err := h.b.Terminate(context.Background(), live.RunDir, time.Second, false); err != nil {
		t.Fatal(err)
	}
	if v := h.waitDone(t, live.RunDir).Verdict; v.State != StateTerminated {
		t.Fatalf("after Terminate: %+v", v)
	}
}
