// Package dashboard owns the views of a lane's state: the pure text
// renderer shared by `status` and `dashboard`, the `status --json`
// encoding, the interactive bubbletea model with its fsnotify refresh,
// and the log tails those views show. The model hosts View
// implementations — the wave view (agent table, sections, a preview of
// the selected agent's output) and the backlog view (a backlog run's
// tally, issues, questions and the selected worker's output) — and owns
// what they share: footer, help overlay, confirmations, quitting or
// detaching. The two views are lists built on one component (list), which
// owns selection, the / filter, the output preview and the keys of one key
// table; each view supplies its rows and its own actions. Nothing here
// reduces state: the wave view draws a state.Lane produced by the one
// loader, the backlog view a backlog.StatusView (built by
// backlog.NewStatusView), the read model `backlog status` renders too
// (RenderBacklogStatus).
package dashboard

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// Options control one rendering.
type Options struct {
	// Width is the terminal width in columns; 0 means 100.
	Width int
	// Color enables ANSI styling.
	Color bool
	// Now is the clock used for elapsed times and ages.
	Now time.Time
	// Wave selects the wave: Render shows the latest when -1, RenderStatus
	// shows all waves when -1.
	Wave int
	// Selected is the highlighted agent row of the shown wave; -1 none.
	Selected int
	// MaxAgentRows bounds the agent table's lines below its header; the
	// rows kept are the selected one, then running and failed agents, then
	// those nearest the selection (visibleRows). 0 shows every agent.
	MaxAgentRows int
	generated    time.Time // when the loader read the lane, for heartbeat ages
	// brief drops the ages of the read and the last update from the
	// headers, which then fit one line each at 80 columns.
	brief bool
}

// staleHeartbeat is the heartbeat age past which a running agent is
// flagged: several missed beats at the runner's default 2 s interval.
const staleHeartbeat = 15 * time.Second

// Render draws the dashboard frame of one wave of l: lane header, a
// progress bar, the agent table, closure stages, failures, open blockers,
// the last events and any problems reading state.
func Render(l state.Lane, o Options) string {
	o = o.defaults()
	o.generated = l.GeneratedAt
	p := newPalette(o.Color)
	var b strings.Builder
	w := pickWave(l, o.Wave)
	writeLaneHeader(&b, l, p, o)
	if w == nil {
		if o.Wave >= 0 {
			// Same words as `status --wave N`; other waves' events are not
			// this wave's.
			fmt.Fprintln(&b, p.dim.Render(fmt.Sprintf("wave %d has not run on this lane", o.Wave)))
		} else {
			fmt.Fprintln(&b, p.dim.Render("no wave has run on this lane yet"))
			writeEvents(&b, l.LastEvents, p, o)
		}
		writeProblems(&b, l.Problems, p, o)
		return b.String()
	}
	writeWave(&b, *w, p, o, true)
	events := w.LastEvents
	if len(l.Waves) > 1 {
		events = l.LastEvents
	}
	writeEvents(&b, events, p, o)
	writeProblems(&b, l.Problems, p, o)
	return b.String()
}

// RenderStatus draws the `status` text view: the lane header and, for
// each wave (or only o.Wave), the same wave block the dashboard draws,
// without the progress bar and events. When all waves are shown, a
// completed wave other than the latest takes one summary line, so a
// long-lived lane stays readable.
func RenderStatus(l state.Lane, o Options) string {
	o = o.defaults()
	o.generated = l.GeneratedAt
	o.Selected = -1
	p := newPalette(o.Color)
	var b strings.Builder
	writeLaneHeader(&b, l, p, o)
	n := 0
	for _, w := range l.Waves {
		if o.Wave >= 0 && w.Wave != o.Wave {
			continue
		}
		latest := w.Wave == l.Waves[len(l.Waves)-1].Wave
		if o.Wave < 0 && !latest && w.Status == state.WaveCompleted {
			writeWaveSummary(&b, w, p, o)
			n++
			continue
		}
		if n > 0 {
			b.WriteString("\n")
		}
		writeWave(&b, w, p, o, false)
		n++
	}
	if n == 0 {
		if o.Wave >= 0 {
			fmt.Fprintf(&b, "wave %d has not run on this lane\n", o.Wave)
		} else {
			fmt.Fprintln(&b, "no wave has run on this lane yet")
		}
	}
	writeProblems(&b, l.Problems, p, o)
	return b.String()
}

func (o Options) defaults() Options {
	if o.Width <= 0 {
		o.Width = 100
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	return o
}

// pickWave returns wave n, or the latest wave when n < 0.
func pickWave(l state.Lane, n int) *state.Wave {
	if n < 0 {
		if len(l.Waves) == 0 {
			return nil
		}
		return &l.Waves[len(l.Waves)-1]
	}
	return l.FindWave(n)
}

func writeLaneHeader(b *strings.Builder, l state.Lane, p palette, o Options) {
	parts := []string{p.bold.Render("lane " + clean(l.Lane))}
	if l.Launcher != nil {
		alive := "exited"
		if l.Launcher.Alive {
			alive = "alive"
		}
		parts = append(parts, fmt.Sprintf("launcher pid %d %s", l.Launcher.Pid, alive))
	} else {
		parts = append(parts, "no launcher")
	}
	if l.Socket != "" {
		parts = append(parts, "socket "+clean(l.Socket))
	}
	if l.Usage != nil {
		parts = append(parts, "spent "+clean(l.Usage.String()))
	}
	if !l.GeneratedAt.IsZero() && !o.brief {
		parts = append(parts, "read "+ago(o.Now.Sub(l.GeneratedAt)))
	}
	writeParts(b, parts, o.Width)
}

// writeParts joins header parts with " · ", wrapping onto more lines
// rather than cutting facts off on narrow terminals.
func writeParts(b *strings.Builder, parts []string, width int) {
	line := ""
	for _, part := range parts {
		switch {
		case line == "":
			line = part
		case ansi.StringWidth(line)+3+ansi.StringWidth(part) <= width:
			line += " · " + part
		default:
			fmt.Fprintln(b, fit(line, width))
			line = part
		}
	}
	if line != "" {
		fmt.Fprintln(b, fit(line, width))
	}
}

func writeWave(b *strings.Builder, w state.Wave, p palette, o Options, bar bool) {
	writeWaveHead(b, w, p, o, bar, true)
	b.WriteString("\n")
	writeAgents(b, w, p, o)
	writeClosure(b, w.Closure, p, o)
	writeFailures(b, w.Failures, p, o)
	writeBlockers(b, w.Blockers, p, o)
}

// writeWaveHead is the wave's header line(s), its file when file is set,
// and the progress bar when bar is.
func writeWaveHead(b *strings.Builder, w state.Wave, p palette, o Options, bar, file bool) {
	attempt := fmt.Sprintf("attempt %d/%d", w.Attempt, w.MaxAttempts)
	if w.MaxAttempts == 0 {
		attempt = fmt.Sprintf("attempt %d", w.Attempt)
	}
	head := []string{
		p.bold.Render(fmt.Sprintf("wave %d", w.Wave)),
		p.wave(w.Status),
		"phase " + orDash(clean(w.Phase)),
		attempt,
		"elapsed " + span(w.StartedAt, w.FinishedAt, o.Now),
	}
	if w.Usage != nil {
		head = append(head, "spent "+clean(w.Usage.String()))
	}
	if w.UpdatedAt != nil && !o.brief {
		head = append(head, "updated "+ago(o.Now.Sub(*w.UpdatedAt)))
	}
	writeParts(b, head, o.Width)
	if file && w.File != "" {
		fmt.Fprintln(b, fit(p.dim.Render("file "+clean(w.File)), o.Width))
	}
	for _, pz := range w.Paused {
		fmt.Fprintln(b, fit(p.warn.Render(pauseLine(pz, o.Now)), o.Width))
	}
	if bar {
		writeProgress(b, w.Agents, p, o)
	}
}

// writeWaveSummary is the one-line form of a finished wave.
func writeWaveSummary(b *strings.Builder, w state.Wave, p palette, o Options) {
	t := countAgents(w.Agents)
	writeParts(b, []string{
		p.bold.Render(fmt.Sprintf("wave %d", w.Wave)),
		p.wave(w.Status),
		fmt.Sprintf("attempt %d/%d", w.Attempt, w.MaxAttempts),
		"elapsed " + span(w.StartedAt, w.FinishedAt, o.Now),
		fmt.Sprintf("%d/%d agents ok", t.ok, t.total),
	}, o.Width)
}

// tally counts agents by how far they got.
type tally struct{ total, ok, failed, running, pending, waiting int }

func countAgents(agents []state.Agent) tally {
	var t tally
	for _, a := range agents {
		t.total++
		switch a.State {
		case state.AgentCompleted, state.AgentReused:
			t.ok++
		case state.AgentFailed, state.AgentTimedOut, state.AgentLost, state.AgentTerminated, state.AgentStalled,
			state.AgentNoProgress, state.AgentBudgetExceeded:
			t.failed++
		case state.AgentRunning, state.AgentLaunching:
			t.running++
		case state.AgentWaitingForInput, state.AgentUsageLimited:
			t.waiting++
		default:
			t.pending++
		}
	}
	return t
}

func writeProgress(b *strings.Builder, agents []state.Agent, p palette, o Options) {
	t := countAgents(agents)
	label := fmt.Sprintf(" %d/%d agents done · %d ok · %d failed · %d running · %d pending",
		t.ok+t.failed, t.total, t.ok, t.failed, t.running, t.pending)
	if t.waiting > 0 {
		label += fmt.Sprintf(" · %d waiting for input", t.waiting)
	}
	width := min(40, o.Width-ansi.StringWidth(label)-2)
	if width < 10 {
		width = 10
	}
	okCells, failCells := 0, 0
	if t.total > 0 {
		okCells = t.ok * width / t.total
		failCells = (t.ok+t.failed)*width/t.total - okCells
	}
	rest := width - okCells - failCells
	fmt.Fprintf(b, "[%s%s%s]%s\n", p.good.Render(strings.Repeat("█", okCells)),
		p.bad.Render(strings.Repeat("█", failCells)), p.dim.Render(strings.Repeat("░", rest)), label)
}

func writeProblems(b *strings.Builder, problems []string, p palette, o Options) {
	if len(problems) == 0 {
		return
	}
	fmt.Fprintln(b, "\n"+p.bold.Render("Problems reading state"))
	for _, s := range problems {
		fmt.Fprintln(b, fit("  "+p.warn.Render(clean(s)), o.Width))
	}
}

func writeEvents(b *strings.Builder, evs []state.EventRef, p palette, o Options) {
	if len(evs) == 0 {
		return
	}
	fmt.Fprintln(b, "\n"+p.bold.Render("Last events"))
	for _, e := range evs {
		fmt.Fprintln(b, fit(fmt.Sprintf("  %s  w%-2d %s", e.At.UTC().Format("15:04:05"), e.Wave, clean(e.Message)), o.Width))
	}
}

// palette holds the styles of one rendering; with colour off every style
// renders its input unchanged.
type palette struct {
	bold, dim, good, bad, warn, live, sel style
}

// style is a lipgloss style reduced to the escape sequences around its
// text: lipgloss.Style.Render per cell dominated the frame's cost.
type style struct{ pre, post string }

func (s style) Render(text string) string {
	if s.pre == "" {
		return text
	}
	return s.pre + text + s.post
}

func newPalette(color bool) palette {
	if !color {
		return palette{}
	}
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	mk := func(st lipgloss.Style) style {
		out := st.Render("x")
		i := strings.Index(out, "x")
		return style{pre: out[:i], post: out[i+1:]}
	}
	s := r.NewStyle
	return palette{
		bold: mk(s().Bold(true)),
		dim:  mk(s().Faint(true)),
		good: mk(s().Foreground(lipgloss.Color("2"))),
		bad:  mk(s().Foreground(lipgloss.Color("1")).Bold(true)),
		warn: mk(s().Foreground(lipgloss.Color("3"))),
		live: mk(s().Foreground(lipgloss.Color("6"))),
		sel:  mk(s().Reverse(true)),
	}
}

// agentStyle maps an agent (or stage) state to its colour, the reference's
// scheme: green done, red failed (a stall, a no-progress stop or a spent
// budget included), cyan in flight, yellow waiting (for a person, or for
// a usage limit's reset), dim pending.
func (p palette) agentStyle(s string) style {
	switch s {
	case state.AgentCompleted, state.AgentReused, state.StagePassed:
		return p.good
	case state.AgentFailed, state.AgentTimedOut, state.AgentLost, state.AgentTerminated, state.AgentStalled,
		state.AgentNoProgress, state.AgentBudgetExceeded:
		return p.bad
	case state.AgentRunning, state.AgentLaunching:
		return p.live
	case state.StageSkipped, state.AgentWaitingForInput, state.AgentUsageLimited:
		return p.warn
	}
	return p.dim
}

func (p palette) wave(s string) string {
	switch s {
	case state.WaveCompleted:
		return p.good.Render(s)
	case state.WaveFailed, state.WaveBlocked, state.WaveStopped:
		return p.bad.Render(s)
	case state.WaveRunning:
		return p.live.Render(s)
	case state.WaveInterrupted, state.WaveWaitingForInput:
		return p.warn.Render(s)
	}
	return p.dim.Render(orDash(s))
}

// pauseLine is how a wave's usage-limit pause is shown: "paused: claude
// usage limit until 15:00 (A1 waits): <the CLI's words>"; the time is the
// reader's clock, with the date when it is not today.
func pauseLine(pz state.UsagePause, now time.Time) string {
	until := pz.Until.In(now.Location())
	when := until.Format("15:04")
	if y, m, d := now.Date(); until.Year() != y || until.Month() != m || until.Day() != d {
		when = until.Format("Jan 2 15:04")
	}
	line := "paused: " + clean(pz.Executor) + " usage limit until " + when
	if len(pz.Agents) > 0 {
		line += " (" + clean(strings.Join(pz.Agents, ", ")) + " wait)"
	}
	if pz.Detail != "" {
		line += ": " + clean(pz.Detail)
	}
	return line
}
