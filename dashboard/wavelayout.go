package dashboard

import (
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// Shrink levels of the wave view, applied in order until the frame fits.
const (
	lvFull         = iota
	lvNoEvents     // the last events go
	lvCompact      // closure on one line; no file line or spacer
	lvFailuresLine // failures on one line
	lvBlockersLine // blockers and problems on one line
	lvSmallPreview // the preview shrinks to its minimum
	lvCutTable     // rows that are neither running nor failed are hidden
	lvNoPreview    // the preview goes
	lvNoSections   // closure, failures and blockers go
	lvUrgentWindow // only the running and failed rows near the selection
)

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
func (v waveView) layout() viewPlan {
	steps := shrinkSteps{smallPreview: lvSmallPreview, cutTable: lvCutTable, noPreview: lvNoPreview, urgentWindow: lvUrgentWindow}
	return v.list.plan(v.width, v.height, steps, func(level, width int) int {
		o := v.options(width)
		return len(v.head(level, o)) + len(v.sections(level, o))
	}, func(width int) int { return len(v.tail(v.options(width))) })
}
