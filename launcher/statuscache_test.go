package launcher

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// cacheLane is a lane on disk with finished and unfinished runs for the
// status cache's tests: real event log, runtime records and logs.
type cacheLane struct {
	t      testing.TB
	layout lanes.Layout
	t0     time.Time
}

func newCacheLane(t *testing.T) *cacheLane {
	l := &cacheLane{t: t, layout: lanes.New(t.TempDir(), "", "p", "main"), t0: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	var agents []state.AgentInfo
	for i := 1; i <= 5; i++ {
		agents = append(agents, state.AgentInfo{ID: fmt.Sprintf("A%d", i), Title: "part", Role: "implementation", Executor: "local"})
	}
	l.event(0, state.EntityWaveRun, "wave-0", "started", 1, state.Data(state.WaveStarted{File: "w0.md", MaxAttempts: 2, Agents: agents}))
	for i := 1; i <= 4; i++ {
		l.start(fmt.Sprintf("A%d", i))
		l.finish(fmt.Sprintf("A%d", i), 0)
	}
	l.start("A5") // launched: no runtime record yet
	return l
}

func (l *cacheLane) event(wave int, entity, id, action string, attempt int, data map[string]any) {
	ev := state.NewEvent("main", wave, entity, id, action, attempt, data)
	l.t0 = l.t0.Add(time.Second)
	ev.RecordedAt = l.t0
	if err := state.Append(l.layout.EventsPath(), ev); err != nil {
		l.t.Fatal(err)
	}
}

func (l *cacheLane) start(agent string) {
	dir := l.layout.RunDir(0, agent, 1)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		l.t.Fatal(err)
	}
	l.event(0, state.EntityAgentRun, agent, "started", 1, state.Data(state.AgentRunData{AgentID: agent,
		SessionName: "w0-" + agent, RunDir: dir, LogPath: filepath.Join(dir, lanes.LogFile)}))
}

// finish writes the run's terminal record and log and its event.
func (l *cacheLane) finish(agent string, code int) {
	l.record(agent, code)
	action := state.AgentCompleted
	if code != 0 {
		action = state.AgentFailed
	}
	l.event(0, state.EntityAgentRun, agent, action, 1, state.Data(state.AgentRunData{AgentID: agent, ExitCode: &code}))
}

func (l *cacheLane) record(agent string, code int) {
	dir := l.layout.RunDir(0, agent, 1)
	disp := runtime.Completed
	if code != 0 {
		disp = runtime.Failed
	}
	start, end := l.t0, l.t0.Add(time.Second)
	rec := runtime.Record{SchemaVersion: 1, RunID: "w0-" + agent + "-a1", Lane: "main", Attempt: 1, AgentID: agent,
		ExecutorID: "local", SessionBackend: runtime.BackendTmux, SessionName: "w0-" + agent, StartedAt: start,
		LastHeartbeatAt: end, TerminalDisposition: disp, ExitCode: &code, FinishedAt: &end}
	if err := jsonfile.Write(filepath.Join(dir, lanes.RuntimeFile), rec); err != nil {
		l.t.Fatal(err)
	}
	marker := fmt.Sprintf("[wave-phase] %s exited %d\n", agent, code)
	if err := os.WriteFile(filepath.Join(dir, lanes.LogFile), []byte(marker), 0o644); err != nil {
		l.t.Fatal(err)
	}
}

// status is `status --json`'s answer as of now, the clock taken out.
func (l *cacheLane) status() string {
	l.t.Helper()
	s, err := Status(context.Background(), l.layout)
	if err != nil {
		l.t.Fatal(err)
	}
	s.GeneratedAt = time.Time{}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		l.t.Fatal(err)
	}
	return string(b)
}

// uncached is the answer with no cache, the cache left as it was.
func (l *cacheLane) uncached() string {
	l.t.Helper()
	path := l.layout.StatusCachePath()
	kept, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		l.t.Fatal(err)
	}
	os.Remove(path)
	out := l.status()
	if kept != nil {
		if err := os.WriteFile(path, kept, 0o644); err != nil {
			l.t.Fatal(err)
		}
	} else {
		os.Remove(path)
	}
	return out
}

func (l *cacheLane) writeCache(b []byte) {
	if err := os.MkdirAll(filepath.Dir(l.layout.StatusCachePath()), 0o755); err != nil {
		l.t.Fatal(err)
	}
	if err := os.WriteFile(l.layout.StatusCachePath(), b, 0o644); err != nil {
		l.t.Fatal(err)
	}
}

// The status cache is an optimisation only: whatever state it is in and
// whatever changed since it was written, status answers what it answers
// without one.
func TestStatusAnswersTheSameWhateverTheCache(t *testing.T) {
	cases := []struct {
		name   string
		change func(l *cacheLane) // after a status wrote the cache
	}{
		{"no cache", func(l *cacheLane) { os.Remove(l.layout.StatusCachePath()) }},
		{"fresh cache", func(*cacheLane) {}},
		{"events appended", func(l *cacheLane) {
			l.event(0, state.EntityClosure, "c", state.StageRunning, 1, map[string]any{"phase": "integrating"})
			l.event(0, state.EntityGate, "g", "failed", 1, map[string]any{"phase": "integrating", "ok": false,
				"failures": []map[string]any{{"agentId": "A1", "gate": "g", "statusCode": "x", "detail": "d"}}})
		}},
		{"a run finished since", func(l *cacheLane) { l.record("A5", 3) }},
		{"a run finished since, and its event", func(l *cacheLane) { l.finish("A5", 0) }},
		{"a finished run's record rewritten", func(l *cacheLane) { l.record("A2", 7) }},
		{"a finished run's directory gone", func(l *cacheLane) {
			os.RemoveAll(l.layout.RunDir(0, "A3", 1))
		}},
		{"log truncated", func(l *cacheLane) {
			b, _ := os.ReadFile(l.layout.EventsPath())
			cut := bytes.LastIndexByte(b[:len(b)-1], '\n')
			os.WriteFile(l.layout.EventsPath(), b[:cut+1], 0o644)
		}},
		{"log rewritten in place, as long", func(l *cacheLane) {
			b, _ := os.ReadFile(l.layout.EventsPath())
			f, _ := os.OpenFile(l.layout.EventsPath(), os.O_WRONLY, 0)
			f.WriteAt(bytes.ReplaceAll(b, []byte(`"A4"`), []byte(`"B4"`)), 0)
			f.Close()
		}},
		{"log rotated", func(l *cacheLane) {
			os.Rename(l.layout.EventsPath(), l.layout.EventsPath()+".1")
			l.event(1, state.EntityWaveRun, "wave-1", "started", 1, state.Data(state.WaveStarted{File: "w1.md", MaxAttempts: 1}))
		}},
		{"a line being written", func(l *cacheLane) {
			f, _ := os.OpenFile(l.layout.EventsPath(), os.O_WRONLY|os.O_APPEND, 0)
			f.WriteString(`{"recordVersion":1,"wave":0,"entityType":"closure","action":"run`)
			if got, want := l.status(), l.uncached(); got != want {
				t.Errorf("status while a line is half written:\n%s\nwithout the cache:\n%s", got, want)
			}
			f.WriteString(`ning","recordedAt":"2026-03-01T13:00:00Z","data":{"phase":"integrating"}}` + "\n")
			f.Close()
		}},
		{"a corrupt line", func(l *cacheLane) {
			f, _ := os.OpenFile(l.layout.EventsPath(), os.O_WRONLY|os.O_APPEND, 0)
			f.WriteString("{not json\n")
			f.Close()
			l.event(0, state.EntityWaveRun, "wave-0", state.WaveFailed, 1, nil)
		}},
		{"corrupt cache file", func(l *cacheLane) { l.writeCache([]byte("{\"h\":{\"version\":1,")) }},
		{"cache cut short", func(l *cacheLane) {
			b, _ := os.ReadFile(l.layout.StatusCachePath())
			l.writeCache(b[:len(b)/2])
		}},
		{"cache from another version", func(l *cacheLane) {
			b, _ := os.ReadFile(l.layout.StatusCachePath())
			l.writeCache(bytes.Replace(b, []byte(`"version":1`), []byte(`"version":99`), 1))
		}},
		{"cache written by another build", func(l *cacheLane) {
			b, _ := os.ReadFile(l.layout.StatusCachePath())
			l.writeCache(bytes.Replace(b, []byte(`"program":"`), []byte(`"program":"another build `), 1))
		}},
		{"cache of another lane's files", func(l *cacheLane) {
			other := newCacheLane(t)
			other.finish("A5", 1)
			other.status()
			b, _ := os.ReadFile(other.layout.StatusCachePath())
			l.writeCache(b)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newCacheLane(t)
			l.status() // writes the cache
			if _, err := os.Stat(l.layout.StatusCachePath()); err != nil {
				t.Fatalf("status wrote no cache: %v", err)
			}
			tc.change(l)
			for i := range 2 { // the cache as the change left it, then as status rewrote it
				if got, want := l.status(), l.uncached(); got != want {
					t.Fatalf("read %d: status with the cache:\n%s\nwithout:\n%s", i+1, got, want)
				}
			}
		})
	}
}

// A status of a lane with no state dir makes none (no cache written).
func TestStatusOfAnEmptyLaneWritesNoCache(t *testing.T) {
	layout := lanes.New(t.TempDir(), "", "p", "main")
	if _, err := Status(context.Background(), layout); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(layout.StateDir); !os.IsNotExist(err) {
		t.Fatalf("status of a lane never launched made %s (%v)", layout.StateDir, err)
	}
}

// Statuses at once with a launcher appending never leave a cache that
// answers wrong.
func TestConcurrentStatusesLeaveACacheThatAnswersRight(t *testing.T) {
	l := newCacheLane(t)
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := Status(context.Background(), l.layout); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := range 40 {
		l.event(0, state.EntityAttempt, "a", "running", 1+i%2, map[string]any{"phase": fmt.Sprintf("p%d", i)})
	}
	l.finish("A5", 0)
	close(done)
	wg.Wait()
	if got, want := l.status(), l.uncached(); got != want {
		t.Fatalf("status with the cache the racers left:\n%s\nwithout:\n%s", got, want)
	}
}

// BenchmarkStatusOf200Runs is Status on a finished lane of 200 runs, with
// the cache status keeps and without it:
//
//	go test ./launcher -run X -bench StatusOf200Runs -cpuprofile cpu.out
func BenchmarkStatusOf200Runs(b *testing.B) {
	l := &cacheLane{t: b, layout: lanes.New(b.TempDir(), "", "p", "main"), t0: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	var agents []state.AgentInfo
	for i := range 200 {
		agents = append(agents, state.AgentInfo{ID: fmt.Sprintf("A%d", i), Title: "part", Role: "implementation", Executor: "local"})
	}
	l.event(0, state.EntityWaveRun, "wave-0", "started", 1, state.Data(state.WaveStarted{File: "w0.md", MaxAttempts: 2, Agents: agents}))
	for _, a := range agents {
		l.start(a.ID)
		l.finish(a.ID, 0)
	}
	l.event(0, state.EntityWaveRun, "wave-0", state.WaveCompleted, 1, nil)
	for _, cache := range []string{"unchanged", "event appended", "none"} {
		b.Run("cache="+cache, func(b *testing.B) {
			for b.Loop() {
				switch cache {
				case "event appended": // a live lane: the cache rewritten every time
					l.event(0, state.EntityAttempt, "a", "running", 1, map[string]any{"phase": "integrating"})
				case "none":
					os.Remove(l.layout.StatusCachePath())
				}
				if _, err := Status(context.Background(), l.layout); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
