package dashboard

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// rowSpec is what a view tells its list about the rows it supplies.
type rowSpec[R any] struct {
	words listWords
	// id names a row: the selection stays on it across refreshes, and the
	// preview's title says whose output it is.
	id func(R) string
	// log is the path of the row's output log; "" while it has none.
	log func(R) string
	// text is what the / filter matches, case-insensitively.
	text func(R) string
	// urgent rows stay when the table is cut (see pickRows).
	urgent func(R) bool
	// first is the row selected before the user chose one; nil keeps the
	// row index (the first row at the start).
	first func([]R) int
}

// list is the component the list views (waves, backlog) share: it owns
// the rows' selection, kept on its row across refreshes that reorder or
// drop rows; the / filter; the preview of the selected row's output with
// its scrolling and full-screen zoom; the answer line of the questions
// that wait; and the keys of the key table that act on those. A view
// supplies its rows (setRows) and handles the actions the list hands
// back (enter, x, r, [, ]).
type list[R any] struct {
	spec rowSpec[R]
	keys keyTable

	all   []R    // the view's rows
	rows  []R    // those the filter matches: the table
	sel   int    // the selected row of rows; -1 none (a one-off frame)
	selID string // its id; "" none chosen yet

	filter    filterInput
	filtering bool // the filter prompt has the keyboard
	asks      asks // the questions that wait, the answer line
	out       preview
	zoom      bool // the preview fills the view
}

// newList is the list of a view's rows with the key table of the view's
// own actions; back is Config.Back (how an attach comes back).
func newList[R any](spec rowSpec[R], back string, own ...action) list[R] {
	l := list[R]{spec: spec, keys: newKeyTable(back, spec.words, own...), out: newPreview()}
	l.out.none = "no " + spec.words.noun + " selected"
	return l
}

// setRows takes the view's rows after a read, the filter applied, the
// selection kept on its row or moved to the nearest.
func (l list[R]) setRows(all []R) list[R] {
	l.all = all
	return l.refilter()
}

// refilter applies the filter to the rows again.
func (l list[R]) refilter() list[R] {
	l.rows = l.all
	if q := strings.ToLower(strings.TrimSpace(l.filter.Value())); q != "" {
		l.rows = nil
		for _, r := range l.all {
			if strings.Contains(strings.ToLower(l.spec.text(r)), q) {
				l.rows = append(l.rows, r)
			}
		}
	}
	return l.reselect()
}

// reselect keeps the selection on the same row after the table changed
// (a read, the filter), else on the nearest row; before the user chose
// one, on the view's first.
func (l list[R]) reselect() list[R] {
	if l.selID != "" {
		for i, r := range l.rows {
			if l.spec.id(r) == l.selID {
				l.sel = i
				return l
			}
		}
	} else if l.spec.first != nil {
		l.sel = l.spec.first(l.rows)
	}
	l.sel = max(0, min(l.sel, len(l.rows)-1))
	l.selID = ""
	if len(l.rows) > 0 {
		l.selID = l.spec.id(l.rows[l.sel])
	}
	return l
}

// forget drops the selection: the next rows are selected as the first
// were.
func (l list[R]) forget() list[R] {
	l.sel, l.selID = 0, ""
	return l
}

func (l list[R]) move(d int) list[R] {
	if len(l.rows) == 0 {
		return l
	}
	l.sel = max(0, min(l.sel+d, len(l.rows)-1))
	l.selID = l.spec.id(l.rows[l.sel])
	return l
}

// selected is the selected row.
func (l list[R]) selected() (R, bool) {
	if l.sel < 0 || l.sel >= len(l.rows) {
		var none R
		return none, false
	}
	return l.rows[l.sel], true
}

// selectedID is the selected row's id, "" with none.
func (l list[R]) selectedID() string {
	if r, ok := l.selected(); ok {
		return l.spec.id(r)
	}
	return ""
}

// capturing reports that the list reads text (the filter, an answer).
func (l list[R]) capturing() bool { return l.filtering || l.asks.typing }

// key handles a key of the list and returns the action that is the
// view's (actNone when the list handled it). An action on the selected
// row with none selected is answered here.
func (l list[R]) key(cfg Config, k tea.KeyMsg) (list[R], action, tea.Cmd) {
	var cmd tea.Cmd
	switch {
	case l.filtering:
		return l.filterKey(k), actNone, nil
	case l.asks.typing:
		l.asks, cmd = l.asks.key(cfg, k)
		return l, actNone, cmd
	}
	b := l.keys.match(k)
	switch b.act {
	case actAnswer:
		l.asks, cmd = l.asks.open(cfg)
	case actUp:
		l = l.move(-1)
	case actDown:
		l = l.move(1)
	case actFilter:
		l.filtering = true
	case actClear:
		if l.zoom {
			l.zoom = false
		} else if l.filter.Value() != "" {
			l.filter = l.filter.SetValue("")
			l = l.refilter()
		}
	case actZoom:
		l.zoom = !l.zoom
	case actPageUp, actPageDown, actHalfUp, actHalfDown, actTop, actBottom:
		l.out = l.out.scroll(b.act)
	default:
		if _, ok := l.selected(); b.row && !ok {
			return l, actNone, Note("no %s selected", l.spec.words.noun)
		}
		return l, b.act, nil
	}
	return l, actNone, cmd
}

// filterKey edits the filter prompt: enter keeps the filter, esc clears
// it, ↑/↓ still select.
func (l list[R]) filterKey(k tea.KeyMsg) list[R] {
	switch k.Type {
	case tea.KeyEnter:
		l.filtering = false
		return l
	case tea.KeyEsc:
		l.filtering = false
		l.filter = l.filter.SetValue("")
	case tea.KeyUp:
		return l.move(-1)
	case tea.KeyDown:
		return l.move(1)
	default:
		l.filter = l.filter.edit(k)
	}
	return l.refilter()
}

// update takes the messages every list answers: a log read, the
// questions, the end of an attach the view named view started.
func (l list[R]) update(cfg Config, view string, msg tea.Msg) (list[R], tea.Cmd) {
	switch msg := msg.(type) {
	case logMsg:
		l.out = l.out.receive(msg)
	case questionsMsg:
		l.asks = l.asks.receive(msg)
	case attachedMsg, sessionGoneMsg:
		cmd, zoom := attachDone(cfg, view, l.selectedID(), msg)
		l.zoom = l.zoom || zoom
		return l, cmd
	}
	return l, nil
}

// follow points the preview at the selected row's log when it changed
// (another row, or the same row's newer run) and reads it then, or after
// every read of the rows (refreshed: the log may have grown).
func (l list[R]) follow(refreshed bool) (list[R], tea.Cmd) {
	who, path := l.selectedLog()
	if who == l.out.agent && path == l.out.path && !refreshed {
		return l, nil
	}
	l.out = l.out.forLog(who, path)
	return l, l.read()
}

// read reads the tail of the selected row's log.
func (l list[R]) read() tea.Cmd {
	who, path := l.selectedLog()
	if path == "" {
		return nil
	}
	return readLog(who, path)
}

func (l list[R]) selectedLog() (who, path string) {
	if r, ok := l.selected(); ok {
		return l.spec.id(r), l.spec.log(r)
	}
	return "", ""
}

// shortHelp is the footer's hint line: the filter prompt's keys while it
// is open, else the view's footer actions.
func (l list[R]) shortHelp(footer ...action) []key.Binding {
	if l.filtering {
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep filter")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear")),
		}
	}
	return l.keys.short(len(l.asks.waiting) > 0, footer...)
}

// fullHelp is every key of the view, in two columns.
func (l list[R]) fullHelp() [][]key.Binding { return l.keys.full(len(l.asks.waiting) > 0) }

// lines are the list's lines under the view's frame: the filter with its
// count, then the questions that wait and the answer line.
func (l list[R]) lines(width int, p palette, now time.Time) []string {
	var out []string
	if l.filtering || l.filter.Value() != "" {
		out = append(out, fit(fmt.Sprintf("%s  %d of %d %ss", l.filter.view(l.filtering), len(l.rows), len(l.all),
			l.spec.words.noun), width))
	}
	return append(out, l.asks.lines(width, p, now)...)
}

// noMatch is the line that stands for the table when the filter hides
// every row.
func (l list[R]) noMatch(p palette) (string, bool) {
	if len(l.rows) > 0 || len(l.all) == 0 {
		return "", false
	}
	return p.dim.Render("no " + l.spec.words.noun + " matches /" + clean(l.filter.Value())), true
}

func (l list[R]) urgent(i int) bool { return l.spec.urgent(l.rows[i]) }

// visible is which rows a table of budget lines shows (pickRows).
func (l list[R]) visible(budget int) []int { return pickRows(len(l.rows), l.sel, budget, l.urgent) }

// plan chooses how a view width×height fills with the table, the
// preview and fixed(level, table width) lines around the table (head and
// sections) plus tail(width) lines under it.
func (l list[R]) plan(width, height int, steps shrinkSteps, fixed func(level, width int) int, tail func(width int) int) viewPlan {
	if l.zoom {
		return viewPlan{preview: max(2, height-tail(width))}
	}
	beside, tw := splitBeside(width)
	if height <= 0 {
		return viewPlan{preview: previewFallback, beside: beside}
	}
	t := tableFit{n: len(l.rows), sel: l.sel, urgent: l.urgent, visible: l.visible}
	under := tail(tw)
	return fitPlan(steps, height, beside, t, func(level int) int { return fixed(level, tw) + under })
}
