package state

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

var t0 = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

// script builds events one second apart.
type script struct {
	evs []Event
	at  time.Time
}

func (s *script) add(entity, action string, attempt int, data any) *script {
	if s.at.IsZero() {
		s.at = t0
	}
	ev := NewEvent("main", 0, entity, "x", action, attempt, Data(data))
	ev.RecordedAt = s.at
	s.at = s.at.Add(time.Second)
	s.evs = append(s.evs, ev)
	return s
}

func started(agents ...string) WaveStarted {
	w := WaveStarted{File: "docs/plans/waves/wave-0.md", MaxAttempts: 2,
		Closure: []Stage{{Phase: "integrating", Agents: []string{"A8"}}, {Phase: "cont-qa-closure", Agents: []string{"A0"}}}}
	for _, a := range agents {
		w.Agents = append(w.Agents, AgentInfo{ID: a, Title: "t " + a, Role: "implementation", Executor: "local"})
	}
	return w
}

func code(n int) *int { return &n }

func agentStates(w Wave) map[string]string {
	m := map[string]string{}
	for _, a := range w.Agents {
		m[a.ID] = a.State
	}
	return m
}

func TestReduce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events *script
		runs   map[string]RunFacts
		status string
		phase  string
		agents map[string]string
		stages []string
	}{
		{
			name:   "pending agents listed from the start event",
			events: new(script).add(EntityWaveRun, "started", 0, started("A1", "A2", "A8", "A0")),
			status: WaveRunning, phase: "implementation",
			agents: map[string]string{"A1": AgentPending, "A2": AgentPending, "A8": AgentPending, "A0": AgentPending},
			stages: []string{"pending", "pending"},
		},
		{
			name: "running record overlays a launched agent; finished ones keep their outcome",
			events: new(script).add(EntityWaveRun, "started", 0, started("A1", "A2")).
				add(EntityAttempt, "running", 1, map[string]any{"phase": "implementation"}).
				add(EntityAgentRun, "started", 1, AgentRunData{AgentID: "A1", RunDir: "/r/A1-a1"}).
				add(EntityAgentRun, "started", 1, AgentRunData{AgentID: "A2", RunDir: "/r/A2-a1"}).
				add(EntityAgentRun, AgentFailed, 1, AgentRunData{AgentID: "A2", ExitCode: code(3), StatusCode: "3"}),
			runs:   map[string]RunFacts{"/r/A1-a1": {Disposition: "running", LastHeartbeatAt: ptr(t0.Add(3 * time.Second))}},
			status: WaveRunning, phase: "implementation",
			agents: map[string]string{"A1": AgentRunning, "A2": AgentFailed},
		},
		{
			name: "a terminal record beats a launcher that died before recording it",
			events: new(script).add(EntityWaveRun, "started", 0, started("A1")).
				add(EntityAgentRun, "started", 1, AgentRunData{AgentID: "A1", RunDir: "/r/A1-a1"}),
			runs:   map[string]RunFacts{"/r/A1-a1": {Disposition: "completed", ExitCode: code(0)}},
			status: WaveRunning, phase: "implementation",
			agents: map[string]string{"A1": AgentCompleted},
		},
		{
			name: "a dead runner without a terminal record is lost",
			events: new(script).add(EntityWaveRun, "started", 0, started("A1")).
				add(EntityAgentRun, "started", 1, AgentRunData{AgentID: "A1", RunDir: "/r/A1-a1"}),
			runs:   map[string]RunFacts{"/r/A1-a1": {Disposition: "running", Lost: true}},
			status: WaveRunning, phase: "implementation",
			agents: map[string]string{"A1": AgentLost},
		},
		{
			name: "a stalled record ends an agent the launcher did not finish",
			events: new(script).add(EntityWaveRun, "started", 0, started("A1")).
				add(EntityAgentRun, "started", 1, AgentRunData{AgentID: "A1", RunDir: "/r/A1-a1"}),
			runs:   map[string]RunFacts{"/r/A1-a1": {Disposition: AgentStalled, ExitCode: code(143), Signal: "SIGTERM"}},
			status: WaveRunning, phase: "implementation",
			agents: map[string]string{"A1": AgentStalled},
		},
		{
			name: "closure stages move in order and the wave completes",
			events: new(script).add(EntityWaveRun, "started", 0, started("A1", "A8", "A0")).
				add(EntityAgentRun, AgentReused, 0, AgentRunData{AgentID: "A1", ExitCode: code(0)}).
				add(EntityClosure, StageRunning, 1, map[string]any{"phase": "integrating"}).
				add(EntityClosure, StagePassed, 1, map[string]any{"phase": "integrating"}).
				add(EntityClosure, StageRunning, 1, map[string]any{"phase": "cont-qa-closure"}).
				add(EntityClosure, StagePassed, 1, map[string]any{"phase": "cont-qa-closure"}).
				add(EntityWaveRun, WaveCompleted, 1, nil),
			status: WaveCompleted, phase: "completed",
			agents: map[string]string{"A1": AgentReused, "A8": AgentPending, "A0": AgentPending},
			stages: []string{"passed", "passed"},
		},
		{
			name: "a new wave run resets the previous run's state",
			events: new(script).add(EntityWaveRun, "started", 0, started("A1")).
				add(EntityAgentRun, AgentFailed, 1, AgentRunData{AgentID: "A1", StatusCode: "1"}).
				add(EntityWaveRun, WaveFailed, 1, map[string]any{"failures": []Failure{{AgentID: "A1", StatusCode: "1"}}}).
				add(EntityWaveRun, "started", 0, started("A1")),
			status: WaveRunning, phase: "implementation",
			agents: map[string]string{"A1": AgentPending},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := Reduce(tc.events.evs, tc.runs, nil, t0.Add(time.Minute))
			if len(ws) != 1 {
				t.Fatalf("%d waves", len(ws))
			}
			w := ws[0]
			if w.Status != tc.status || w.Phase != tc.phase {
				t.Fatalf("status %q phase %q, want %q %q", w.Status, w.Phase, tc.status, tc.phase)
			}
			if got := agentStates(w); !mapsEqual(got, tc.agents) {
				t.Fatalf("agents %v, want %v", got, tc.agents)
			}
			if tc.stages != nil {
				var got []string
				for _, s := range w.Closure {
					got = append(got, s.State)
				}
				if !slices.Equal(got, tc.stages) {
					t.Fatalf("stages %v, want %v", got, tc.stages)
				}
			}
			if w.Failures == nil || w.Blockers == nil {
				t.Fatal("failures and blockers must be arrays, never null")
			}
		})
	}
}

func TestReduceHeartbeatAgeAndFailures(t *testing.T) {
	s := new(script).add(EntityWaveRun, "started", 0, started("A1")).
		add(EntityAgentRun, "started", 1, AgentRunData{AgentID: "A1", RunDir: "/r/A1-a1"}).
		add(EntityGate, "evaluated", 1, map[string]any{"phase": "implementation", "ok": false,
			"failures": []Failure{{AgentID: "A1", Gate: "implementationGate", StatusCode: "missing-wave-proof"}}})
	hb := t0.Add(10 * time.Second)
	ws := Reduce(s.evs, map[string]RunFacts{"/r/A1-a1": {Disposition: "running", LastHeartbeatAt: &hb}}, nil, t0.Add(12*time.Second))
	a := ws[0].Agents[0]
	if a.HeartbeatAgeMs == nil || *a.HeartbeatAgeMs != 2000 {
		t.Fatalf("heartbeat age %v, want 2000", a.HeartbeatAgeMs)
	}
	if f := ws[0].Failures; len(f) != 1 || f[0].StatusCode != "missing-wave-proof" {
		t.Fatalf("failures %+v", f)
	}
}

// A running agent shows how long it has been silent and why its session
// is gone; a lost one says why it was lost.
func TestReduceOutputAgeWarningsAndLostReason(t *testing.T) {
	s := new(script).add(EntityWaveRun, "started", 0, started("A1", "A2")).
		add(EntityAgentRun, "started", 1, AgentRunData{AgentID: "A1", RunDir: "/r/A1-a1"}).
		add(EntityAgentRun, "started", 1, AgentRunData{AgentID: "A2", RunDir: "/r/A2-a1"})
	hb, out := t0.Add(10*time.Second), t0.Add(2*time.Second)
	runs := map[string]RunFacts{
		"/r/A1-a1": {Disposition: "running", LastHeartbeatAt: &hb, LastOutputAt: &out, Warnings: []string{"tmux session w1-A1 was lost"}},
		"/r/A2-a1": {Lost: true, Reason: "corrupt record: runtime.json: unreadable"},
	}
	ws := Reduce(s.evs, runs, nil, t0.Add(12*time.Second))
	a1, a2 := ws[0].Agents[0], ws[0].Agents[1]
	if a1.OutputAgeMs == nil || *a1.OutputAgeMs != 10000 || a1.Detail != "tmux session w1-A1 was lost" {
		t.Fatalf("A1 %+v", a1)
	}
	if a2.State != AgentLost || a2.Detail != "corrupt record: runtime.json: unreadable" {
		t.Fatalf("A2 %+v", a2)
	}
}

func TestLoadReportsCorruptEventsAndKeepsGoing(t *testing.T) {
	l := lanes.New(t.TempDir(), ".wave", "p", "main")
	ev := NewEvent("main", 0, EntityWaveRun, "wave-0", "started", 0, Data(started("A1")))
	if err := Append(l.EventsPath(), ev); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, l.EventsPath(), "{\"torn\":")
	got, err := Load(l, nil, func(int) []Blocker { return []Blocker{{ID: "b1", Kind: "blocker"}} }, t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Waves) != 1 || len(got.Problems) != 1 || got.Problems[0] != "unreadable event line "+l.EventsPath()+":2" {
		t.Fatalf("waves %d problems %v", len(got.Waves), got.Problems)
	}
	if len(got.Waves[0].Blockers) != 1 {
		t.Fatalf("blockers %v", got.Waves[0].Blockers)
	}
	if got.Socket != l.Socket() || filepath.Base(got.Socket) == "" {
		t.Fatalf("socket %q", got.Socket)
	}
}

func ptr[T any](v T) *T { return &v }

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// The log rotates only when a wave run starts, and readers see both
// generations, so an open wave run is never split from its start event.
func TestEventsRotateAtWaveRunStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	pad := NewEvent("main", 0, EntityAgentRun, "x", "started", 1, map[string]any{"pad": string(make([]byte, 1<<20))})
	for range 9 {
		if err := Append(path, pad); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path + ".1"); !os.IsNotExist(err) {
		t.Fatal("rotated in the middle of a wave run")
	}
	if err := Append(path, NewEvent("main", 1, EntityWaveRun, "wave-1", "started", 0, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".1"); err != nil {
		t.Fatalf("no rotation at a wave run start past the limit: %v", err)
	}
	evs, bad, err := ReadEvents(path)
	if err != nil || len(bad) != 0 || len(evs) != 10 || evs[9].EntityType != EntityWaveRun {
		t.Fatalf("read %d events, bad %v, err %v", len(evs), bad, err)
	}
}

// A kubernetes run shows its pod, not the tmux session name its start
// event carried.
func TestReduceKubernetesRunShowsItsPod(t *testing.T) {
	s := new(script).add(EntityWaveRun, "started", 0, started("A1")).
		add(EntityAgentRun, "started", 1, AgentRunData{AgentID: "A1", RunDir: "/r/A1-a1", SessionName: "w0-A1"})
	runs := map[string]RunFacts{"/r/A1-a1": {Disposition: "running", Backend: BackendKubernetes, Pod: "agents/wave-w0-a1-a1-x-abcde"}}
	a := Reduce(s.evs, runs, nil, t0)[0].Agents[0]
	if a.Backend != BackendKubernetes || a.Pod != "agents/wave-w0-a1-a1-x-abcde" || a.SessionName != "" || a.State != AgentRunning {
		t.Fatalf("A1 %+v", a)
	}
}

func TestAgentRunEventsReduceAsTheirTypedData(t *testing.T) {
	code := 3
	for _, want := range []AgentRunData{
		{AgentID: "A1", SessionName: "w0-A1", Executor: "local", RunDir: "/r/A1-a1", LogPath: "/r/A1-a1/agent.log"},
		{AgentID: "A2", ExitCode: &code, Signal: "SIGTERM", StatusCode: "143", Detail: "killed"},
		{AgentID: "A3"},
	} {
		got := agentRunFields(Data(want))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("agentRunFields(Data(%+v)) = %+v", want, got)
		}
	}
}

// A wave run again lists its agents afresh: the events of the new run
// land on the new run's agents, an agent the list lacks is added once, and
// later events find it.
func TestAgentEventsFollowTheWavesLatestRun(t *testing.T) {
	run := func(agent, action string) map[string]any {
		return Data(AgentRunData{AgentID: agent, RunDir: "runs/" + agent + "-" + action})
	}
	s := &script{}
	s.add(EntityWaveRun, "started", 1, started("A1", "A2"))
	s.add(EntityAgentRun, "started", 1, run("A1", "started"))
	s.add(EntityAgentRun, AgentFailed, 1, run("A1", "failed"))
	s.add(EntityWaveRun, WaveFailed, 1, nil)
	s.add(EntityWaveRun, "started", 2, started("A2", "A1"))
	s.add(EntityAgentRun, "started", 2, run("A1", "started"))
	s.add(EntityAgentRun, "started", 2, run("A9", "started"))
	s.add(EntityAgentRun, AgentCompleted, 2, run("A9", "completed"))
	s.add(EntityAgentRun, AgentCompleted, 2, run("A1", "completed"))
	w := Reduce(s.evs, nil, nil, t0)[0]
	var ids []string
	for _, a := range w.Agents {
		ids = append(ids, a.ID)
	}
	if want := []string{"A2", "A1", "A9"}; !slices.Equal(ids, want) {
		t.Fatalf("agents %v, want %v", ids, want)
	}
	if got, want := agentStates(w), map[string]string{"A2": AgentPending, "A1": AgentCompleted, "A9": AgentCompleted}; !mapsEqual(got, want) {
		t.Fatalf("states %v, want %v", got, want)
	}
}

// BenchmarkFoldOf2000Agents is the reducer over one wave of 2000 agents,
// each started and finished: the lane status --json reads at its largest
// budgeted size (bench/README.md).
func BenchmarkFoldOf2000Agents(b *testing.B) {
	var ids []string
	for i := range 2000 {
		ids = append(ids, fmt.Sprintf("A%d", i))
	}
	s := &script{}
	s.add(EntityWaveRun, "started", 1, started(ids...))
	for _, id := range ids {
		s.add(EntityAgentRun, "started", 1, AgentRunData{AgentID: id, RunDir: "runs/" + id})
		s.add(EntityAgentRun, AgentCompleted, 1, AgentRunData{AgentID: id, RunDir: "runs/" + id, ExitCode: code(0)})
	}
	for b.Loop() {
		FoldEvents(s.evs)
	}
}
