package dashboard

import "strings"

// sized fits the preview's viewport to the plan.
func (v waveView) sized() waveView {
	w := v.width
	if v.plan.beside > 0 {
		w = v.plan.beside
	}
	v.out = v.out.resize(w, max(1, v.plan.preview-1))
	return v
}

// View draws the plan: header, table, sections, preview (under the
// table, or beside it on wide windows), then the filter and result lines.
func (v waveView) View() string {
	pl := v.plan
	pal := newPalette(v.cfg.Color)
	if v.zoom {
		o := v.options(v.width)
		lines := append([]string{v.out.title(v.width, pal)}, strings.Split(v.out.body(max(1, pl.preview-1)), "\n")...)
		return strings.Join(append(lines, v.tail(o)...), "\n")
	}
	width := v.width
	if pl.beside > 0 {
		width = v.width - pl.beside - 1
	}
	o := v.options(width)
	o.MaxAgentRows = pl.rows
	var b strings.Builder
	b.WriteString(strings.Join(v.head(pl.level, o), "\n") + "\n")
	if w := v.shown(); w != nil {
		agents, sel := v.visibleAgents()
		if len(agents) == 0 && len(w.Agents) > 0 {
			b.WriteString(pal.dim.Render("no agent matches /"+clean(v.filter.Value())) + "\n")
		} else {
			shown := *w
			shown.Agents = agents
			o.Selected = sel
			writeAgents(&b, shown, pal, o)
		}
	}
	if s := v.sections(pl.level, o); len(s) > 0 {
		b.WriteString(strings.Join(s, "\n") + "\n")
	}
	left := splitLines(b.String())
	if pl.preview > 0 && pl.beside == 0 {
		left = append(left, v.out.title(width, pal))
		left = append(left, strings.Split(v.out.body(pl.preview-1), "\n")...)
	}
	left = append(left, v.tail(o)...)
	if pl.beside == 0 {
		return strings.Join(left, "\n")
	}
	right := append([]string{v.out.title(pl.beside, pal)}, strings.Split(v.out.body(max(1, pl.preview-1)), "\n")...)
	return joinColumns(left, right, width, v.height)
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
