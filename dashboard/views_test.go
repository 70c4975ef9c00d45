package dashboard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// noteView is a second view as the backlog view will be one: it counts
// the state updates and keys it gets and draws them.
type noteView struct {
	states, keys int
	w, h         int
	refresh      key.Binding
}

func newNoteView() noteView {
	return noteView{refresh: key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "refresh the backlog"))}
}

func (v noteView) Name() string              { return "backlog" }
func (v noteView) Init() tea.Cmd             { return nil }
func (v noteView) Capturing() bool           { return false }
func (v noteView) ShortHelp() []key.Binding  { return []key.Binding{v.refresh} }
func (v noteView) FullHelp() [][]key.Binding { return [][]key.Binding{{v.refresh}} }
func (v noteView) View() string {
	return fmt.Sprintf("backlog %d states %d keys %dx%d", v.states, v.keys, v.w, v.h)
}
func (v noteView) Update(m tea.Msg) (View, tea.Cmd) {
	switch m := m.(type) {
	case StateMsg:
		v.states++
	case tea.WindowSizeMsg:
		v.w, v.h = m.Width, m.Height
	case tea.KeyMsg:
		v.keys++
		if key.Matches(m, v.refresh) {
			return v, Note("backlog refreshed")
		}
	}
	return v, nil
}

func TestModelSwitchesBetweenViews(t *testing.T) {
	m := newTestModel(t, Config{Views: []View{newNoteView()}}, runningLane(), 80, 24)
	first := m.View()
	if !strings.HasPrefix(first, " waves ") || !strings.Contains(first, "backlog") || !strings.Contains(first, "tab switches") {
		t.Fatalf("no tab line:\n%s", first)
	}
	checkFrame(t, first, 80, 24)

	// State reaches the hidden view; keys go to the shown one only.
	m = drive(t, m, StateMsg{Lane: runningLane()})
	m = press(t, m, "j", "tab")
	v := m.View()
	if !strings.Contains(v, "backlog 1 states 0 keys 80x22") || !strings.Contains(v, "R refresh the backlog") {
		t.Fatalf("backlog view after tab:\n%s", v)
	}
	m = press(t, m, "R")
	if v = m.View(); !strings.Contains(v, "backlog 1 states 1 keys") || !strings.Contains(v, "backlog refreshed") {
		t.Fatalf("backlog view did not get its key:\n%s", v)
	}
	if help := press(t, m, "?").View(); !strings.Contains(help, "keys · backlog") || !strings.Contains(help, "refresh the backlog") ||
		!strings.Contains(help, "next view") {
		t.Fatalf("help of the backlog view:\n%s", help)
	}
	if m = press(t, m, "tab"); selectedID(m) != "A2" || !strings.Contains(m.View(), "› A2") {
		t.Fatalf("back on the wave view the selection is %q", selectedID(m))
	}
}

func TestModelColorFrameFits(t *testing.T) {
	m := press(t, newTestModel(t, Config{Color: true}, manyLane(), 80, 24), "j")
	v := m.View()
	if !strings.Contains(v, "\x1b[") {
		t.Fatal("colour on but no styling")
	}
	checkFrame(t, v, 80, 24)
}
