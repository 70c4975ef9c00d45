package dashboard

import "strings"

// viewPlan is how a view (waves, backlog) fills its box: the shrink
// level, the table's line budget (0: every row), the preview pane's
// height with its title line (0: none) and, when it sits beside the
// table, its width.
type viewPlan struct {
	level   int
	rows    int
	preview int
	beside  int
}

const (
	previewRoomy    = 8
	previewMinimal  = 4
	besideMinWidth  = 160
	previewFallback = 12 // preview height before the first window size
)

// shrinkSteps are the levels at which a view's shrinking reaches the
// preview and the table; the levels between shrink the view's own
// sections.
type shrinkSteps struct {
	smallPreview int // the preview shrinks to its minimum
	cutTable     int // rows that need no one are hidden
	noPreview    int // the preview goes
	urgentWindow int // only the urgent rows near the selection
}

func (s shrinkSteps) previewMin(level int) int {
	switch {
	case level < s.smallPreview:
		return previewRoomy
	case level < s.noPreview:
		return previewMinimal
	}
	return 0
}

// splitBeside is the preview's width beside the table (0: under it) and
// the table's width, for a view width wide.
func splitBeside(width int) (beside, table int) {
	if width < besideMinWidth {
		return 0, width
	}
	beside = width * 2 / 5
	return beside, width - beside - 1
}

// tableWidth is the table's width in a view width wide.
func (pl viewPlan) tableWidth(width int) int {
	if pl.beside > 0 {
		return width - pl.beside - 1
	}
	return width
}

// tableFit is what fitPlan needs of a view's table: its n rows, the
// selected one, the urgent ones (they stay when it is cut) and the rows
// a budget of lines shows.
type tableFit struct {
	n, sel  int
	urgent  func(i int) bool
	visible func(budget int) []int
}

// lines is how many lines rows take with the header line and a
// placeholder per hidden run.
func (t tableFit) lines(rows []int) int { return 1 + len(rows) + placeholderCount(rows, t.n) }

// fitPlan is the plan of the first shrink level at which the frame fits
// height: fixed(level) lines around the table (head, sections, tail), the
// table whole or cut to keep its selected and urgent rows, and a preview
// of at least its minimum under the table (none needed beside it).
// Urgent rows go last: everything else shrinks first.
func fitPlan(s shrinkSteps, height, beside int, t tableFit, fixed func(level int) int) viewPlan {
	full := 1 + max(1, t.n)
	var must []int
	for i := range t.n {
		if i == t.sel || t.urgent(i) {
			must = append(must, i)
		}
	}
	mustLines := t.lines(must)
	for level := 0; ; level++ {
		f := fixed(level)
		pmin := s.previewMin(level)
		if beside > 0 {
			pmin = 0
		}
		plan := viewPlan{level: level, beside: beside}
		switch {
		case level < s.cutTable:
			if f+pmin+full > height {
				continue
			}
		case level < s.urgentWindow:
			plan.rows = height - f - pmin - 1
			if plan.rows < mustLines-1 {
				continue
			}
		default:
			plan.rows = max(1, height-f-1)
		}
		used := full
		if plan.rows > 0 {
			used = t.lines(t.visible(plan.rows))
		}
		plan.preview = height - f - used
		if beside > 0 {
			plan.preview = height
		}
		if plan.preview < 2 || level >= s.noPreview && beside == 0 {
			plan.preview = 0
		}
		return plan
	}
}

// sizedFor fits the viewport to the plan of a view width wide.
func (p preview) sizedFor(width int, pl viewPlan) preview {
	if pl.beside > 0 {
		width = pl.beside
	}
	return p.resize(width, max(1, pl.preview-1))
}

// zoomed is the preview filling a view width wide, over its tail lines.
func (p preview) zoomed(width int, pl viewPlan, pal palette, tail []string) string {
	lines := append([]string{p.title(width, pal)}, strings.Split(p.body(max(1, pl.preview-1)), "\n")...)
	return strings.Join(append(lines, tail...), "\n")
}

// frame sets the preview under left (the table's column, width wide),
// then the tail lines; or, when the plan puts it beside, to the right of
// them, height lines.
func (p preview) frame(left, tail []string, pl viewPlan, width, height int, pal palette) string {
	if pl.preview > 0 && pl.beside == 0 {
		left = append(left, p.title(width, pal))
		left = append(left, strings.Split(p.body(pl.preview-1), "\n")...)
	}
	left = append(left, tail...)
	if pl.beside == 0 {
		return strings.Join(left, "\n")
	}
	right := append([]string{p.title(pl.beside, pal)}, strings.Split(p.body(max(1, pl.preview-1)), "\n")...)
	return joinColumns(left, right, width, height)
}

// joinColumns sets right beside left (padded to width), h lines.
func joinColumns(left, right []string, width, h int) string {
	var b strings.Builder
	for i := range max(h, len(left)) {
		l, r := "", ""
		if i < len(left) {
			l = fit(left[i], width)
		}
		if i < len(right) {
			r = right[i]
		}
		b.WriteString(l + strings.Repeat(" ", max(0, width-ansiWidth(l))) + " " + r)
		if i < max(h, len(left))-1 {
			b.WriteString("\n")
		}
	}
	return b.String()
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
