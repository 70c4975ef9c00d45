package dashboard

import (
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/supervisor"
)

// backlogPlan is how the backlog view fills its box, as wavePlan is for
// the wave view: shrink level, table line budget (0: every row), preview
// height with its title (0: none) and, beside the table, its width.
type backlogPlan struct {
	level   int
	rows    int
	preview int
	beside  int
}

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

func backlogPreviewMin(level int) int {
	switch {
	case level < blSmallPreview:
		return previewRoomy
	case level < blNoPreview:
		return previewMinimal
	}
	return 0
}

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
func (v backlogView) layout() backlogPlan {
	if v.zoom {
		return backlogPlan{preview: max(2, v.height-len(v.tail(v.width)))}
	}
	beside, width := 0, v.width
	if v.width >= besideMinWidth {
		beside = v.width * 2 / 5
		width = v.width - beside - 1
	}
	if v.height <= 0 {
		return backlogPlan{preview: previewFallback, beside: beside}
	}
	issues := v.st.Issues
	full := 1 + max(1, len(issues))
	var must []int
	for i, is := range issues {
		if i == v.selIdx || urgentIssue(is) {
			must = append(must, i)
		}
	}
	mustLines := 1 + len(must) + placeholderCount(must, len(issues))
	head, tail := len(v.head(width)), len(v.tail(width))
	for level := blFull; ; level++ {
		fixed := head + len(v.sections(level, width)) + tail
		pmin := backlogPreviewMin(level)
		if beside > 0 {
			pmin = 0
		}
		plan := backlogPlan{level: level, beside: beside}
		switch {
		case level < blCutTable:
			if fixed+pmin+full > v.height {
				continue
			}
		case level < blUrgentWindow:
			plan.rows = v.height - fixed - pmin - 1
			if plan.rows < mustLines-1 {
				continue
			}
		default:
			plan.rows = max(1, v.height-fixed-1)
		}
		used := full
		if plan.rows > 0 {
			rows := v.visibleIssues(plan.rows)
			used = 1 + len(rows) + placeholderCount(rows, len(issues))
		}
		plan.preview = v.height - fixed - used
		if beside > 0 {
			plan.preview = v.height
		}
		if plan.preview < 2 || level >= blNoPreview && beside == 0 {
			plan.preview = 0
		}
		return plan
	}
}

// sized fits the preview's viewport to the plan.
func (v backlogView) sized() backlogView {
	w := v.width
	if v.plan.beside > 0 {
		w = v.plan.beside
	}
	v.out = v.out.resize(w, max(1, v.plan.preview-1))
	return v
}

// View draws the plan: header and tally, table, selection, questions,
// preview (under the table, or beside it on wide windows), then the
// result line.
func (v backlogView) View() string {
	pl := v.plan
	pal := newPalette(v.cfg.Color)
	if v.zoom {
		lines := append([]string{v.out.title(v.width, pal)}, strings.Split(v.out.body(max(1, pl.preview-1)), "\n")...)
		return strings.Join(append(lines, v.tail(v.width)...), "\n")
	}
	width := v.width
	if pl.beside > 0 {
		width = v.width - pl.beside - 1
	}
	left := v.head(width)
	if v.found {
		left = append(left, v.table(width, pl.rows)...)
		left = append(left, v.sections(pl.level, width)...)
	}
	if v.found && pl.preview > 0 && pl.beside == 0 {
		left = append(left, v.out.title(width, pal))
		left = append(left, strings.Split(v.out.body(pl.preview-1), "\n")...)
	}
	left = append(left, v.tail(width)...)
	if pl.beside == 0 || !v.found {
		return strings.Join(left, "\n")
	}
	right := append([]string{v.out.title(pl.beside, pal)}, strings.Split(v.out.body(max(1, pl.preview-1)), "\n")...)
	return joinColumns(left, right, width, v.height)
}

// BacklogFrame is the one-frame mode of the backlog view (`dashboard
// --view backlog` without --watch): header, tally, every issue, the
// questions and the result, nothing selected. ok false: the lane has no
// backlog run.
func BacklogFrame(st supervisor.StatusView, ok bool, width int, color bool, now time.Time) string {
	v := backlogView{cfg: Config{Color: color, Now: func() time.Time { return now }}, st: st, found: ok, loaded: true,
		readAt: now, now: now, width: width, height: -1, selIdx: -1}
	lines := v.head(width)
	if ok {
		lines = append(lines, v.table(width, 0)...)
		lines = append(lines, v.sections(blFull, width)...)
	}
	lines = append(lines, v.tail(width)...)
	return strings.Join(lines, "\n") + "\n"
}
