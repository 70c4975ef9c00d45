package dashboard

import (
	"slices"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

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

// action is what a key of a list view does. The list component handles
// the list's own (select, filter, answer, the output pane); the rest are
// a view's, and a view without one never sees its key.
type action int

const (
	actNone action = iota
	// The list's.
	actAnswer
	actUp
	actDown
	actFilter
	actClear
	actZoom
	actPageUp
	actPageDown
	actHalfUp
	actHalfDown
	actTop
	actBottom
	// The views'.
	actAttach
	actStop
	actRetry
	actPrevWave
	actNextWave
)

// binding is one row of the key table.
type binding struct {
	act   action
	key   key.Binding
	short string // the footer's word for it
	// output puts it in the help's second column, with the keys that act
	// on the selected row's output.
	output bool
	// row: it acts on the selected row; with none the list says so and
	// the view never sees the key.
	row bool
}

// keyTable is the one table of the list views' keys: a key means the
// same in every view that has it. The help overlay and the footer are
// generated from it.
type keyTable []binding

// listWords are what a view's rows are called in the key table's help.
type listWords struct {
	noun   string // "agent": select next agent, 3 of 6 agents
	fields string // what / matches
	attach string // what enter attaches to when Config.Back is unset
}

// newKeyTable is the key table of a list view of rows called w, with
// the view's own actions; back is Config.Back.
func newKeyTable(back string, w listWords, own ...action) keyTable {
	attach := "attach to " + w.attach
	if back != "" {
		attach = "attach (" + back + " comes back)"
	}
	b := func(act action, short string, keys []string, help, desc string) binding {
		return binding{act: act, short: short, key: key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))}
	}
	out := func(x binding) binding { x.output = true; return x }
	row := func(x binding) binding { x.row = true; return x }
	all := keyTable{
		b(actAnswer, "answer", []string{"a"}, "a", "answer the selected question"),
		b(actUp, "select", []string{"up", "k"}, "↑/k", "select previous "+w.noun),
		b(actDown, "", []string{"down", "j"}, "↓/j", "select next "+w.noun),
		row(b(actAttach, "attach", []string{"enter"}, "enter", attach)),
		b(actFilter, "filter", []string{"/"}, "/", "filter "+w.noun+"s ("+w.fields+")"),
		b(actClear, "", []string{"esc"}, "esc", "clear filter, leave full screen"),
		row(b(actStop, "stop", []string{"x"}, "x", "stop its run (stop --agent)")),
		b(actRetry, "retry", []string{"r"}, "r", "retry: resume the wave"),
		b(actPrevWave, "wave", []string{"["}, "[", "previous wave"),
		b(actNextWave, "", []string{"]"}, "]", "next wave; last follows new"),
		out(b(actZoom, "output", []string{"l"}, "l", "full-screen output")),
		out(b(actPageUp, "scroll", []string{"pgup"}, "pgup", "output page up")),
		out(b(actPageDown, "", []string{"pgdown"}, "pgdn", "output page down")),
		out(b(actHalfUp, "", []string{"ctrl+u"}, "ctrl+u", "output half page up")),
		out(b(actHalfDown, "", []string{"ctrl+d"}, "ctrl+d", "output half page down")),
		out(b(actTop, "", []string{"g", "home"}, "g", "output: oldest line")),
		out(b(actBottom, "", []string{"G", "end"}, "G", "output: follow tail")),
	}
	var t keyTable
	for _, x := range all {
		if x.act < actAttach || slices.Contains(own, x.act) {
			t = append(t, x)
		}
	}
	return t
}

// match is k's row of the table; act is actNone when it has none.
func (t keyTable) match(k tea.KeyMsg) binding {
	for _, x := range t {
		if key.Matches(k, x.key) {
			return x
		}
	}
	return binding{}
}

// get is a's row of the table.
func (t keyTable) get(a action) binding {
	for _, x := range t {
		if x.act == a {
			return x
		}
	}
	return binding{}
}

// full is the help overlay's columns, in the table's order: the keys
// that select and act, then those on the output. a shows only while a
// question waits (answer).
func (t keyTable) full(answer bool) [][]key.Binding {
	var act, out []key.Binding
	for _, x := range t {
		switch {
		case x.act == actAnswer && !answer:
		case x.output:
			out = append(out, x.key)
		default:
			act = append(act, x.key)
		}
	}
	return [][]key.Binding{act, out}
}

// short is the footer's hint line: a first while a question waits (the
// one thing then that needs the person), then acts with their short
// words.
func (t keyTable) short(answer bool, acts ...action) []key.Binding {
	if answer {
		acts = append([]action{actAnswer}, acts...)
	}
	var out []key.Binding
	for _, a := range acts {
		if x := t.get(a); x.act != actNone {
			out = append(out, short(x.key, x.short))
		}
	}
	return out
}
