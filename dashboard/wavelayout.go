package dashboard

import (
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// wavePlan is how the wave view fills its box: the shrink level, the
// agent table's line budget (0: every row), the preview pane's height
// with its title line (0: none) and, when it sits beside the table, its
// width.
type wavePlan struct {
	level   int
	rows    int
	preview int
	beside  int
}

// Shrink levels, applied in order until the frame fits. Running and
// failed rows go last: everything else shrinks first.
const (
	lvFull          = iota
	lvNoEvents      // the last events go
	lvCompact       // closure on one line; no file line or spacer
	lvFailuresLine  // failures on one line
	lvBlockersLine  // blockers and problems on one line
	lvSmallPreview  // the preview shrinks to its minimum
	lvCutTable      // rows that are neither running nor failed are hidden
	lvNoPreview     // the preview goes
	lvNoSections    // closure, failures and blockers go
	lvUrgentWindow  // only the running and failed rows near the selection
	previewRoomy    = 8
	previewMinimal  = 4
	besideMinWidth  = 160
	previewFallback = 12 // preview height before the first window size
)

func previewMin(level int) int {
	switch {
	case level < lvSmallPreview:
		return previewRoomy
	case level < lvNoPreview:
		return previewMinimal
	}
	return 0
}

// head is the lane header, the wave header and progress (with the file
// line and a spacer until lvCompact).
func (v waveView) head(level int, o Options) []string {
	p := newPalette(v.cfg.Color)
	o.brief = level >= lvCompact
	var b strings.Builder
	writeLaneHeader(&b, v.lane, p, o)
	w := v.shown()
	if w == nil {
		if v.wave >= 0 {
			b.WriteString(p.dim.Render("wave "+itoa(v.wave)+" has not run on this lane") + "\n")
		} else {
			b.WriteString(p.dim.Render("no wave has run on this lane yet") + "\n")
		}
		return splitLines(b.String())
	}
	writeWaveHead(&b, *w, p, o, true, level < lvCompact)
	if level < lvCompact {
		b.WriteString("\n")
	}
	return splitLines(b.String())
}

// sections are the wave's closure, failures, blockers, events and
// problems in the form the level allows.
func (v waveView) sections(level int, o Options) []string {
	p := newPalette(v.cfg.Color)
	var b strings.Builder
	if w := v.shown(); w != nil {
		switch {
		case level < lvCompact:
			writeClosure(&b, w.Closure, p, o)
		case level < lvNoSections:
			writeClosureLine(&b, w.Closure, p, o)
		}
		switch {
		case level < lvFailuresLine:
			writeFailures(&b, w.Failures, p, o)
		case level < lvNoSections:
			writeFailuresLine(&b, w.Failures, p, o)
		}
		switch {
		case level < lvBlockersLine:
			writeBlockers(&b, w.Blockers, p, o)
		case level < lvNoSections:
			writeBlockersLine(&b, w.Blockers, p, o)
		}
	}
	if level < lvNoEvents {
		writeEvents(&b, v.events(), p, o)
	}
	if level < lvBlockersLine {
		writeProblems(&b, v.lane.Problems, p, o)
	} else {
		writeProblemsLine(&b, v.lane.Problems, p, o)
	}
	return splitLines(b.String())
}

// events are the shown wave's, or the lane's when it has several waves
// (as in Render).
func (v waveView) events() []state.EventRef {
	w := v.shown()
	switch {
	case w == nil && v.wave >= 0:
		return nil
	case w == nil || len(v.lane.Waves) > 1:
		return v.lane.LastEvents
	}
	return w.LastEvents
}

// layout chooses the plan for the view's box.
func (v waveView) layout() wavePlan {
	if v.zoom {
		return wavePlan{preview: max(2, v.height-len(v.tail(Options{Width: v.width})))}
	}
	beside := 0
	width := v.width
	if v.width >= besideMinWidth {
		beside = v.width * 2 / 5
		width = v.width - beside - 1
	}
	if v.height <= 0 {
		return wavePlan{preview: previewFallback, beside: beside}
	}
	o := v.options(width)
	agents, sel := v.visibleAgents()
	full := 1 + max(1, len(agents))
	must := 1 + urgentLines(agents, sel)
	tail := len(v.tail(o))
	for level := lvFull; ; level++ {
		fixed := len(v.head(level, o)) + len(v.sections(level, o)) + tail
		pmin := previewMin(level)
		if beside > 0 {
			pmin = 0
		}
		plan := wavePlan{level: level, beside: beside}
		switch {
		case level < lvCutTable:
			if fixed+pmin+full > v.height {
				continue
			}
		case level < lvUrgentWindow:
			plan.rows = v.height - fixed - pmin - 1
			if plan.rows < must-1 {
				continue
			}
		default:
			plan.rows = max(1, v.height-fixed-1)
		}
		used := full
		if plan.rows > 0 {
			used = 1 + shownLines(agents, sel, plan.rows)
		}
		plan.preview = v.height - fixed - used
		if beside > 0 {
			plan.preview = v.height
		}
		if plan.preview < 2 || level >= lvNoPreview && beside == 0 {
			plan.preview = 0
		}
		return plan
	}
}

// urgentLines is how many lines the rows that must stay take: the
// selected, running and failed rows and a placeholder per hidden run.
func urgentLines(agents []state.Agent, sel int) int {
	var rows []int
	for i, a := range agents {
		if i == sel || urgent(a) {
			rows = append(rows, i)
		}
	}
	return len(rows) + placeholderCount(rows, len(agents))
}

// shownLines is how many lines the table body takes within budget.
func shownLines(agents []state.Agent, sel, budget int) int {
	rows := visibleRows(agents, sel, budget)
	return len(rows) + placeholderCount(rows, len(agents))
}

func placeholderCount(rows []int, n int) int {
	k, next := 0, 0
	for _, i := range rows {
		if i > next {
			k++
		}
		next = i + 1
	}
	if next < n {
		k++
	}
	return k
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
