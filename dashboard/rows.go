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
	case state.AgentRunning, state.AgentLaunching, state.AgentWaitingForInput,
		state.AgentFailed, state.AgentTimedOut, state.AgentLost, state.AgentTerminated:
		return true
	}
	return false
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
