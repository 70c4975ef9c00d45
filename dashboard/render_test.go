package dashboard

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run go test ./dashboard -run %s -update)", path, err, t.Name())
	}
	if got != string(want) {
		t.Errorf("frame %s differs from %s:\n--- got ---\n%s\n--- want ---\n%s", name, path, got, want)
	}
}

func TestRenderGolden(t *testing.T) {
	tests := []struct {
		name string
		lane state.Lane
		o    Options
	}{
		{"running-160", runningLane(), Options{Width: 160, Selected: 1}},
		{"running-80", runningLane(), Options{Width: 80, Selected: 1}},
		{"running-color-120", runningLane(), Options{Width: 120, Color: true, Selected: 0}},
		{"closure-160", closureLane(), Options{Width: 160, Selected: 3}},
		{"closure-80", closureLane(), Options{Width: 80, Selected: 3}},
		{"failed-160", failedLane(), Options{Width: 160, Selected: -1}},
		{"failed-80", failedLane(), Options{Width: 80, Selected: -1}},
		{"empty", state.Lane{Lane: "main", Socket: "wave-demo-main-1a2b3c4d"}, Options{Width: 80, Selected: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Now, tt.o.Wave = clock, -1
			got := Render(tt.lane, tt.o)
			golden(t, tt.name, got)
			if !tt.o.Color && strings.Contains(got, "\x1b[") {
				t.Errorf("colour off but frame has escape sequences")
			}
			for i, line := range strings.Split(got, "\n") {
				if w := visibleWidth(line); w > tt.o.Width {
					t.Errorf("line %d is %d columns, wider than %d: %q", i+1, w, tt.o.Width, line)
				}
			}
		})
	}
}

func TestRenderStatusGolden(t *testing.T) {
	l := failedLane()
	l.Waves = append([]state.Wave{closureLane().Waves[0]}, l.Waves...)
	l.Waves[0].Wave = 2
	done := runningLane().Waves[0]
	done.Wave, done.Status, done.StartedAt, done.FinishedAt = 1, state.WaveCompleted, at(50*time.Minute), at(40*time.Minute)
	l.Waves = append([]state.Wave{done}, l.Waves...)
	all := RenderStatus(l, Options{Width: 100, Now: clock, Wave: -1})
	golden(t, "status-all-100", all)
	if strings.Count(all, "Parser for the wa") != 0 {
		t.Errorf("completed wave 1 should be one summary line:\n%s", all)
	}
	if got := RenderStatus(l, Options{Width: 100, Now: clock, Wave: 1}); !strings.Contains(got, "Parser for the wa") {
		t.Errorf("--wave 1 should show wave 1's agents:\n%s", got)
	}
	got := RenderStatus(l, Options{Width: 100, Now: clock, Wave: 2})
	if !strings.Contains(got, "wave 2") || strings.Contains(got, "wave 3") {
		t.Errorf("--wave 2 should show only wave 2:\n%s", got)
	}
	if got := RenderStatus(l, Options{Width: 100, Now: clock, Wave: 9}); !strings.Contains(got, "wave 9 has not run") {
		t.Errorf("missing wave not reported:\n%s", got)
	}
}

// The failed frame must say what went wrong without colour: every bad
// state by name, the lost agent's reason and the gate status codes.
func TestRenderFailedWaveTellsTheTruth(t *testing.T) {
	got := Render(failedLane(), Options{Width: 160, Now: clock, Wave: -1, Selected: -1})
	for _, want := range []string{"failed", "lost", "timed-out", "runner died without a terminal record",
		"143/SIGTERM", "missing-wave-proof", "timeout-no-status", "launcher pid 4242 exited", "events.jsonl:17"} {
		if !strings.Contains(got, want) {
			t.Errorf("failed frame lacks %q:\n%s", want, got)
		}
	}
}

func TestRenderHeartbeatAgesWithClock(t *testing.T) {
	l := runningLane()
	// The loader read the state 2 s before the clock with A2's heartbeat
	// 1.5 s old: the frame must show 3s, and 40 s later it is stale.
	row := func(frame, id string) string {
		for _, line := range strings.Split(frame, "\n") {
			if f := strings.Fields(strings.TrimPrefix(line, "›")); len(f) > 0 && f[0] == id {
				return line
			}
		}
		t.Fatalf("no row for %s in\n%s", id, frame)
		return ""
	}
	now := Render(l, Options{Width: 160, Now: clock, Wave: -1, Selected: -1})
	if r := row(now, "A2"); !strings.Contains(r, " 3s ") || strings.Contains(r, "!") {
		t.Errorf("A2 heartbeat at now: %q", r)
	}
	later := Render(l, Options{Width: 160, Now: clock.Add(40e9), Wave: -1, Selected: -1})
	if r := row(later, "A2"); !strings.Contains(r, "43s!") {
		t.Errorf("A2 heartbeat 40 s later should be stale: %q", r)
	}
}

func TestCleanStripsTerminalControl(t *testing.T) {
	tests := map[string]string{
		"plain":                     "plain",
		"\x1b[31mred\x1b[0m":        "red",
		"a\tb\nc":                   "a b c",
		"bell\x07 and \x1b]0;t\x07": `bell\x07 and `,
		"C1 \u009b and NUL \x00":    `C1 \u009b and NUL \x00`,
		"del\x7f":                   `del\x7f`,
	}
	for in, want := range tests {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkRender(b *testing.B) {
	l := bigLane(200)
	o := Options{Width: 160, Now: clock, Wave: -1, Selected: 100, Color: true}
	b.ReportAllocs()
	for b.Loop() {
		_ = Render(l, o)
	}
}

func visibleWidth(s string) int { return ansiWidth(s) }

// A stalled agent (stopped after printing nothing for the silence window)
// is a failure in the tally, with its reason in the LAST column.
func TestRenderStalledAgent(t *testing.T) {
	l := runningLane()
	a := &l.Waves[0].Agents[0]
	a.State, a.FinishedAt, a.ExitCode, a.Signal = state.AgentStalled, at(time.Minute), code(143), "SIGTERM"
	a.StatusCode, a.Detail, a.LastMarker = "stalled", "stalled: no output for 5m0s", ""
	got := Render(l, Options{Width: 160, Now: clock, Wave: -1, Selected: -1})
	for _, want := range []string{"stalled", "stalled: no output for 5m0s", " 1 failed "} {
		if !strings.Contains(got, want) {
			t.Errorf("frame lacks %q:\n%s", want, got)
		}
	}
}

// An agent paused by its executor's usage limit is shown waiting
// (yellow, as a question to a person is), and one the no-progress brake
// stopped is shown failed (red, counted in the tally), not as a pending
// row in the dim of agents yet to start.
func TestTheWaveTableColoursUsageLimitedAsWaitingAndNoProgressAsFailed(t *testing.T) {
	p := newPalette(true)
	for st, want := range map[string]style{state.AgentUsageLimited: p.warn, state.AgentNoProgress: p.bad} {
		l := runningLane()
		a := &l.Waves[0].Agents[0]
		a.State, a.FinishedAt, a.ExitCode = st, at(time.Minute), code(1)
		got := Render(l, Options{Width: 160, Now: clock, Wave: -1, Selected: -1, Color: true})
		if !strings.Contains(got, want.Render(st)) {
			t.Errorf("%s is not coloured %q:\n%q", st, want.pre, got)
		}
		if st == state.AgentNoProgress && !strings.Contains(got, " 1 failed ") {
			t.Errorf("a no-progress agent is not counted failed:\n%s", got)
		}
	}
}

// While an executor's account is out, the wave's view says so and until
// when (status and dashboard alike), and the held agent's LAST cell is
// the CLI's words, not the JSON line its log ended with.
func TestAWavePausedByAUsageLimitSaysUntilWhenAndWhy(t *testing.T) {
	l := runningLane()
	w := &l.Waves[0]
	a := &w.Agents[0]
	a.State, a.FinishedAt, a.ExitCode = state.AgentUsageLimited, at(time.Minute), code(1)
	a.Detail, a.LastMarker = "usage limit: You've hit your session limit · resets 5:47am (UTC)", `{"type":"result","is_error":true}`
	until := clock.Add(47 * time.Minute)
	w.Paused = []state.UsagePause{{Executor: "claude", Until: until, Detail: "You've hit your session limit", Agents: []string{"A1"}}}
	want := "paused: claude usage limit until " + until.Local().Format("15:04") + " (A1 wait): You've hit your session limit"
	for name, got := range map[string]string{
		"dashboard": Render(l, Options{Width: 200, Now: clock, Wave: -1, Selected: -1}),
		"status":    RenderStatus(l, Options{Width: 200, Now: clock, Wave: -1}),
	} {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %q:\n%s", name, want, got)
		}
		if !strings.Contains(got, "usage limit: You've hit your session limit") || strings.Contains(got, `{"type":"result"`) {
			t.Errorf("%s: the held agent's LAST is not the limit's words:\n%s", name, got)
		}
	}
}
