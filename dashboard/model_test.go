package dashboard

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

func key(s string) tea.KeyMsg {
	switch s {
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func press(t *testing.T, m tea.Model, k string) (Model, tea.Cmd) {
	t.Helper()
	next, cmd := m.Update(key(k))
	return next.(Model), cmd
}

// laneWithLogs is runningLane with its run logs in a temp dir.
func laneWithLogs(t *testing.T) state.Lane {
	t.Helper()
	l := runningLane()
	dir := t.TempDir()
	for i := range l.Waves[0].Agents {
		a := &l.Waves[0].Agents[i]
		a.LogPath = filepath.Join(dir, a.ID+".log")
	}
	var b strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&b, "A2 line %02d\n", i)
	}
	b.WriteString("\x1b[32m[wave-phase] coding\x1b[0m\n")
	if err := os.WriteFile(l.Waves[0].Agents[1].LogPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return l
}

func TestModelKeys(t *testing.T) {
	c := isolateTmux(t)
	l := laneWithLogs(t)
	m := NewModel(Config{Wave: -1, Now: func() time.Time { return clock },
		Attach: func(s string) *exec.Cmd { return AttachCommand(c.AttachArgv(s, false), false) }}, l)

	m, _ = press(t, m, "down")
	if a, _ := m.Selected(); a.ID != "A2" {
		t.Fatalf("after down the selection is %q, want A2", a.ID)
	}
	if !strings.Contains(m.View(), "› A2") {
		t.Errorf("the frame does not mark A2 selected:\n%s", m.View())
	}
	m, _ = press(t, m, "k")
	m, _ = press(t, m, "j")
	m, _ = press(t, m, "j")
	m, _ = press(t, m, "up")
	if a, _ := m.Selected(); a.ID != "A2" {
		t.Fatalf("after k j j up the selection is %q, want A2", a.ID)
	}
	for range 20 {
		m, _ = press(t, m, "j")
	}
	if a, _ := m.Selected(); a.ID != "A6" {
		t.Fatalf("selection ran off the end: %q", a.ID)
	}
	for range 20 {
		m, _ = press(t, m, "k")
	}
	m, _ = press(t, m, "j")

	// enter: the attach command for A2's session on the lane socket.
	m, cmd := press(t, m, "enter")
	if cmd == nil {
		t.Fatal("enter returned no command")
	}
	want := []string{"tmux", "-u", "-L", c.Socket(), "attach-session", "-t", "=w3-A2"}
	if got := m.AttachArgv(); !slices.Equal(got, want) {
		t.Errorf("attach argv = %q, want %q", got, want)
	}

	// l: the last LogLines lines of A2's log, escape sequences stripped.
	m, cmd = press(t, m, "l")
	if cmd == nil {
		t.Fatal("l returned no command")
	}
	next, _ := m.Update(cmd())
	m = next.(Model)
	v := m.View()
	if !strings.Contains(v, "log of A2") || !strings.Contains(v, "A2 line 60") || !strings.Contains(v, "[wave-phase] coding") {
		t.Errorf("log view lacks the tail:\n%s", v)
	}
	if strings.Contains(v, "A2 line 20\n") || strings.Contains(v, "\x1b[32m") {
		t.Errorf("log view shows more than %d lines or raw escapes:\n%s", LogLines, v)
	}
	if n := strings.Count(v, "A2 line"); n != LogLines-1 {
		t.Errorf("log view shows %d log lines, want %d", n, LogLines-1)
	}
	m, _ = press(t, m, "esc")
	if strings.Contains(m.View(), "log of A2") {
		t.Errorf("esc did not close the log view")
	}

	// A state update: A2 finishes, a new agent appears; the selection
	// stays on its row and the frame shows the new state.
	l2 := laneWithLogs(t)
	l2.Waves[0].Agents[1].State = state.AgentCompleted
	l2.Waves[0].Agents[1].ExitCode = code(0)
	l2.Waves[0].Agents = l2.Waves[0].Agents[:2]
	next, _ = m.Update(StateMsg{Lane: l2})
	m = next.(Model)
	if a, _ := m.Selected(); a.ID != "A2" || a.State != state.AgentCompleted {
		t.Errorf("after the update the selection is %+v", a)
	}
	next, _ = m.Update(StateMsg{Lane: state.Lane{Lane: "main"}})
	m = next.(Model)
	if _, ok := m.Selected(); ok {
		t.Errorf("an empty lane still has a selection")
	}
	if !strings.Contains(m.View(), "no wave has run") {
		t.Errorf("empty lane view:\n%s", m.View())
	}

	if _, cmd = press(t, m, "q"); cmd == nil {
		t.Fatal("q returned no command")
	} else if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Errorf("q did not quit")
	}
}

// enter checks the session first: a live session is attached, a gone one
// opens the agent's log instead of failing in tmux.
func TestModelEnterFallsBackToLogWhenSessionGone(t *testing.T) {
	c := isolateTmux(t)
	ctx := context.Background()
	// A second session keeps the server up once w3-A2 is killed, as the
	// dashboard and the other agents do on a real lane.
	for _, name := range []string{"w3-A2", "dashboard"} {
		if err := c.NewSession(ctx, tmuxadapter.SessionSpec{Name: name, Argv: []string{"sleep", "600"}}); err != nil {
			t.Fatal(err)
		}
	}
	l := laneWithLogs(t)
	m := NewModel(Config{Wave: -1, Now: func() time.Time { return clock }, HasSession: c.HasSession,
		Attach: func(s string) *exec.Cmd { return AttachCommand(c.AttachArgv(s, false), false) }}, l)
	m, _ = press(t, m, "down")

	_, cmd := press(t, m, "enter")
	if _, gone := cmd().(sessionGoneMsg); gone {
		t.Fatal("live session w3-A2 reported gone")
	}

	if err := c.KillSession(ctx, "w3-A2"); err != nil {
		t.Fatal(err)
	}
	m, cmd = press(t, m, "enter")
	msg := cmd()
	if _, gone := msg.(sessionGoneMsg); !gone {
		t.Fatalf("killed session: got %T, want sessionGoneMsg", msg)
	}
	next, cmd := m.Update(msg)
	m = next.(Model)
	next, _ = m.Update(cmd())
	v := next.(Model).View()
	if !strings.Contains(v, "session w3-A2 is gone") || !strings.Contains(v, "A2 line 60") {
		t.Errorf("gone session should show the log with a note:\n%s", v)
	}
}
