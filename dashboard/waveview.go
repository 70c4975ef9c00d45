package dashboard

import (
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// waveView is the dashboard's main view: one wave's header, agent table
// and sections, with a live preview of the selected agent's output. Its
// list owns the table's selection, filter, preview and answer line.
type waveView struct {
	cfg     Config
	lane    state.Lane
	loadErr error
	now     time.Time
	wave    int // shown wave; -1 follows the latest

	list   list[state.Agent]
	attach []string // argv of the last attach command

	width, height int
	plan          viewPlan
}

// agentRows is what the wave view's list knows of an agent.
func agentRows() rowSpec[state.Agent] {
	return rowSpec[state.Agent]{
		words: listWords{noun: "agent", fields: "id, title, state, role", attach: "its tmux session"},
		id:    func(a state.Agent) string { return a.ID },
		log:   func(a state.Agent) string { return a.LogPath },
		text: func(a state.Agent) string {
			return strings.Join([]string{a.ID, a.Title, a.State, a.Role, a.Executor}, " ")
		},
		urgent: urgent,
	}
}

func newWaveView(cfg Config, l state.Lane) waveView {
	v := waveView{cfg: cfg, lane: l, now: cfg.Now(), wave: cfg.Wave, width: 100,
		list: newList(agentRows(), cfg.Back, actAttach, actStop, actRetry, actPrevWave, actNextWave)}
	v.list = v.list.setRows(v.agents())
	v.list, _ = v.list.follow(false) // Init reads it
	v.plan = v.layout()
	return v.sized()
}

func (v waveView) Name() string    { return "waves" }
func (v waveView) Capturing() bool { return v.list.capturing() }

// Init reads the selected agent's output for the preview.
func (v waveView) Init() tea.Cmd { return v.list.read() }

// ShortHelp is the footer's hint line.
func (v waveView) ShortHelp() []key.Binding {
	return v.list.shortHelp(actUp, actAttach, actFilter, actStop, actRetry, actPrevWave)
}

// FullHelp lists every key of the view, in two columns.
func (v waveView) FullHelp() [][]key.Binding { return v.list.fullHelp() }

// shown is the wave on screen: v.wave, or the latest.
func (v waveView) shown() *state.Wave { return pickWave(v.lane, v.wave) }

// agents are the shown wave's agents, the list's rows.
func (v waveView) agents() []state.Agent {
	if w := v.shown(); w != nil {
		return w.Agents
	}
	return nil
}

// Selected returns the selected agent.
func (v waveView) Selected() (state.Agent, bool) { return v.list.selected() }

// Update handles state, clock, size and the view's keys; after each the
// preview follows the selection and the layout is recomputed so the
// preview's size is right for scrolling.
func (v waveView) Update(msg tea.Msg) (View, tea.Cmd) {
	var cmd tea.Cmd
	read := false // the lane was read: read the selected log again
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		v.width, v.height = msg.Width, msg.Height
	case StateMsg:
		v.now = v.cfg.Now()
		v.loadErr = msg.Err
		if msg.Err == nil {
			v.lane = msg.Lane
			v.list = v.list.setRows(v.agents())
		}
		read = true
	case TickMsg:
		v.now = v.cfg.Now()
	case tea.KeyMsg:
		v, cmd = v.key(msg)
	default:
		v.list, cmd = v.list.update(v.cfg, v.Name(), msg)
	}
	var follow tea.Cmd
	v.list, follow = v.list.follow(read)
	v.plan = v.layout()
	return v.sized(), tea.Batch(cmd, follow)
}

// key hands k to the list and does the view's own actions.
func (v waveView) key(k tea.KeyMsg) (waveView, tea.Cmd) {
	var act action
	var cmd tea.Cmd
	v.list, act, cmd = v.list.key(v.cfg, k)
	switch act {
	case actAttach:
		a, _ := v.Selected()
		return v.attachTo(a)
	case actStop:
		return v, v.stop()
	case actRetry:
		return v, v.retry()
	case actPrevWave:
		return v.switchWave(-1)
	case actNextWave:
		return v.switchWave(1)
	}
	return v, cmd
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
	v.list = v.list.forget().setRows(v.agents())
	return v, note
}

// options are the render options of the table and sections at width.
func (v waveView) options(width int) Options {
	return Options{Width: width, Color: v.cfg.Color, Now: v.now, Wave: v.wave, Selected: v.list.sel}
}

// tail is the filter line and the result line under the frame.
func (v waveView) tail(o Options) []string {
	var out []string
	if v.loadErr != nil {
		out = append(out, fit("reading state: "+clean(v.loadErr.Error()), o.Width))
	}
	out = append(out, v.list.lines(o.Width, newPalette(v.cfg.Color), v.now)...)
	if r := resultLine(v.lane, v.shown(), newPalette(v.cfg.Color), o); r != "" {
		out = append(out, r)
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
