package dashboard

import (
	"io"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// newHelp returns a help model styled with our palette: plain without
// colour, and never with adaptive colours (those ask the terminal for
// its background, which a pty may never answer).
func newHelp(color bool) help.Model {
	h := help.New()
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	if color {
		r.SetColorProfile(termenv.ANSI256)
	}
	plain := r.NewStyle()
	key := plain.Bold(true)
	dim := plain.Faint(true)
	h.Styles = help.Styles{
		ShortKey: key, ShortDesc: plain, ShortSeparator: dim, Ellipsis: dim,
		FullKey: key, FullDesc: plain, FullSeparator: dim,
	}
	return h
}

// short is b with a shorter description, for the footer.
func short(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// helpOverlay lists every key of the shown view and the model's own, in
// columns packed into rows that fit the width.
func (m Model) helpOverlay() string {
	groups := append(m.views[m.active].FullHelp(), m.keys.list())
	h := m.help
	h.Width = 0 // packing below decides; never truncate a column
	var rows []string
	var row [][]key.Binding
	flush := func() {
		if len(row) > 0 {
			rows = append(rows, h.FullHelpView(row))
			row = nil
		}
	}
	for _, g := range groups {
		if len(row) > 0 && lipgloss.Width(h.FullHelpView(append(row, g))) > m.width {
			flush()
		}
		row = append(row, g)
	}
	flush()
	title := newPalette(m.cfg.Color).bold.Render("keys · " + m.views[m.active].Name())
	return title + "\n" + strings.Join(rows, "\n\n")
}
