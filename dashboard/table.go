package dashboard

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// agentColumn is one column of the agent table.
type agentColumn = column[state.Agent]

// agentColumns lays out the table for the width: role and executor are
// dropped on narrow terminals, and the title and last-line columns share
// whatever is left.
func agentColumns(agents []state.Agent, o Options) []agentColumn {
	widest := func(min int, f func(state.Agent) string) int {
		for _, a := range agents {
			min = max(min, ansi.StringWidth(f(a)))
		}
		return min
	}
	id := func(a state.Agent) string { return clean(a.ID) }
	role := func(a state.Agent) string { return orDash(clean(a.Role)) }
	exe := func(a state.Agent) string { return orDash(clean(a.Executor)) }
	exit := func(a state.Agent) string { return exitCell(a) }
	st := func(a state.Agent) string { return a.State }
	cols := []agentColumn{
		{"ID", widest(2, id), id},
		{"STATE", widest(10, st), st},
	}
	if o.Width >= 110 {
		cols = append(cols, agentColumn{"ROLE", widest(4, role), role}, agentColumn{"EXEC", widest(4, exe), exe})
	}
	cols = append(cols,
		agentColumn{"ATT", 3, func(a state.Agent) string { return fmt.Sprint(a.Attempt) }},
		agentColumn{"ELAPSED", 7, func(a state.Agent) string { return span(a.StartedAt, a.FinishedAt, o.Now) }},
		agentColumn{"HB", 5, func(a state.Agent) string { return heartbeat(a, o) }},
		agentColumn{"EXIT", widest(4, exit), exit},
	)
	if anyUsage(agents) {
		cols = append(cols, agentColumn{"COST", widest(4, costCell), costCell})
	}
	used := 2 // selection marker
	for _, c := range cols {
		used += c.width + 2
	}
	rem := o.Width - used
	title := func(a state.Agent) string { return clean(a.Title) }
	last := lastCell
	switch {
	case rem >= 32:
		tw := min(widest(5, title), max(12, rem/3))
		cols = append(cols, agentColumn{"TITLE", tw, title}, agentColumn{"LAST", rem - tw - 2, last})
	case rem >= 8:
		cols = append(cols, agentColumn{"LAST", rem, last})
	}
	return cols
}

// anyUsage reports whether some agent reported usage: the COST column is
// only drawn then.
func anyUsage(agents []state.Agent) bool {
	for _, a := range agents {
		if a.Usage != nil {
			return true
		}
	}
	return false
}

// costCell is the agent's spend: its cost, else its tokens, else "-".
func costCell(a state.Agent) string {
	switch u := a.Usage; {
	case u == nil:
		return "-"
	case u.CostUSD != nil:
		return usage.FormatCost(*u.CostUSD)
	default:
		return usage.FormatTokens(u.Tokens()) + "t"
	}
}

func writeAgents(b *strings.Builder, w state.Wave, p palette, o Options) {
	if len(w.Agents) == 0 {
		fmt.Fprintln(b, p.dim.Render("no agents recorded"))
		return
	}
	cols := agentColumns(w.Agents, o)
	fmt.Fprintln(b, headLine(cols, "  ", p))
	style := func(c string, a state.Agent, cell string) string {
		switch {
		case c == "STATE":
			return p.agentStyle(a.State).Render(cell)
		case c == "HB" && hbStale(a, o):
			return p.warn.Render(cell)
		}
		return cell
	}
	row := func(i int) string { return rowLine(w.Agents[i], cols, "  ", i == o.Selected, style, p) }
	hidden := func(from, to int, where string) string { return hiddenLine(w.Agents, from, to, where) }
	for _, l := range tableLines(len(w.Agents), o.Selected, o.MaxAgentRows, func(i int) bool { return urgent(w.Agents[i]) },
		row, hidden, p, o.Width) {
		fmt.Fprintln(b, l)
	}
}

func writeClosure(b *strings.Builder, stages []state.Stage, p palette, o Options) {
	if len(stages) == 0 {
		return
	}
	fmt.Fprintln(b, "\n"+p.bold.Render("Closure"))
	pw := 0
	for _, s := range stages {
		pw = max(pw, ansi.StringWidth(s.Phase))
	}
	for _, s := range stages {
		line := fmt.Sprintf("  %s  %s  %s", pad(clean(s.Phase), pw),
			p.agentStyle(s.State).Render(pad(orDash(s.State), 8)), orDash(clean(strings.Join(s.Agents, ","))))
		if s.Detail != "" {
			line += "  " + clean(s.Detail)
		}
		fmt.Fprintln(b, fit(line, o.Width))
	}
}

func writeFailures(b *strings.Builder, fs []state.Failure, p palette, o Options) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintln(b, "\n"+p.bold.Render("Failures"))
	for _, f := range fs {
		line := fmt.Sprintf("  %s  %s  %s", orDash(clean(f.AgentID)), orDash(clean(f.Gate)), p.bad.Render(orDash(clean(f.StatusCode))))
		if f.Detail != "" {
			line += "  " + clean(f.Detail)
		}
		fmt.Fprintln(b, fit(line, o.Width))
		if f.LogPath != "" {
			fmt.Fprintln(b, fit(p.dim.Render("      log "+clean(f.LogPath)), o.Width))
		}
	}
}

func writeBlockers(b *strings.Builder, bs []state.Blocker, p palette, o Options) {
	if len(bs) == 0 {
		return
	}
	fmt.Fprintln(b, "\n"+p.bold.Render(fmt.Sprintf("Open blockers (%d)", len(bs))))
	for _, x := range bs {
		fmt.Fprintln(b, fit(fmt.Sprintf("  %s  %s  %s  %s", p.warn.Render(orDash(clean(x.Kind))), orDash(clean(x.AgentID)),
			clean(x.Summary), p.dim.Render(clean(x.ID))), o.Width))
	}
}

func exitCell(a state.Agent) string {
	switch {
	case a.ExitCode != nil && a.Signal != "":
		return fmt.Sprintf("%d/%s", *a.ExitCode, clean(a.Signal))
	case a.ExitCode != nil:
		return fmt.Sprint(*a.ExitCode)
	case a.Signal != "":
		return clean(a.Signal)
	}
	return "-"
}

// lastCell is what an agent is doing: for a failed run, or one held by a
// usage limit, the reason; else its last marker (the loader's last
// [wave-phase] or meaningful log line).
func lastCell(a state.Agent) string {
	why := a.State == state.AgentFailed || a.State == state.AgentTimedOut || a.State == state.AgentLost || a.State == state.AgentStalled ||
		a.State == state.AgentNoProgress || a.State == state.AgentUsageLimited
	if why && a.Detail != "" {
		return clean(a.Detail)
	}
	if a.LastMarker != "" {
		return clean(a.LastMarker)
	}
	return clean(a.Detail)
}

// heartbeatAge is the age of a running agent's last heartbeat at o.Now:
// the age the loader measured plus the time since it read the state, so
// the 1 s tick keeps ages honest between file events.
func heartbeatAge(a state.Agent, o Options, generated time.Time) (time.Duration, bool) {
	if a.HeartbeatAgeMs == nil || a.State != state.AgentRunning {
		return 0, false
	}
	d := time.Duration(*a.HeartbeatAgeMs) * time.Millisecond
	if !generated.IsZero() && o.Now.After(generated) {
		d += o.Now.Sub(generated)
	}
	return d, true
}

func heartbeat(a state.Agent, o Options) string {
	d, ok := heartbeatAge(a, o, o.generated)
	if !ok {
		return "-"
	}
	s := dur(d)
	if d > staleHeartbeat {
		s += "!"
	}
	return s
}

func hbStale(a state.Agent, o Options) bool {
	d, ok := heartbeatAge(a, o, o.generated)
	return ok && d > staleHeartbeat
}

// span is the time from start to end, or to now while end is unset.
func span(start, end *time.Time, now time.Time) string {
	if start == nil {
		return "-"
	}
	to := now
	if end != nil {
		to = *end
	}
	return dur(to.Sub(*start))
}

// dur formats d compactly: 45s, 3m07s, 2h05m.
func dur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Truncate(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

func ago(d time.Duration) string { return dur(d) + " ago" }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clean makes untrusted text (titles, log lines, details) safe for one
// terminal cell: termtext.Line, the one form of every view's cells.
func clean(s string) string { return termtext.Line(s) }

// pad truncates or right-pads plain text to exactly w columns.
func pad(s string, w int) string {
	if ansi.StringWidth(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", max(0, w-ansi.StringWidth(s)))
}

// fit truncates a (possibly styled) line to w columns.
func fit(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

func ansiWidth(s string) int { return ansi.StringWidth(s) }
