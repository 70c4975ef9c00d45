package dashboard

import "strings"

// sized fits the preview's viewport to the plan.
func (v waveView) sized() waveView {
	v.list.out = v.list.out.sizedFor(v.width, v.plan)
	return v
}

// View draws the plan: header, table, sections, preview (under the
// table, or beside it on wide windows), then the filter and result lines.
func (v waveView) View() string {
	pl := v.plan
	pal := newPalette(v.cfg.Color)
	if v.list.zoom {
		return v.list.out.zoomed(v.width, pl, pal, v.tail(v.options(v.width)))
	}
	width := pl.tableWidth(v.width)
	o := v.options(width)
	o.MaxAgentRows = pl.rows
	var b strings.Builder
	b.WriteString(strings.Join(v.head(pl.level, o), "\n") + "\n")
	if w := v.shown(); w != nil {
		if line, none := v.list.noMatch(pal); none {
			b.WriteString(line + "\n")
		} else {
			shown := *w
			shown.Agents = v.list.rows
			writeAgents(&b, shown, pal, o)
		}
	}
	if s := v.sections(pl.level, o); len(s) > 0 {
		b.WriteString(strings.Join(s, "\n") + "\n")
	}
	return v.list.out.frame(splitLines(b.String()), v.tail(o), pl, width, v.height, pal)
}
