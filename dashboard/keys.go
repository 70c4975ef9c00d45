package dashboard

import "github.com/charmbracelet/bubbles/key"

// globalKeys are handled by the model whatever view is shown.
type globalKeys struct {
	Help, Quit, Exit, NextView, PrevView key.Binding
}

func newGlobalKeys(detach bool, views int) globalKeys {
	quit := "quit"
	if detach {
		quit = "detach; the dashboard keeps running"
	}
	k := globalKeys{
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:     key.NewBinding(key.WithKeys("q"), key.WithHelp("q", quit)),
		Exit:     key.NewBinding(key.WithKeys("Q", "ctrl+c"), key.WithHelp("Q/ctrl+c", "quit the dashboard")),
		NextView: key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next view")),
		PrevView: key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous view")),
	}
	if !detach {
		// q already quits; one key for it is enough in the help.
		k.Exit = key.NewBinding(key.WithKeys("Q", "ctrl+c"), key.WithHelp("ctrl+c", "quit"))
	}
	if views < 2 {
		k.NextView.SetEnabled(false)
		k.PrevView.SetEnabled(false)
	}
	return k
}

func (k globalKeys) list() []key.Binding {
	return []key.Binding{k.Help, k.Quit, k.Exit, k.NextView, k.PrevView}
}

// waveKeys are the wave view's keys.
type waveKeys struct {
	Up, Down, Attach, Zoom, PageUp, PageDown, HalfUp, HalfDown, Top, Bottom key.Binding
	Filter, Clear, Stop, Retry, PrevWave, NextWave                          key.Binding
	Answer                                                                  key.Binding
}

func newWaveKeys(back string) waveKeys {
	attach := "attach to its tmux session"
	if back != "" {
		attach = "attach (" + back + " comes back)"
	}
	return waveKeys{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "select previous agent")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "select next agent")),
		Attach:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", attach)),
		Zoom:     key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "full-screen output")),
		PageUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "output page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "output page down")),
		HalfUp:   key.NewBinding(key.WithKeys("ctrl+u"), key.WithHelp("ctrl+u", "output half page up")),
		HalfDown: key.NewBinding(key.WithKeys("ctrl+d"), key.WithHelp("ctrl+d", "output half page down")),
		Top:      key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "output: oldest line")),
		Bottom:   key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "output: follow tail")),
		Filter:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter agents (id, title, state, role)")),
		Clear:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter, leave full screen")),
		Stop:     key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "stop its run (stop --agent)")),
		Retry:    key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "retry: resume the wave")),
		PrevWave: key.NewBinding(key.WithKeys("["), key.WithHelp("[", "previous wave")),
		NextWave: key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "next wave; last follows new")),
		Answer:   answerKey(),
	}
}
