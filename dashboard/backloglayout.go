package dashboard

import (
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// Shrink levels of the backlog view, applied in order until the frame
// fits. Running, parked and failed rows go last.
const (
	blFull         = iota
	blSmallPreview // the preview shrinks to its minimum
	blCompact      // the questions and the selected issue take one line each
	blCutTable     // rows that are neither running, parked nor failed are hidden
	blNoPreview    // the preview goes
	blNoSections   // the questions, dropped and selection lines go
	blUrgentWindow // only the urgent rows near the selection
)

// frameOnly: the one-frame mode, with no selection and no preview.
func (v backlogView) frameOnly() bool { return v.height < 0 }

// sections are the lines under the table the level allows.
func (v backlogView) sections(level, width int) []string {
	if level >= blNoSections {
		return nil
	}
	brief := level >= blCompact
	out := v.selection(width, brief)
	out = append(out, v.questions(width, brief)...)
	return append(out, v.dropped(width)...)
}

// layout chooses the plan for the view's box.
func (v backlogView) layout() viewPlan {
	steps := shrinkSteps{smallPreview: blSmallPreview, cutTable: blCutTable, noPreview: blNoPreview, urgentWindow: blUrgentWindow}
	return v.list.plan(v.width, v.height, steps, func(level, width int) int {
		return len(v.head(width)) + len(v.sections(level, width))
	}, func(width int) int { return len(v.tail(width)) })
}

// sized fits the preview's viewport to the plan.
func (v backlogView) sized() backlogView {
	v.list.out = v.list.out.sizedFor(v.width, v.plan)
	return v
}

// View draws the plan: header and tally, table, selection, questions,
// preview (under the table, or beside it on wide windows), then the
// result line.
func (v backlogView) View() string {
	pl := v.plan
	pal := newPalette(v.cfg.Color)
	if v.list.zoom {
		return v.list.out.zoomed(v.width, pl, pal, v.tail(v.width))
	}
	width := pl.tableWidth(v.width)
	left := v.head(width)
	if !v.found {
		return v.list.out.frame(left, v.tail(width), viewPlan{}, width, v.height, pal)
	}
	left = append(left, v.table(width, pl.rows)...)
	left = append(left, v.sections(pl.level, width)...)
	return v.list.out.frame(left, v.tail(width), pl, width, v.height, pal)
}

// BacklogFrame is the one-frame mode of the backlog view (`dashboard
// --view backlog` without --watch): header, tally, every issue, the
// questions and the result, nothing selected. ok false: the lane has no
// backlog run.
func BacklogFrame(st backlog.StatusView, ok bool, width int, color bool, now time.Time) string {
	v := backlogView{cfg: Config{Color: color, Now: func() time.Time { return now }}, st: st, found: ok, loaded: true,
		readAt: now, now: now, width: width, height: -1, list: newList(issueRows(), "").setRows(st.Issues)}
	v.list.sel = -1 // nothing selected
	lines := v.head(width)
	if ok {
		lines = append(lines, v.table(width, 0)...)
		lines = append(lines, v.sections(blFull, width)...)
	}
	lines = append(lines, v.tail(width)...)
	return strings.Join(lines, "\n") + "\n"
}
