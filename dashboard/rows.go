package dashboard

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// urgent reports whether an agent's row must stay visible when the table
// is cut: it is in flight, waits for a person or failed, which is what a
// user watches for.
func urgent(a state.Agent) bool {
	switch a.State {
	case state.AgentRunning, state.AgentLaunching, state.AgentWaitingForInput, state.AgentUsageLimited,
		state.AgentFailed, state.AgentTimedOut, state.AgentLost, state.AgentTerminated, state.AgentNoProgress:
		return true
	}
	return false
}

// column is one column of a list view's table.
type column[R any] struct {
	name  string
	width int
	cell  func(r R) string
}

// headLine is a table's header: the columns' names, after room for the
// selection marker.
func headLine[R any](cols []column[R], gap string, p palette) string {
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = pad(c.name, c.width)
	}
	return p.bold.Render(strings.TrimRight("  "+strings.Join(head, gap), " "))
}

// rowLine is r's row: each cell padded to its column and styled by
// style (column name, row, cell), the first marked when selected.
func rowLine[R any](r R, cols []column[R], gap string, selected bool, style func(col string, r R, cell string) string, p palette) string {
	cells := make([]string, len(cols))
	for j, c := range cols {
		cells[j] = style(c.name, r, pad(c.cell(r), c.width))
	}
	mark := "  "
	if selected {
		mark = "› "
		cells[0] = p.sel.Render(cells[0])
	}
	return strings.TrimRight(mark+strings.Join(cells, gap), " ")
}

// tableLines are the rows of a table of n within budget lines (0: all),
// those pickRows keeps, drawn by row; each run of hidden rows is stood
// for by the placeholder hidden writes for it (rows from:to, where they
// are: "above", "below", or "" between two shown rows).
func tableLines(n, sel, budget int, must func(int) bool, row func(i int) string,
	hidden func(from, to int, where string) string, p palette, width int) []string {
	var out []string
	next := 0 // first row not yet drawn or accounted for
	for k, i := range pickRows(n, sel, budget, must) {
		if i > next {
			where := "above"
			if k > 0 {
				where = ""
			}
			out = append(out, fit(p.dim.Render(hidden(next, i, where)), width))
		}
		out = append(out, row(i))
		next = i + 1
	}
	if next < n {
		out = append(out, fit(p.dim.Render(hidden(next, n, "below")), width))
	}
	return out
}

// visibleRows chooses which of agents' rows a table of budget lines shows
// (rows plus the "… N more" lines that stand for each run of hidden rows):
// the selected row, then running and failed rows nearest the selection,
// then any others nearest the selection. It returns indexes in table
// order; budget <= 0 or enough room shows every row.
func visibleRows(agents []state.Agent, sel, budget int) []int {
	return pickRows(len(agents), sel, budget, func(i int) bool { return urgent(agents[i]) })
}

// pickRows is visibleRows for any table of n rows: the rows for which
// must reports true are kept first (with the selected one), then the
// others nearest the selection.
func pickRows(n, sel, budget int, must func(int) bool) []int {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	if budget <= 0 || n <= budget {
		return all
	}
	sel = max(0, min(sel, n-1))
	dist := func(i int) int { return max(i-sel, sel-i) }
	order := slices.Clone(all)
	slices.SortStableFunc(order, func(a, b int) int {
		if ua, ub := must(a) || a == sel, must(b) || b == sel; ua != ub {
			if ua {
				return -1
			}
			return 1
		}
		return cmp.Compare(dist(a), dist(b))
	})
	shown := make([]bool, n)
	hidden := func(i int) bool { return i >= 0 && i < n && !shown[i] }
	rows, gaps := 0, 1 // nothing shown: one run of hidden rows
	for _, i := range order {
		// Showing i changes the number of hidden runs by -1, 0 or +1.
		delta := 0
		switch l, r := hidden(i-1), hidden(i+1); {
		case l && r:
			delta = 1
		case !l && !r:
			delta = -1
		}
		if rows+1+gaps+delta > budget && (rows > 0 || i != sel) {
			continue
		}
		shown[i] = true
		rows, gaps = rows+1, gaps+delta
	}
	var out []int
	for i, ok := range shown {
		if ok {
			out = append(out, i)
		}
	}
	return out
}

// hiddenLine is the placeholder for agents[from:to], hidden rows before
// the first shown row (above), after the last (below) or between two.
func hiddenLine(agents []state.Agent, from, to int, where string) string {
	t := countAgents(agents[from:to])
	var parts []string
	if t.ok > 0 {
		parts = append(parts, fmt.Sprintf("%d ok", t.ok))
	}
	if t.pending > 0 {
		parts = append(parts, fmt.Sprintf("%d pending", t.pending))
	}
	if t.running > 0 {
		parts = append(parts, fmt.Sprintf("%d running", t.running))
	}
	if t.failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", t.failed))
	}
	if t.waiting > 0 {
		parts = append(parts, fmt.Sprintf("%d waiting for input", t.waiting))
	}
	s := fmt.Sprintf("  … %d more", to-from)
	if where != "" {
		s += " " + where
	}
	return s + " (" + strings.Join(parts, ", ") + ")"
}
