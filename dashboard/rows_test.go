package dashboard

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// agentsOf builds agents from a state code per row: r running, f failed,
// l lost, c completed, p pending.
func agentsOf(codes string) []state.Agent {
	st := map[rune]string{'r': state.AgentRunning, 'f': state.AgentFailed, 'l': state.AgentLost,
		'c': state.AgentCompleted, 'p': state.AgentPending}
	var out []state.Agent
	for i, c := range codes {
		out = append(out, state.Agent{ID: fmt.Sprintf("A%02d", i), State: st[c]})
	}
	return out
}

func TestVisibleRowsKeepsRunningAndFailed(t *testing.T) {
	tests := []struct {
		name   string
		codes  string
		sel    int
		budget int
		want   []int
	}{
		{"fits", "ccrf", 0, 10, []int{0, 1, 2, 3}},
		{"no budget shows all", "ccccc", 0, 0, []int{0, 1, 2, 3, 4}},
		// 12 rows, 5 lines: selected 0, failed 5 and running 11, and the
		// two placeholders between them.
		{"urgent far from selection", "cccccfcccccr", 0, 5, []int{0, 5, 11}},
		// A line left over goes to the selection's neighbour.
		{"neighbour fills", "cccccfcccccr", 0, 6, []int{0, 1, 5, 11}},
		// Filling a gap frees its placeholder line.
		{"gap filled", "cccccfcccccr", 0, 8, []int{0, 1, 2, 3, 4, 5, 11}},
		{"selection in the middle", "cccccccccccc", 6, 5, []int{5, 6, 7}},
		{"adjacent urgent rows need one placeholder", "ccccccrrffcc", 0, 7, []int{0, 6, 7, 8, 9}},
		{"selected always shown", "cccccc", 3, 1, []int{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			agents := agentsOf(tt.codes)
			got := visibleRows(agents, tt.sel, tt.budget)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("visibleRows(%s, sel %d, %d lines) = %v, want %v", tt.codes, tt.sel, tt.budget, got, tt.want)
			}
			if tt.budget >= 3 { // room for the selection and two placeholders
				if lines := len(got) + placeholderCount(got, len(agents)); lines > tt.budget {
					t.Errorf("%d rows + placeholders = %d lines, over budget %d", len(got), lines, tt.budget)
				}
			}
		})
	}
}

// Whatever the selection and budget (above the number of urgent rows),
// no running or failed row is ever hidden.
func TestVisibleRowsNeverHidesUrgentRows(t *testing.T) {
	agents := bigLane(60).Waves[0].Agents // every 5th running, failed, lost
	nUrgent := 0
	for _, a := range agents {
		if urgent(a) {
			nUrgent++
		}
	}
	for sel := 0; sel < len(agents); sel += 7 {
		for budget := 2*nUrgent + 2; budget < len(agents); budget += 5 {
			got := visibleRows(agents, sel, budget)
			for i, a := range agents {
				if urgent(a) && !slices.Contains(got, i) {
					t.Fatalf("sel %d budget %d hides %s (%s)", sel, budget, a.ID, a.State)
				}
			}
			if !slices.Contains(got, sel) {
				t.Fatalf("sel %d budget %d hides the selection", sel, budget)
			}
		}
	}
}

func TestHiddenLineCountsStates(t *testing.T) {
	got := hiddenLine(agentsOf("ccpfr"), 0, 4, "below")
	if got != "  … 4 more below (2 ok, 1 pending, 1 failed)" {
		t.Fatalf("hiddenLine = %q", got)
	}
	if !strings.Contains(hiddenLine(agentsOf("cc"), 0, 2, ""), "… 2 more (2 ok)") {
		t.Fatalf("middle placeholder: %q", hiddenLine(agentsOf("cc"), 0, 2, ""))
	}
}
