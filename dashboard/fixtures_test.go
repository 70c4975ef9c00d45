package dashboard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// clock is the fixed "now" of every golden frame.
var clock = time.Date(2026, 3, 14, 12, 30, 0, 0, time.UTC)

func at(d time.Duration) *time.Time { t := clock.Add(-d); return &t }
func ms(d time.Duration) *int64     { v := d.Milliseconds(); return &v }
func code(n int) *int               { return &n }

func agent(id, title, role, st string, started time.Duration) state.Agent {
	return state.Agent{ID: id, Title: title, Role: role, Executor: "claude", State: st, Attempt: 1,
		StartedAt: at(started), SessionName: "w3-" + id,
		RunDir: "/repo/.wave/lanes/main/waves/3/runs/" + id + "-a1", LogPath: "/repo/.wave/lanes/main/waves/3/runs/" + id + "-a1/agent.log"}
}

func closure(states ...string) []state.Stage {
	phases := []struct{ phase, agent string }{
		{"cont-eval", "E0"}, {"security-review", "S1"}, {"integrating", "A8"}, {"docs-closure", "A9"}, {"cont-qa-closure", "A0"},
	}
	out := make([]state.Stage, len(phases))
	for i, p := range phases {
		out[i] = state.Stage{Phase: p.phase, State: states[i], Agents: []string{p.agent}}
	}
	return out
}

func baseLane(w state.Wave) state.Lane {
	return state.Lane{
		SchemaVersion: state.SchemaVersion, Lane: "main", Socket: "wave-demo-main-1a2b3c4d",
		Launcher:    &state.Launcher{Pid: 4242, Alive: true, StartedAt: *at(10 * time.Minute)},
		Waves:       []state.Wave{w},
		Problems:    []string{},
		GeneratedAt: clock.Add(-2 * time.Second),
		LastEvents:  w.LastEvents,
	}
}

// runningLane: wave 3 in implementation, a mix of agent states.
func runningLane() state.Lane {
	done := agent("A1", "Parser for the wave file format", "implementation", state.AgentCompleted, 9*time.Minute)
	done.FinishedAt, done.ExitCode = at(4*time.Minute), code(0)
	run := agent("A2", "Runtime record writer and heartbeat loop", "implementation", state.AgentRunning, 8*time.Minute)
	run.HeartbeatAgeMs = ms(1500 * time.Millisecond)
	run.LastMarker = "[wave-phase] coding"
	stale := agent("A3", "Dashboard", "implementation", state.AgentRunning, 7*time.Minute)
	stale.HeartbeatAgeMs = ms(40 * time.Second)
	launching := agent("A4", "Retry planner", "implementation", state.AgentLaunching, 3*time.Second)
	pending := state.Agent{ID: "A5", Title: "Docs for the schema", Role: "implementation", Executor: "codex", State: state.AgentPending}
	reused := agent("A6", "Lane lock", "implementation", state.AgentReused, 0)
	reused.StartedAt, reused.ExitCode, reused.Detail = nil, code(0), "reused: same prompt hash"
	w := state.Wave{Wave: 3, File: "docs/plans/waves/wave-3.md", Status: state.WaveRunning, Phase: "implementation",
		Attempt: 1, MaxAttempts: 3, StartedAt: at(9 * time.Minute), UpdatedAt: at(5 * time.Second),
		Closure: closure("pending", "pending", "pending", "pending", "pending"),
		Agents:  []state.Agent{done, run, stale, launching, pending, reused},
		Blockers: []state.Blocker{{ID: "wave-3-blocker-1", Kind: "blocker", AgentID: "A3",
			Summary: "needs the runtime record schema from A2"}},
		LastEvents: []state.EventRef{
			{At: *at(9 * time.Minute), Wave: 3, Message: "wave 3 started"},
			{At: *at(4 * time.Minute), Wave: 3, Message: "A1 completed (attempt 1)"},
			{At: *at(3 * time.Second), Wave: 3, Message: "A4 started (attempt 1)"},
		},
	}
	w.Failures = []state.Failure{}
	return baseLane(w)
}

// closureLane: implementation passed, security review running.
func closureLane() state.Lane {
	var agents []state.Agent
	for i, id := range []string{"A1", "A2", "E0"} {
		a := agent(id, "Implementation slice "+id, "implementation", state.AgentCompleted, time.Duration(20-i)*time.Minute)
		a.FinishedAt, a.ExitCode = at(time.Duration(10-i)*time.Minute), code(0)
		agents = append(agents, a)
	}
	agents[2].Role, agents[2].Title = "cont-eval", "Continuous evaluation"
	s1 := agent("S1", "Security review", "security-review", state.AgentRunning, 90*time.Second)
	s1.HeartbeatAgeMs = ms(800 * time.Millisecond)
	s1.LastMarker = "[wave-phase] reviewing"
	agents = append(agents, s1,
		state.Agent{ID: "A8", Title: "Integration steward", Role: "integration", Executor: "claude", State: state.AgentPending},
		state.Agent{ID: "A9", Title: "Documentation steward", Role: "documentation", Executor: "claude", State: state.AgentPending},
		state.Agent{ID: "A0", Title: "cont-QA", Role: "cont-qa", Executor: "claude", State: state.AgentPending})
	st := closure(state.StagePassed, state.StageRunning, state.StagePending, state.StagePending, state.StagePending)
	st[0].Detail = "targets 3/3 satisfied"
	w := state.Wave{Wave: 3, File: "docs/plans/waves/wave-3.md", Status: state.WaveRunning, Phase: "security-review",
		Attempt: 2, MaxAttempts: 3, StartedAt: at(20 * time.Minute), UpdatedAt: at(90 * time.Second),
		Closure: st, Agents: agents, Failures: []state.Failure{}, Blockers: []state.Blocker{},
		LastEvents: []state.EventRef{
			{At: *at(2 * time.Minute), Wave: 3, Message: "closure cont-eval passed"},
			{At: *at(90 * time.Second), Wave: 3, Message: "closure security-review running"},
		},
	}
	return baseLane(w)
}

// failedLane: a lost agent, a timed-out agent and a gate failure.
func failedLane() state.Lane {
	ok := agent("A1", "Parser", "implementation", state.AgentCompleted, 30*time.Minute)
	ok.FinishedAt, ok.ExitCode = at(25*time.Minute), code(0)
	lost := agent("A2", "Runtime record writer", "implementation", state.AgentLost, 30*time.Minute)
	lost.Detail = "runner died without a terminal record"
	lost.FinishedAt = at(12 * time.Minute)
	timedOut := agent("A3", "Dashboard", "implementation", state.AgentTimedOut, 30*time.Minute)
	timedOut.FinishedAt, timedOut.ExitCode, timedOut.Signal = at(1*time.Minute), code(143), "SIGTERM"
	timedOut.StatusCode, timedOut.Detail = "timeout-no-status", "deadline 29m passed; TERM sent to the group"
	failed := agent("A4", "Retry planner", "implementation", state.AgentFailed, 30*time.Minute)
	failed.FinishedAt, failed.ExitCode = at(20*time.Minute), code(3)
	w := state.Wave{Wave: 3, File: "docs/plans/waves/wave-3.md", Status: state.WaveFailed, Phase: "implementation",
		Attempt: 3, MaxAttempts: 3, StartedAt: at(30 * time.Minute), FinishedAt: at(1 * time.Minute), UpdatedAt: at(1 * time.Minute),
		Closure: closure(state.StageSkipped, state.StagePending, state.StagePending, state.StagePending, state.StagePending),
		Agents:  []state.Agent{ok, lost, timedOut, failed},
		Failures: []state.Failure{
			{AgentID: "A2", Gate: "implementationGate", StatusCode: "missing-status", Detail: "runner died without a terminal record", LogPath: lost.LogPath},
			{AgentID: "A3", Gate: "implementationGate", StatusCode: "timeout-no-status", Detail: "deadline 29m passed"},
			{AgentID: "A4", Gate: "implementationGate", StatusCode: "missing-wave-proof", Detail: "no [wave-proof] marker; exit 3"},
		},
		Blockers: []state.Blocker{},
		LastEvents: []state.EventRef{
			{At: *at(12 * time.Minute), Wave: 3, Message: "A2 lost (attempt 1)"},
			{At: *at(1 * time.Minute), Wave: 3, Message: "A3 timed-out (attempt 1): timeout-no-status"},
			{At: *at(1 * time.Minute), Wave: 3, Message: "wave 3 failed"},
		},
	}
	l := baseLane(w)
	l.Launcher.Alive = false
	l.Problems = []string{"unreadable event line /repo/.wave/lanes/main/events.jsonl:17"}
	return l
}

// bigLane is a lane with n runs in one wave, for the benchmark.
func bigLane(n int) state.Lane {
	l := runningLane()
	w := &l.Waves[0]
	w.Agents = w.Agents[:0]
	states := []string{state.AgentRunning, state.AgentCompleted, state.AgentFailed, state.AgentPending, state.AgentLost}
	for i := range n {
		a := agent(fmt.Sprintf("A%03d", i), fmt.Sprintf("Worker %d on issue #%d", i, 1000+i), "implementation", states[i%len(states)], time.Duration(i)*time.Second)
		a.HeartbeatAgeMs = ms(time.Duration(i%20) * time.Second)
		a.LastMarker = "[wave-phase] coding"
		w.Agents = append(w.Agents, a)
	}
	return l
}

// manyLane is wave 3 with 40 agents: mostly completed or pending, four
// running and three failed ones spread through the table — the frame at
// 80×24 must keep those seven on screen.
func manyLane() state.Lane {
	l := runningLane()
	w := &l.Waves[0]
	w.Agents = nil
	for i := 1; i <= 40; i++ {
		id := fmt.Sprintf("A%02d", i)
		a := agent(id, fmt.Sprintf("Worker on issue #%d", 100+i), "implementation", state.AgentCompleted, time.Duration(50-i)*time.Minute)
		switch {
		case i == 8:
			a.State, a.ExitCode, a.Detail = state.AgentFailed, code(2), "no [wave-proof] marker; exit 2"
		case i >= 21 && i <= 23 || i == 30:
			a.State, a.HeartbeatAgeMs, a.LastMarker = state.AgentRunning, ms(time.Second), "[wave-phase] coding"
		case i == 33:
			a.State, a.Detail = state.AgentLost, "runner died without a terminal record"
		case i == 35:
			a.State, a.ExitCode, a.Signal = state.AgentTimedOut, code(143), "SIGTERM"
		case i > 26:
			a = state.Agent{ID: id, Title: fmt.Sprintf("Worker on issue #%d", 100+i), Role: "implementation", Executor: "claude", State: state.AgentPending}
		default:
			a.FinishedAt, a.ExitCode = at(time.Duration(40-i)*time.Minute), code(0)
		}
		w.Agents = append(w.Agents, a)
	}
	w.Failures = []state.Failure{
		{AgentID: "A08", Gate: "implementationGate", StatusCode: "missing-wave-proof", Detail: "no [wave-proof] marker; exit 2"},
		{AgentID: "A33", Gate: "implementationGate", StatusCode: "runtime-lost", Detail: "runner died without a terminal record"},
		{AgentID: "A35", Gate: "implementationGate", StatusCode: "timeout-no-status", Detail: "deadline passed"},
	}
	return l
}

// withLog gives agent id of l a log in dir with n numbered lines and an
// escape-laden last line, and returns the log's path.
func withLog(t interface {
	Helper()
	Fatal(...any)
}, l *state.Lane, dir, id string, n int) string {
	t.Helper()
	for wi := range l.Waves {
		for i := range l.Waves[wi].Agents {
			a := &l.Waves[wi].Agents[i]
			if a.ID != id {
				continue
			}
			a.LogPath = filepath.Join(dir, id+".log")
			var b strings.Builder
			for k := 1; k <= n; k++ {
				fmt.Fprintf(&b, "%s line %02d\n", id, k)
			}
			b.WriteString("\x1b[32m[wave-phase] coding\x1b[0m\x1b]0;title\x07 done\n")
			if err := os.WriteFile(a.LogPath, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			return a.LogPath
		}
	}
	t.Fatal("no agent " + id)
	return ""
}
