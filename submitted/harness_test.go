package submitted

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// testLane is a lane's queue whose launcher is a shell: each run's
// launcher is `sh -c 'eval "$2"' launcher <command> <script>`, so a test
// submits the script its launcher runs (a real process: it exits, writes
// to stderr, appends to the lane's event log, kills itself).
type testLane struct {
	t      *testing.T
	layout lanes.Layout
	q      Queue
	out    *syncBuf
	wg     sync.WaitGroup
}

func newTestLane(t *testing.T) *testLane {
	t.Helper()
	layout := lanes.New(t.TempDir(), ".wave", "p", "main")
	l := &testLane{t: t, layout: layout, q: Open(layout), out: &syncBuf{}}
	t.Cleanup(func() {
		l.wg.Wait() // t.Context() is cancelled before cleanups run
		if t.Failed() {
			t.Logf("watcher output:\n%s", l.out.String())
		}
	})
	return l
}

func (l *testLane) watcher() Watcher {
	return Watcher{Queue: l.q, Launcher: []string{"/bin/sh", "-c", `eval "$2"`, "launcher"}, Out: l.out, LaneEvery: 5 * time.Millisecond}
}

// startWatcher is Submit's startWatcher: the watcher runs in a goroutine
// instead of a tmux session.
func (l *testLane) startWatcher(context.Context) error {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		if err := l.watcher().Run(l.t.Context()); err != nil && l.t.Context().Err() == nil {
			l.t.Errorf("watcher: %v", err)
		}
	}()
	return nil
}

// submit queues a launch whose launcher runs script.
func (l *testLane) submit(script string) (*Run, bool) {
	l.t.Helper()
	r, busy, err := l.q.Submit(l.t.Context(), "launch", []string{script}, false, l.startWatcher)
	if err != nil {
		l.t.Fatalf("submit: %v", err)
	}
	return r, busy
}

// wait returns run id's record once it ended.
func (l *testLane) wait(id string) *Run {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(l.t.Context(), 30*time.Second)
	defer cancel()
	r, err := l.q.Wait(ctx, id)
	if err != nil {
		l.t.Fatalf("wait %s: %v (last record %+v)", id, err, r)
	}
	return r
}

func (l *testLane) read(id string) *Run {
	l.t.Helper()
	r, err := l.q.Read(id)
	if err != nil {
		l.t.Fatal(err)
	}
	return r
}

// appendEvent is a script line that appends ev to the lane's event log,
// as a launcher records a wave's end.
func (l *testLane) appendEvent(ev state.Event) string {
	b, err := json.Marshal(ev)
	if err != nil {
		l.t.Fatal(err)
	}
	return "printf '%s\\n' " + shq(string(b)) + " >> " + shq(l.layout.EventsPath())
}

// shq quotes s for the shell.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// eventually waits for cond, failing the test after 30 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
