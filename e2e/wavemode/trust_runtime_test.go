package wavemode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// runRecord is what these tests read of a runtime.json.
type runRecord struct {
	TerminalDisposition string `json:"terminalDisposition"`
	SessionLost         bool   `json:"sessionLost"`
}

func readRunRecord(path string) (runRecord, bool) {
	var rec runRecord
	b, err := os.ReadFile(path)
	return rec, err == nil && json.Unmarshal(b, &rec) == nil
}

// agentActions lists the agent_run actions of one agent, in order.
func agentActions(evs []state.Event, id string) []state.Event {
	var out []state.Event
	for _, ev := range evs {
		if got, _ := ev.Data["agentId"].(string); ev.EntityType == state.EntityAgentRun && got == id {
			out = append(out, ev)
		}
	}
	return out
}

// tmux kill-session on a running agent takes its pane only: the agent
// finishes, its result passes the gate, and the wave completes without a
// retry.
func TestKillSessionKeepsTheAgent(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 3s"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	ctx := e2etest.Context(t)
	cmd := r.Command(ctx, "launch", "--lane", "main", "--no-dashboard")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	recPath := filepath.Join(r.Layout().RunDir(0, "A1", 1), lanes.RuntimeFile)
	e2etest.WaitFor(t, "A1 running", 30*time.Second, func() bool {
		rec, ok := readRunRecord(recPath)
		return ok && rec.TerminalDisposition == "running"
	})
	tm := tmuxadapter.New(r.Layout().Socket())
	if err := tm.KillSession(ctx, lanes.SessionName(0, "A1")); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if err != nil {
		t.Fatalf("launch: %v\n%s", err, out.String())
	}
	rec, _ := readRunRecord(recPath)
	if !rec.SessionLost || rec.TerminalDisposition != "completed" {
		t.Fatalf("A1 record %+v", rec)
	}
	if launched, _ := e2etest.AgentStarts(r.Events()); launched["A1"] != 1 {
		t.Fatalf("A1 launched %d times, want once\n%s", launched["A1"], out.String())
	}
}

// A launcher dies; the records of a run it started turn to garbage. The
// next launch adopts the run, classifies it lost naming the file, retries
// the agent and completes the wave instead of waiting for the deadline.
func TestAdoptedRunWithCorruptRecordsIsRetried(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 2s"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	ctx := e2etest.Context(t)
	first := r.Command(ctx, "launch", "--lane", "main", "--no-dashboard")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	dir := r.Layout().RunDir(0, "A1", 1)
	e2etest.WaitFor(t, "A1 running", 30*time.Second, func() bool {
		rec, ok := readRunRecord(filepath.Join(dir, lanes.RuntimeFile))
		return ok && rec.TerminalDisposition == "running"
	})
	_ = first.Process.Signal(syscall.SIGKILL)
	_ = first.Wait()
	e2etest.WaitTerminal(t, filepath.Join(dir, lanes.RuntimeFile))
	old := time.Now().Add(-time.Hour)
	for _, f := range []string{lanes.RuntimeFile, lanes.StatusFile} {
		p := filepath.Join(dir, f)
		if err := os.WriteFile(p, []byte("{\"garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	res := e2etest.Launch(t, r)
	if res.Code != 0 {
		t.Fatalf("relaunch exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	evs := r.Events()
	launched, adopted := e2etest.AgentStarts(evs)
	if launched["A1"] != 2 || adopted["A1"] != 1 {
		t.Fatalf("A1 launched %d adopted %d; want a launch, an adoption and a retry", launched["A1"], adopted["A1"])
	}
	lost := false
	for _, ev := range agentActions(evs, "A1") {
		d, _ := ev.Data["detail"].(string)
		lost = lost || ev.Action == state.AgentLost && strings.Contains(d, "corrupt record") && strings.Contains(d, lanes.RuntimeFile)
	}
	if !lost {
		t.Fatalf("no lost event naming the corrupt record: %+v", agentActions(evs, "A1"))
	}
}

// An agent that goes silent for runtime.silenceSeconds is stopped,
// recorded stalled, retried like a failure, and shown stalled by status.
func TestSilentAgentIsStalledAndRetried(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.Write("wave.config.yaml", strings.Replace(e2etest.Config, "runtime:\n", "runtime:\n  silenceSeconds: 1\n", 1))
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 60s"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r)
	if res.Code == 0 {
		t.Fatalf("launch passed with an agent that never finishes\n%s", res.Stdout)
	}
	stalls := 0
	for _, ev := range agentActions(r.Events(), "A1") {
		if code, _ := ev.Data["statusCode"].(string); ev.Action == state.AgentStalled && code == "stalled" {
			stalls++
		}
	}
	if stalls != 2 {
		t.Fatalf("A1 stalled %d times, want 2 (first attempt and its retry)\n%s", stalls, res.Stdout)
	}
	st := r.Run(context.Background(), "status", "--lane", "main", "--json")
	var lane state.Lane
	if err := json.Unmarshal([]byte(st.Stdout), &lane); err != nil || len(lane.Waves) == 0 {
		t.Fatalf("status --json: %v\n%s", err, st.Stdout)
	}
	for _, a := range lane.Waves[0].Agents {
		if a.ID == "A1" && a.State != state.AgentStalled {
			t.Fatalf("status shows A1 %q, want stalled", a.State)
		}
	}
	if text := r.Run(context.Background(), "status", "--lane", "main"); !strings.Contains(text.Stdout, "stalled") {
		t.Fatalf("status text lacks stalled:\n%s", text.Stdout)
	}
}
