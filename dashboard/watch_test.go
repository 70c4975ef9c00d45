package dashboard

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// waitFor polls cond every 10 ms until it holds or 5 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reading test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Watch sees changes everywhere a view reads from, including directories
// created after it started, and a state dir that did not exist yet.
func TestWatchSeesLaneChanges(t *testing.T) {
	state := filepath.Join(t.TempDir(), ".wave", "lanes", "main")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	changes := 0
	count := func() int { mu.Lock(); defer mu.Unlock(); return changes }
	done := make(chan error, 1)
	go func() {
		done <- Watch(ctx, state, 20*time.Millisecond, func() { mu.Lock(); changes++; mu.Unlock() })
	}()
	run := filepath.Join(state, "waves", "4", "runs", "A1-a1")
	brun := filepath.Join(state, "backlog", "20260314T120000Z-backlog")
	worker := filepath.Join(brun, "runs", "i15-a1")
	steps := []struct {
		name string
		do   func()
	}{
		{"state dir created", func() { os.RemoveAll(state); os.MkdirAll(state, 0o755) }},
		{"events appended", func() { write(t, filepath.Join(state, "events.jsonl"), "{}\n") }},
		{"run dir created", func() { os.RemoveAll(run); os.MkdirAll(run, 0o755) }},
		{"runtime record written", func() { write(t, filepath.Join(run, "runtime.json"), "{}") }},
		{"log appended", func() {
			f, err := os.OpenFile(filepath.Join(run, "agent.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("hello\n")
			f.Close()
		}},
		{"coordination posted", func() { write(t, filepath.Join(state, "waves", "4", "coordination.jsonl"), "{}\n") }},
		{"backlog run started", func() { write(t, filepath.Join(brun, "events.jsonl"), "{}\n") }},
		{"backlog event appended", func() { write(t, filepath.Join(brun, "events.jsonl"), "{}\n{}\n") }},
		{"worker run dir created", func() { os.RemoveAll(worker); os.MkdirAll(worker, 0o755) }},
		{"worker log written", func() { write(t, filepath.Join(worker, "agent.log"), "working\n") }},
	}
	for _, s := range steps {
		before := count()
		// The watch set grows as directories appear: repeat the change
		// until it is seen, so a create racing the watcher's Add is
		// retried rather than flaky.
		waitFor(t, s.name, func() bool {
			if count() > before {
				return true
			}
			s.do()
			return count() > before
		})
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Watch: %v", err)
	}
}

func TestWatchDirs(t *testing.T) {
	root := t.TempDir()
	st := filepath.Join(root, ".wave", "lanes", "main")
	if got := watchDirs(st); len(got) != 1 || got[0] != root {
		t.Errorf("missing state dir: watch %v, want [%s]", got, root)
	}
	os.MkdirAll(filepath.Join(st, "waves", "0", "runs", "A1-a1"), 0o755)
	os.MkdirAll(filepath.Join(st, "waves", "1"), 0o755)
	brun := filepath.Join(st, "backlog", "20260314T120000Z-backlog")
	os.MkdirAll(filepath.Join(brun, "runs", "i15-a1"), 0o755)
	got := strings.Join(watchDirs(st), "\n")
	for _, want := range []string{st, filepath.Join(st, "waves"), filepath.Join(st, "waves", "0", "runs", "A1-a1"), filepath.Join(st, "waves", "1"),
		filepath.Join(st, "backlog"), brun, filepath.Join(brun, "runs"), filepath.Join(brun, "runs", "i15-a1")} {
		if !strings.Contains(got+"\n", want+"\n") {
			t.Errorf("watch set lacks %s:\n%s", want, got)
		}
	}
}

func TestLogTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.log")
	write(t, path, "one\n\x1b[1mtwo\x1b[0m\nprogress 10%\rprogress 90%\rprogress 100%\n")
	got, err := LogTail(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "two|progress 100%" {
		t.Errorf("LogTail = %q", got)
	}
	big := strings.Repeat("x", 100) + "\n"
	write(t, path, strings.Repeat(big, 2000)+"last line\n")
	got, _ = LogTail(path, 3)
	if len(got) != 3 || got[2] != "last line" || got[0] != strings.Repeat("x", 100) {
		t.Errorf("LogTail of a big log = %q", got)
	}
	if _, err := LogTail(filepath.Join(t.TempDir(), "missing.log"), 3); err == nil || !strings.Contains(err.Error(), "missing.log") {
		t.Errorf("missing log error %v should name the file", err)
	}
}

func TestFollowLogCopiesAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.log")
	write(t, path, "old output\n")
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- FollowLog(ctx, path, &out, nil) }()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	waitFor(t, "appended line followed", func() bool {
		io.WriteString(f, "new line\n")
		return strings.Contains(out.String(), "new line")
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "old output") {
		t.Errorf("follow repeated output from before it started: %q", out.String())
	}
}

// When the runner rotates a capped agent.log, the follower finishes the
// old segment and goes on in the new file, losing and repeating nothing.
func TestFollowLogAcrossRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.log")
	write(t, path, "old output\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- FollowLog(ctx, path, &out, nil) }()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "first line followed", func() bool {
		io.WriteString(f, "x\n")
		return strings.Contains(out.String(), "x\n")
	})
	io.WriteString(f, "end of the first segment\n")
	f.Close()
	if err := os.Rename(path, path+".head"); err != nil {
		t.Fatal(err)
	}
	write(t, path, "[wave] agent.log rotated\r\nstart of the second\n")
	waitFor(t, "the new segment followed", func() bool {
		// Another event in the directory wakes the follower.
		write(t, path+".touch", "")
		return strings.Contains(out.String(), "start of the second")
	})
	cancel()
	<-done
	if got := out.String(); strings.Count(got, "end of the first segment") != 1 || strings.Count(got, "start of the second") != 1 {
		t.Fatalf("followed %q", got)
	}
}

func TestFollowLogStopsWhenRunFinishes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.log")
	write(t, path, "old output\n")
	record := filepath.Join(dir, "runtime.json")
	finished := func() bool {
		b, _ := os.ReadFile(record)
		return strings.Contains(string(b), "completed")
	}
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- FollowLog(context.Background(), path, &out, finished) }()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	waitFor(t, "appended line followed", func() bool {
		io.WriteString(f, "working\n")
		return strings.Contains(out.String(), "working")
	})
	// The runner's order: last log line, then the terminal record.
	io.WriteString(f, "last line\n")
	write(t, record, `{"terminalDisposition":"completed"}`)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("FollowLog kept following a finished run")
	}
	if !strings.HasSuffix(out.String(), "last line\n") {
		t.Fatalf("output %q lacks the line written before the run finished", out.String())
	}
}

func TestFollowLogOfFinishedRunReturns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.log")
	write(t, path, "all done\n")
	var out syncBuffer
	if err := FollowLog(context.Background(), path, &out, func() bool { return true }); err != nil {
		t.Fatal(err)
	}
	if out.String() != "" {
		t.Fatalf("follow repeated output from before it started: %q", out.String())
	}
}

func TestFindAgent(t *testing.T) {
	l := runningLane()
	w2 := closureLane().Waves[0]
	w2.Wave = 4
	l.Waves = append(l.Waves, w2) // A1 in waves 3 and 4; A3 only in 3
	tests := []struct {
		id         string
		wave, want int
		err        string
	}{
		{"A1", -1, 4, ""},
		{"A1", 3, 3, ""},
		{"A3", -1, 3, ""},
		{"A3", 4, 0, `agent "A3" is not in wave 4 of lane main`},
		{"A1", 9, 0, "wave 9 has not run on lane main"},
		{"Z9", -1, 0, `agent "Z9" has not run on lane main`},
	}
	for _, tt := range tests {
		w, a, err := FindAgent(l, tt.id, tt.wave)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("FindAgent(%s, %d) error %v, want %q", tt.id, tt.wave, err, tt.err)
			}
			continue
		}
		if err != nil || w.Wave != tt.want || a.ID != tt.id {
			t.Errorf("FindAgent(%s, %d) = wave %d agent %s, %v; want wave %d", tt.id, tt.wave, w.Wave, a.ID, err, tt.want)
		}
	}
}

func TestInsideLaneTmux(t *testing.T) {
	tests := []struct {
		env, socket string
		want        bool
	}{
		{"", "wave-x-main-1", false},
		{"/tmp/tmux-1000/default,123,0", "wave-x-main-1", false},
		{"/tmp/tmux-1000/wave-x-main-1,123,4", "wave-x-main-1", true},
		{"/tmp/tmux-1000/wave-x-main-10,123,4", "wave-x-main-1", false},
	}
	for _, tt := range tests {
		if got := InsideLaneTmux(tt.env, tt.socket); got != tt.want {
			t.Errorf("InsideLaneTmux(%q, %q) = %v", tt.env, tt.socket, got)
		}
	}
}

// The live view: shown from the real loader, refreshed by a change on
// disk, and stopped cleanly when its context ends (as on SIGTERM).
func TestRunRefreshesAndStopsOnCancel(t *testing.T) {
	layout := lanes.New(t.TempDir(), ".wave", "demo", "main")
	appendEv := func(agent string) {
		ev := state.NewEvent("main", 1, state.EntityAgentRun, agent, "started", 1,
			state.Data(state.AgentRunData{AgentID: agent, SessionName: lanes.SessionName(1, agent)}))
		if err := state.Append(layout.EventsPath(), ev); err != nil {
			t.Fatal(err)
		}
	}
	ev := state.NewEvent("main", 1, state.EntityWaveRun, "wave-1", "started", 0,
		state.Data(state.WaveStarted{Agents: []state.AgentInfo{{ID: "A1", Title: "first"}}}))
	if err := state.Append(layout.EventsPath(), ev); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Wave: -1, StateDir: layout.StateDir, Load: func(ctx context.Context) (state.Lane, error) {
		return state.Load(layout, nil, nil, time.Now())
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inR, inW := io.Pipe()
	defer inW.Close()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, inR, &out) }()
	waitFor(t, "first frame", func() bool { return strings.Contains(out.String(), "A1") })
	appendEv("B7")
	waitFor(t, "frame with B7 after the event", func() bool { return strings.Contains(out.String(), "B7") })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel: %v, want a clean exit", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop after its context ended")
	}
}

// Caught between a rotation's rename and the new segment, the follower
// keeps the old segment's place, so the rest of it is not lost.
func TestFollowLogKeepsItsPlaceWhileTheLogIsAbsent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.log")
	off, ino, err := copyFrom(path, 42, 7, io.Discard)
	if err != nil || off != 42 || ino != 7 {
		t.Fatalf("copyFrom of an absent log = %d, %d, %v; want 42, 7 kept", off, ino, err)
	}
}
