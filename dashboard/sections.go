package dashboard

import (
	"fmt"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// The compact forms below are what a section shrinks to when the window
// is short: one line each, so the agent table keeps its rows.

func writeClosureLine(b *strings.Builder, stages []state.Stage, p palette, o Options) {
	if len(stages) == 0 {
		return
	}
	parts := make([]string, len(stages))
	for i, s := range stages {
		parts[i] = clean(s.Phase) + " " + p.agentStyle(s.State).Render(orDash(s.State))
	}
	fmt.Fprintln(b, fit(p.bold.Render("Closure")+" "+strings.Join(parts, " · "), o.Width))
}

func writeFailuresLine(b *strings.Builder, fs []state.Failure, p palette, o Options) {
	if len(fs) == 0 {
		return
	}
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = orDash(clean(f.AgentID)) + " " + p.bad.Render(orDash(clean(f.StatusCode)))
	}
	fmt.Fprintln(b, fit(p.bold.Render(fmt.Sprintf("Failures (%d)", len(fs)))+" "+strings.Join(parts, " · "), o.Width))
}

func writeBlockersLine(b *strings.Builder, bs []state.Blocker, p palette, o Options) {
	if len(bs) == 0 {
		return
	}
	x := bs[0]
	line := fmt.Sprintf("%s %s %s", p.bold.Render(fmt.Sprintf("Open blockers (%d)", len(bs))), orDash(clean(x.AgentID)), clean(x.Summary))
	fmt.Fprintln(b, fit(line, o.Width))
}

func writeProblemsLine(b *strings.Builder, problems []string, p palette, o Options) {
	if len(problems) == 0 {
		return
	}
	line := fmt.Sprintf("%s %s", p.warn.Render(fmt.Sprintf("%d problem(s) reading state:", len(problems))), clean(problems[0]))
	fmt.Fprintln(b, fit(line, o.Width))
}

// resultLine is the wave's outcome once no launcher is working on it —
// what stays on screen after the launch ends — or "" while one is.
func resultLine(l state.Lane, w *state.Wave, p palette, o Options) string {
	if w == nil || l.Launcher != nil && l.Launcher.Alive {
		return ""
	}
	t := countAgents(w.Agents)
	var failed []string
	for _, a := range w.Agents {
		if urgent(a) && a.State != state.AgentRunning && a.State != state.AgentLaunching {
			failed = append(failed, clean(a.ID)+" "+a.State)
		}
	}
	st, hint := p.bad, ""
	switch w.Status {
	case state.WaveCompleted:
		st = p.good
	case state.WaveFailed, state.WaveBlocked, state.WaveStopped:
		hint = "r resumes"
	case state.WaveInterrupted:
		st, hint = p.warn, "no launcher; r resumes, adopting live runs"
	default:
		return ""
	}
	// Most useful first: the line is cut at the window's edge.
	parts := []string{fmt.Sprintf("%d/%d agents ok", t.ok, t.total)}
	if hint != "" {
		parts = append(parts, hint)
	}
	if w.StartedAt != nil {
		parts = append(parts, span(w.StartedAt, w.FinishedAt, o.Now))
	}
	if len(failed) > 0 {
		parts = append(parts, strings.Join(failed, ", "))
	}
	head := st.Render(fmt.Sprintf("■ wave %d %s", w.Wave, w.Status))
	return fit(head+" · "+strings.Join(parts, " · "), o.Width)
}
