package dashboard

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// isolateTmux points tmux at a fresh socket dir and returns a client on a
// unique socket whose server is killed at cleanup.
func isolateTmux(t *testing.T) *tmuxadapter.Client {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "wt")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMUX", "")
	os.Unsetenv("TMUX")
	t.Setenv("TMUX_PANE", "")
	os.Unsetenv("TMUX_PANE")
	t.Setenv("TMUX_TMPDIR", dir)
	c := tmuxadapter.New(fmt.Sprintf("wd-%d", time.Now().UnixNano()))
	t.Cleanup(func() {
		_ = c.KillServer(context.Background())
		os.RemoveAll(dir)
	})
	return c
}

var specialKeys = map[string]tea.KeyType{
	"down": tea.KeyDown, "up": tea.KeyUp, "enter": tea.KeyEnter, "esc": tea.KeyEsc,
	"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "ctrl+c": tea.KeyCtrlC, "tab": tea.KeyTab,
	"backspace": tea.KeyBackspace, "ctrl+u": tea.KeyCtrlU, "ctrl+d": tea.KeyCtrlD,
	"home": tea.KeyHome, "end": tea.KeyEnd,
}

func keyMsg(s string) tea.KeyMsg {
	if t, ok := specialKeys[s]; ok {
		return tea.KeyMsg{Type: t}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

// drive feeds msg to m and, as bubbletea would, every message the
// returned commands produce, until none are left. Ticks are never fed,
// so no command sleeps.
func drive(t *testing.T, m tea.Model, msg tea.Msg) Model {
	t.Helper()
	queue := []tea.Msg{msg}
	for n := 0; len(queue) > 0; n++ {
		if n > 200 {
			t.Fatal("commands never settle")
		}
		var cmd tea.Cmd
		m, cmd = m.Update(queue[0])
		queue = append(queue[1:], runCmd(cmd)...)
	}
	return m.(Model)
}

func runCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case nil:
		return nil
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, runCmd(c)...)
		}
		return out
	default:
		return []tea.Msg{msg}
	}
}

func press(t *testing.T, m Model, keys ...string) Model {
	t.Helper()
	for _, k := range keys {
		m = drive(t, m, keyMsg(k))
	}
	return m
}

// newTestModel is a model of l at w×h with the fixed clock, its first
// log read done.
func newTestModel(t *testing.T, cfg Config, l state.Lane, w, h int) Model {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return clock }
	}
	if cfg.Wave == 0 {
		cfg.Wave = -1
	}
	m := NewModel(cfg, l)
	for _, msg := range runCmd(m.views[0].Init()) {
		m = drive(t, m, msg)
	}
	return drive(t, m, tea.WindowSizeMsg{Width: w, Height: h})
}

// laneWithLogs is runningLane with a 60-line log for A2.
func laneWithLogs(t *testing.T) state.Lane {
	t.Helper()
	l := runningLane()
	withLog(t, &l, t.TempDir(), "A2", 60)
	return l
}

// hooks records what the action hooks were asked to do.
type hooks struct{ detached, stopped, resumed []string }

func (h *hooks) config() Config {
	return Config{
		Detach: func(context.Context) error { h.detached = append(h.detached, "client"); return nil },
		StopAgent: func(_ context.Context, id string) (string, error) {
			h.stopped = append(h.stopped, id)
			return "terminated w3-" + id + "-a1", nil
		},
		Resume: func(_ context.Context, n int) (string, error) {
			h.resumed = append(h.resumed, fmt.Sprint(n))
			return fmt.Sprintf("resuming wave %d in tmux session resume", n), nil
		},
	}
}

func selectedID(m Model) string {
	a, _ := m.Selected()
	return a.ID
}

func TestModelKeys(t *testing.T) {
	exited := func() state.Lane {
		l := failedLane() // launcher pid 4242 exited, wave 3 failed
		return l
	}
	waves := func() state.Lane {
		l := runningLane()
		w1, w2 := l.Waves[0], l.Waves[0]
		w1.Wave, w2.Wave = 1, 2
		w1.Agents, w2.Agents = w1.Agents[:1], w2.Agents[:2]
		l.Waves = []state.Wave{w1, w2, l.Waves[0]}
		return l
	}
	tests := []struct {
		name  string
		lane  func() state.Lane
		keys  []string
		check func(t *testing.T, m Model, h *hooks)
	}{
		{"j and k move the selection and stop at the ends", runningLane, []string{"down", "k", "j", "j", "up"},
			func(t *testing.T, m Model, h *hooks) {
				if selectedID(m) != "A2" || !strings.Contains(m.View(), "› A2") {
					t.Fatalf("selection %q, want A2 marked:\n%s", selectedID(m), m.View())
				}
				m = press(t, m, slices.Repeat([]string{"j"}, 20)...)
				if selectedID(m) != "A6" {
					t.Fatalf("selection ran off the end: %q", selectedID(m))
				}
			}},
		{"l shows the output full screen, esc returns", laneWithLogsFn(t), []string{"j", "l"},
			func(t *testing.T, m Model, h *hooks) {
				v := m.View()
				if !strings.Contains(v, "A2 output") || !strings.Contains(v, "A2 line 60") || strings.Contains(v, "ID  ") {
					t.Fatalf("zoomed view:\n%s", v)
				}
				if v = press(t, m, "esc").View(); !strings.Contains(v, "› A2") {
					t.Fatalf("esc did not return to the table:\n%s", v)
				}
			}},
		{"filter narrows the table and keeps the selection", runningLane, []string{"j", "/", "r", "u", "n", "enter"},
			func(t *testing.T, m Model, h *hooks) {
				v := m.View()
				if !agentLine("A2").MatchString(v) || !agentLine("A3").MatchString(v) || agentLine("A1").MatchString(v) {
					t.Fatalf("/run should show A2 and A3 only:\n%s", v)
				}
				if selectedID(m) != "A2" || !strings.Contains(v, "/run  2 of 6 agents") {
					t.Fatalf("selection %q; filter line missing:\n%s", selectedID(m), v)
				}
				if v = press(t, m, "esc").View(); !agentLine("A1").MatchString(v) || strings.Contains(v, "/run  ") {
					t.Fatalf("esc did not clear the filter:\n%s", v)
				}
			}},
		{"the filter prompt takes q and ? as text", runningLane, []string{"/", "q", "?"},
			func(t *testing.T, m Model, h *hooks) {
				if m.UserQuit() || m.showHelp || m.waves().list.filter.Value() != "q?" {
					t.Fatalf("quit %v help %v filter %q", m.UserQuit(), m.showHelp, m.waves().list.filter.Value())
				}
				if v := m.View(); !strings.Contains(v, "no agent matches /q?") {
					t.Fatalf("empty filter result not said:\n%s", v)
				}
			}},
		{"backspace edits the filter", runningLane, []string{"/", "a", "4", "x", "backspace"},
			func(t *testing.T, m Model, h *hooks) {
				if m.waves().list.filter.Value() != "a4" || selectedID(m) != "A4" {
					t.Fatalf("filter %q selection %q", m.waves().list.filter.Value(), selectedID(m))
				}
			}},
		{"[ and ] switch waves; the last follows the latest", waves, []string{"["},
			func(t *testing.T, m Model, h *hooks) {
				if v := m.View(); !strings.Contains(v, "wave 2 · running") || m.waves().wave != 2 {
					t.Fatalf("[ should show wave 2:\n%s", v)
				}
				if m = press(t, m, "[", "["); m.waves().wave != 1 || !strings.Contains(m.View(), "first wave") {
					t.Fatalf("[ past the first: wave %d\n%s", m.waves().wave, m.View())
				}
				if m = press(t, m, "]", "]"); m.waves().wave != -1 || !strings.Contains(m.View(), "wave 3 · running") {
					t.Fatalf("] to the latest should follow: wave %d\n%s", m.waves().wave, m.View())
				}
			}},
		{"? opens the help, any key closes it", runningLane, []string{"?"},
			func(t *testing.T, m Model, h *hooks) {
				v := m.View()
				for _, k := range []string{"filter agents", "stop its run", "retry", "previous wave", "follow tail", "quit"} {
					if !strings.Contains(v, k) {
						t.Errorf("help lacks %q:\n%s", k, v)
					}
				}
				if m = press(t, m, "q"); m.showHelp || m.UserQuit() {
					t.Fatalf("q in the help should only close it")
				}
			}},
		{"q quits outside the dashboard session", runningLane, []string{"q"},
			func(t *testing.T, m Model, h *hooks) {
				if !m.UserQuit() || len(h.detached) != 0 {
					t.Fatalf("q: quit %v detached %v", m.UserQuit(), h.detached)
				}
			}},
		{"ctrl+c quits even while filtering", runningLane, []string{"/", "ctrl+c"},
			func(t *testing.T, m Model, h *hooks) {
				if !m.UserQuit() {
					t.Fatal("ctrl+c did not quit")
				}
			}},
		{"x asks before stopping a running agent; y stops it", runningLane, []string{"j", "x"},
			func(t *testing.T, m Model, h *hooks) {
				if v := m.View(); !strings.Contains(v, "stop A2's run") || len(h.stopped) != 0 {
					t.Fatalf("x should ask first (stopped %v):\n%s", h.stopped, v)
				}
				m = press(t, m, "y")
				if !slices.Equal(h.stopped, []string{"A2"}) || !strings.Contains(m.View(), "terminated w3-A2-a1") {
					t.Fatalf("y: stopped %v\n%s", h.stopped, m.View())
				}
			}},
		{"x then any other key cancels", runningLane, []string{"j", "x", "n"},
			func(t *testing.T, m Model, h *hooks) {
				if len(h.stopped) != 0 || !strings.Contains(m.View(), "cancelled") {
					t.Fatalf("stopped %v\n%s", h.stopped, m.View())
				}
			}},
		{"x on a finished agent says why not", runningLane, []string{"x"},
			func(t *testing.T, m Model, h *hooks) {
				if len(h.stopped) != 0 || !strings.Contains(m.View(), "A1 is completed; only a running agent") {
					t.Fatalf("stopped %v\n%s", h.stopped, m.View())
				}
			}},
		{"r while a launcher runs explains and names the command", runningLane, []string{"r"},
			func(t *testing.T, m Model, h *hooks) {
				v := m.View()
				if len(h.resumed) != 0 || !strings.Contains(v, "launcher pid 4242 is running") {
					t.Fatalf("resumed %v\n%s", h.resumed, v)
				}
			}},
		{"r without a launcher asks, then resumes the wave", exited, []string{"j", "r"},
			func(t *testing.T, m Model, h *hooks) {
				if v := m.View(); !strings.Contains(v, "resume wave 3: rerun the agents that did not pass, A2 among them") {
					t.Fatalf("r should ask first:\n%s", v)
				}
				m = press(t, m, "y")
				if !slices.Equal(h.resumed, []string{"3"}) || !strings.Contains(m.View(), "resuming wave 3") {
					t.Fatalf("resumed %v\n%s", h.resumed, m.View())
				}
			}},
		{"pgup stops following the output, G follows again", laneWithLogsFn(t), []string{"j", "pgup"},
			func(t *testing.T, m Model, h *hooks) {
				if v := m.View(); !strings.Contains(v, "G follows") || strings.Contains(v, "A2 line 60") {
					t.Fatalf("pgup should scroll away from the tail:\n%s", v)
				}
				if v := press(t, m, "G").View(); !strings.Contains(v, "following") || !strings.Contains(v, "A2 line 60") {
					t.Fatalf("G should follow the tail:\n%s", v)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &hooks{}
			cfg := h.config()
			cfg.Detach = nil
			m := press(t, newTestModel(t, cfg, tt.lane(), 100, 30), tt.keys...)
			tt.check(t, m, h)
		})
	}
}

func laneWithLogsFn(t *testing.T) func() state.Lane {
	return func() state.Lane { return laneWithLogs(t) }
}

// agentLine matches an agent's table row.
func agentLine(id string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^(› |  )` + regexp.QuoteMeta(id) + ` `)
}

// Inside the lane's dashboard session q detaches the client and keeps
// the dashboard; Q quits it.
func TestModelQuitDetachesInsideDashboardSession(t *testing.T) {
	h := &hooks{}
	m := press(t, newTestModel(t, h.config(), runningLane(), 80, 24), "q")
	if m.UserQuit() || len(h.detached) != 1 {
		t.Fatalf("q in the session: quit %v detached %v", m.UserQuit(), h.detached)
	}
	if !strings.Contains(m.View(), "q detach") {
		t.Errorf("footer should say q detaches:\n%s", m.View())
	}
	if m = press(t, m, "Q"); !m.UserQuit() {
		t.Fatal("Q did not quit")
	}
}

// After a state update the selection stays on its agent; an empty lane
// has none.
func TestModelStateUpdateKeepsSelection(t *testing.T) {
	m := press(t, newTestModel(t, Config{}, laneWithLogs(t), 100, 30), "j")
	l2 := laneWithLogs(t)
	l2.Waves[0].Agents[1].State = state.AgentCompleted
	l2.Waves[0].Agents = l2.Waves[0].Agents[1:3]
	m = drive(t, m, StateMsg{Lane: l2})
	if a, ok := m.Selected(); !ok || a.ID != "A2" || a.State != state.AgentCompleted {
		t.Fatalf("after the update the selection is %+v", a)
	}
	m = drive(t, m, StateMsg{Lane: state.Lane{Lane: "main"}})
	if _, ok := m.Selected(); ok || !strings.Contains(m.View(), "no wave has run") {
		t.Fatalf("empty lane:\n%s", m.View())
	}
}

// The preview follows the selected agent and reads its log again on
// every state change; escapes in the log never reach the screen.
func TestModelPreviewFollowsSelectionAndLog(t *testing.T) {
	l := laneWithLogs(t)
	m := press(t, newTestModel(t, Config{}, l, 100, 40), "j")
	v := m.View()
	if !strings.Contains(v, "A2 output · following") || !strings.Contains(v, "[wave-phase] coding done") {
		t.Fatalf("preview of A2:\n%s", v)
	}
	if strings.ContainsAny(v, "\x1b\x07") {
		t.Fatalf("raw escapes in the frame: %q", v)
	}
	path := l.Waves[0].Agents[1].LogPath
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "A2 writes a new line")
	f.Close()
	if v = drive(t, m, StateMsg{Lane: l}).View(); !strings.Contains(v, "A2 writes a new line") {
		t.Fatalf("preview did not follow the log:\n%s", v)
	}
	if v = press(t, m, "j").View(); !strings.Contains(v, "A3 output") || strings.Contains(v, "A2 line") {
		t.Fatalf("preview did not move to A3:\n%s", v)
	}
}

// enter checks the session first: a live session is attached, a gone one
// shows the agent's output instead of failing in tmux.
func TestModelEnterFallsBackToOutputWhenSessionGone(t *testing.T) {
	c := isolateTmux(t)
	ctx := context.Background()
	// A second session keeps the server up once w3-A2 is killed, as the
	// dashboard and the other agents do on a real lane.
	for _, name := range []string{"w3-A2", "dashboard"} {
		if err := c.NewSession(ctx, tmuxadapter.SessionSpec{Name: name, Argv: []string{"sleep", "600"}}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{HasSession: c.HasSession, Back: "C-b d",
		Attach: func(s string) *exec.Cmd { return AttachCommand(c.AttachArgv(s, false), false) }}
	m := press(t, newTestModel(t, cfg, laneWithLogs(t), 100, 30), "j")

	_, cmd := m.Update(keyMsg("enter"))
	if _, gone := cmd().(sessionGoneMsg); gone {
		t.Fatal("live session w3-A2 reported gone")
	}
	want := []string{"tmux", "-u", "-L", c.Socket(), "attach-session", "-t", "=w3-A2"}
	next, _ := m.Update(keyMsg("enter"))
	if got := next.(Model).AttachArgv(); !slices.Equal(got, want) {
		t.Errorf("attach argv = %q, want %q", got, want)
	}
	if !strings.Contains(m.View(), "enter attach") || !strings.Contains(fullHelp(t, m), "attach (C-b d comes back)") {
		t.Errorf("no hint how to come back:\n%s", fullHelp(t, m))
	}

	if err := c.KillSession(ctx, "w3-A2"); err != nil {
		t.Fatal(err)
	}
	v := press(t, m, "enter").View()
	if !strings.Contains(v, "session w3-A2 is gone") || !strings.Contains(v, "A2 line 60") {
		t.Errorf("gone session should show the output with a note:\n%s", v)
	}
}

func fullHelp(t *testing.T, m Model) string { return press(t, m, "?").View() }

// A switch-client attach returns at once; the note says how to come back.
func TestModelSwitchNoteSaysHowToComeBack(t *testing.T) {
	m := newTestModel(t, Config{Back: "C-b L"}, runningLane(), 100, 30)
	m = drive(t, m, attachedMsg{view: "waves", session: "w3-A2", switched: true})
	if v := m.View(); !strings.Contains(v, "switched this client to w3-A2; C-b L comes back here") {
		t.Fatalf("switch note:\n%s", v)
	}
}

// A kubernetes agent has no tmux session: enter runs `attach --agent`
// (through the API) in this terminal instead of asking tmux.
func TestModelEnterAttachesToAKubernetesAgentsPod(t *testing.T) {
	l := runningLane()
	for i := range l.Waves[0].Agents {
		if a := &l.Waves[0].Agents[i]; a.ID == "A2" {
			a.Backend, a.Pod, a.SessionName = state.BackendKubernetes, "agents/wave-w3-a2-a1-0123abcd-xyz12", ""
		}
	}
	var asked []string
	cfg := Config{
		Attach: func(s string) *exec.Cmd { t.Errorf("tmux attach to %q for a pod", s); return exec.Command("true") },
		AttachAgent: func(agent string) *exec.Cmd {
			asked = append(asked, agent)
			return exec.Command("wave-orchestrator", "attach", "--agent", agent)
		},
	}
	m := press(t, newTestModel(t, cfg, l, 100, 30), "j")
	next, cmd := m.Update(keyMsg("enter"))
	if cmd == nil || !slices.Equal(asked, []string{"A2"}) {
		t.Fatalf("enter on a kubernetes agent asked %v", asked)
	}
	if got := next.(Model).AttachArgv(); !slices.Equal(got, []string{"wave-orchestrator", "attach", "--agent", "A2"}) {
		t.Errorf("attach argv %q", got)
	}
	// Without the command (a plain view) it says how to attach.
	m = press(t, newTestModel(t, Config{}, l, 100, 30), "j")
	if v := press(t, m, "enter").View(); !strings.Contains(v, "attach --lane") || strings.Contains(v, "no tmux session") {
		t.Errorf("no way to attach shown:\n%s", v)
	}
}
