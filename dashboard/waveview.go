package dashboard

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// waveView is the dashboard's main view: one wave's header, agent table
// and sections, with a live preview of the selected agent's output.
type waveView struct {
	cfg     Config
	keys    waveKeys
	lane    state.Lane
	loadErr error
	now     time.Time
	wave    int // shown wave; -1 follows the latest

	selID  string // selected agent, kept across state updates
	selIdx int    // its row in the filtered table, the fallback when it goes

	filter    filterInput
	filtering bool // the filter prompt has the keyboard
	asks      asks // the questions that wait, the answer line

	out    preview
	zoom   bool     // the preview fills the view
	attach []string // argv of the last attach command

	width, height int
	plan          viewPlan
}

func newWaveView(cfg Config, l state.Lane) waveView {
	v := waveView{cfg: cfg, keys: newWaveKeys(cfg.Back), lane: l, now: cfg.Now(), wave: cfg.Wave,
		out: newPreview(), width: 100}
	v = v.reselect()
	v.out = v.out.forAgent(v.selectedAgent())
	v.plan = v.layout()
	return v.sized()
}

func (v waveView) Name() string    { return "waves" }
func (v waveView) Capturing() bool { return v.filtering || v.asks.typing }

// Init reads the selected agent's output for the preview.
func (v waveView) Init() tea.Cmd { return v.readSelected() }

// ShortHelp is the footer's hint line.
func (v waveView) ShortHelp() []key.Binding {
	k := v.keys
	if v.filtering {
		return []key.Binding{short(k.Attach, "keep filter"), short(k.Clear, "clear")}
	}
	return v.asks.hint(k, short(k.Up, "select"), short(k.Attach, "attach"), short(k.Filter, "filter"),
		short(k.Stop, "stop"), short(k.Retry, "retry"), short(k.PrevWave, "wave"))
}

// FullHelp lists every key of the view, in two columns.
func (v waveView) FullHelp() [][]key.Binding {
	k := v.keys
	return [][]key.Binding{
		v.asks.hint(k, k.Up, k.Down, k.Attach, k.Filter, k.Clear, k.Stop, k.Retry, k.PrevWave, k.NextWave),
		{k.Zoom, k.PageUp, k.PageDown, k.HalfUp, k.HalfDown, k.Top, k.Bottom},
	}
}

// shown is the wave on screen: v.wave, or the latest.
func (v waveView) shown() *state.Wave { return pickWave(v.lane, v.wave) }

// visibleAgents is the shown wave's agents that match the filter, and
// the selected row among them.
func (v waveView) visibleAgents() ([]state.Agent, int) {
	w := v.shown()
	if w == nil {
		return nil, -1
	}
	q := strings.ToLower(strings.TrimSpace(v.filter.Value()))
	if q == "" {
		return w.Agents, v.selIdx
	}
	var out []state.Agent
	for _, a := range w.Agents {
		hay := strings.ToLower(strings.Join([]string{a.ID, a.Title, a.State, a.Role, a.Executor}, " "))
		if strings.Contains(hay, q) {
			out = append(out, a)
		}
	}
	return out, v.selIdx
}

// Selected returns the selected agent.
func (v waveView) Selected() (state.Agent, bool) {
	agents, i := v.visibleAgents()
	if i < 0 || i >= len(agents) {
		return state.Agent{}, false
	}
	return agents[i], true
}

// reselect keeps the selection on the same agent after the table
// changed (new state, filter, wave), or on the nearest row if it went.
func (v waveView) reselect() waveView {
	agents, _ := v.visibleAgents()
	for i, a := range agents {
		if a.ID == v.selID {
			v.selIdx = i
			return v
		}
	}
	v.selIdx = max(0, min(v.selIdx, len(agents)-1))
	v.selID = ""
	if len(agents) > 0 {
		v.selID = agents[v.selIdx].ID
	}
	return v
}

func (v waveView) move(d int) waveView {
	agents, _ := v.visibleAgents()
	if len(agents) == 0 {
		return v
	}
	v.selIdx = max(0, min(v.selIdx+d, len(agents)-1))
	v.selID = agents[v.selIdx].ID
	return v
}

// Update handles state, clock, size and the view's keys; after each the
// layout is recomputed so the preview's size is right for scrolling.
func (v waveView) Update(msg tea.Msg) (View, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		v.width, v.height = msg.Width, msg.Height
	case StateMsg:
		v.now = v.cfg.Now()
		v.loadErr = msg.Err
		if msg.Err == nil {
			v.lane = msg.Lane
			v = v.reselect()
		}
		cmd = v.readSelected()
	case TickMsg:
		v.now = v.cfg.Now()
	case logMsg:
		v.out = v.out.receive(msg)
	case questionsMsg:
		v.asks = v.asks.receive(msg)
	case attachedMsg, sessionGoneMsg:
		var zoom bool
		cmd, zoom = attachDone(v.cfg, v.Name(), v.selectedAgent().ID, msg)
		v.zoom = v.zoom || zoom
	case tea.KeyMsg:
		v, cmd = v.key(msg)
	}
	// Another agent, or the same one's newer run (a retry, a relaunch
	// with an answer): the preview follows the newest log.
	if a := v.selectedAgent(); a.ID != v.out.agent || a.LogPath != v.out.path {
		v.out = v.out.forAgent(a)
		if _, read := msg.(StateMsg); !read {
			cmd = tea.Batch(cmd, v.readSelected())
		}
	}
	v.plan = v.layout()
	return v.sized(), cmd
}

func (v waveView) selectedAgent() state.Agent {
	a, _ := v.Selected()
	return a
}

func (v waveView) key(k tea.KeyMsg) (waveView, tea.Cmd) {
	if v.filtering {
		return v.filterKey(k)
	}
	if v.asks.typing || key.Matches(k, v.keys.Answer) {
		return v.answerKey(k)
	}
	keys := v.keys
	switch {
	case key.Matches(k, keys.Up):
		v = v.move(-1)
	case key.Matches(k, keys.Down):
		v = v.move(1)
	case key.Matches(k, keys.Attach):
		if a, ok := v.Selected(); ok {
			return v.attachTo(a)
		}
	case key.Matches(k, keys.Zoom):
		v.zoom = !v.zoom
	case key.Matches(k, keys.Clear):
		if v.zoom {
			v.zoom = false
		} else if v.filter.Value() != "" {
			v.filter = v.filter.SetValue("")
			v = v.reselect()
		}
	case key.Matches(k, keys.Filter):
		v.filtering = true
	case key.Matches(k, keys.Stop):
		return v, v.stop()
	case key.Matches(k, keys.Retry):
		return v, v.retry()
	case key.Matches(k, keys.PrevWave):
		return v.switchWave(-1)
	case key.Matches(k, keys.NextWave):
		return v.switchWave(1)
	default:
		v.out = v.out.scroll(k, keys)
	}
	return v, nil
}

func (v waveView) filterKey(k tea.KeyMsg) (waveView, tea.Cmd) {
	switch k.Type {
	case tea.KeyEnter:
		v.filtering = false
		return v, nil
	case tea.KeyEsc:
		v.filtering = false
		v.filter = v.filter.SetValue("")
		return v.reselect(), nil
	case tea.KeyUp, tea.KeyDown:
		d := 1
		if k.Type == tea.KeyUp {
			d = -1
		}
		return v.move(d), nil
	}
	v.filter = v.filter.edit(k)
	return v.reselect(), nil
}

// switchWave shows the previous (d < 0) or next wave of the lane;
// reaching the latest follows new waves again.
func (v waveView) switchWave(d int) (waveView, tea.Cmd) {
	ws := v.lane.Waves
	if len(ws) == 0 {
		return v, Note("no wave has run on this lane yet")
	}
	cur := len(ws) - 1
	for i, w := range ws {
		if v.wave >= 0 && w.Wave == v.wave {
			cur = i
		}
	}
	next := max(0, min(cur+d, len(ws)-1))
	if next == cur {
		return v, Note("wave %d is the %s wave", ws[cur].Wave, map[bool]string{true: "first", false: "latest"}[d < 0])
	}
	v.wave = ws[next].Wave
	note := Note("wave %d · ] up to the latest follows new waves", v.wave)
	if next == len(ws)-1 {
		v.wave = -1
		note = Note("wave %d, the latest; new waves show as they start", ws[next].Wave)
	}
	v.selIdx, v.selID = 0, ""
	return v.reselect(), note
}

// options are the render options of the table and sections at width.
func (v waveView) options(width int) Options {
	return Options{Width: width, Color: v.cfg.Color, Now: v.now, Wave: v.wave, Selected: v.selIdx}
}

// tail is the filter line and the result line under the frame.
func (v waveView) tail(o Options) []string {
	var out []string
	if v.loadErr != nil {
		out = append(out, fit("reading state: "+clean(v.loadErr.Error()), o.Width))
	}
	if v.filtering || v.filter.Value() != "" {
		agents, _ := v.visibleAgents()
		total := 0
		if w := v.shown(); w != nil {
			total = len(w.Agents)
		}
		line := v.filter.view(v.filtering)
		out = append(out, fit(fmt.Sprintf("%s  %d of %d agents", line, len(agents), total), o.Width))
	}
	out = append(out, v.asks.lines(o.Width, newPalette(v.cfg.Color), v.now)...)
	if r := resultLine(v.lane, v.shown(), newPalette(v.cfg.Color), o); r != "" {
		out = append(out, r)
	}
	return out
}

// answerKey opens the answer line (a) or edits it.
func (v waveView) answerKey(k tea.KeyMsg) (waveView, tea.Cmd) {
	var cmd tea.Cmd
	if v.asks.typing {
		v.asks, cmd = v.asks.key(v.cfg, k)
	} else {
		v.asks, cmd = v.asks.open(v.cfg)
	}
	return v, cmd
}

func itoa(n int) string { return strconv.Itoa(n) }
