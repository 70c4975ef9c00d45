package dashboard

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// Config wires the interactive view to a lane.
type Config struct {
	// Load reads the lane state through the one loader.
	Load func(ctx context.Context) (state.Lane, error)
	// StateDir is the lane state directory watched for changes.
	StateDir string
	// Wave is the wave shown; -1 follows the latest.
	Wave  int
	Color bool
	// Attach returns the command that shows an agent's tmux session
	// (attach-session, or switch-client inside a client of the lane
	// server); built from tmuxadapter's AttachArgv.
	Attach func(session string) *exec.Cmd
	// HasSession, when set, is asked before attaching so a gone session
	// shows the agent's log instead of a tmux error.
	HasSession func(ctx context.Context, session string) (bool, error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// LogLines is how much of an agent's log the `l` view shows.
const LogLines = 40

// StateMsg delivers a freshly loaded lane state to the model.
type StateMsg struct {
	Lane state.Lane
	Err  error
}

type tickMsg time.Time

type logMsg struct {
	agent string
	lines []string
	err   error
}

type attachedMsg struct {
	session string
	err     error
}

// sessionGoneMsg reports that the selected agent's session no longer
// exists, so the model shows its log instead.
type sessionGoneMsg struct{ agent, session string }

// Model is the bubbletea model of the dashboard. It draws with Render, so
// what it shows is exactly what `dashboard` without --watch prints.
type Model struct {
	cfg     Config
	lane    state.Lane
	loadErr error
	now     time.Time

	sel           int
	width, height int

	logAgent string // agent whose log is open; "" shows the table
	logPath  string
	logLines []string
	logErr   error

	attach []string // argv of the last attach command
	note   string   // one-line feedback under the frame
}

// NewModel returns the model showing l.
func NewModel(cfg Config, l state.Lane) Model {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return Model{cfg: cfg, lane: l, now: cfg.Now(), width: 100}
}

// Init starts the 1 s tick that keeps elapsed times and heartbeat ages
// current between file events.
func (m Model) Init() tea.Cmd { return tick() }

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Selected returns the selected agent of the shown wave.
func (m Model) Selected() (state.Agent, bool) {
	w := pickWave(m.lane, m.cfg.Wave)
	if w == nil || m.sel < 0 || m.sel >= len(w.Agents) {
		return state.Agent{}, false
	}
	return w.Agents[m.sel], true
}

// AttachArgv is the argv of the last attach command the model ran.
func (m Model) AttachArgv() []string { return m.attach }

// Update handles keys, state updates, ticks and command results.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case StateMsg:
		m.now = m.cfg.Now()
		m.loadErr = msg.Err
		if msg.Err == nil {
			m.lane = msg.Lane
			m.clamp()
		}
		if m.logAgent != "" {
			return m, readLog(m.logAgent, m.logPath)
		}
	case tickMsg:
		m.now = m.cfg.Now()
		return m, tick()
	case logMsg:
		if msg.agent == m.logAgent {
			m.logLines, m.logErr = msg.lines, msg.err
		}
	case attachedMsg:
		m.note = "back from " + msg.session
		if msg.err != nil {
			m.note = fmt.Sprintf("attach %s: %v", msg.session, msg.err)
		}
	case sessionGoneMsg:
		m.note = fmt.Sprintf("session %s is gone; showing %s's log", msg.session, msg.agent)
		if a, ok := m.Selected(); ok && a.ID == msg.agent {
			return m.openLog(a)
		}
	case tea.KeyMsg:
		return m.key(msg)
	}
	return m, nil
}

func (m Model) key(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch k.String() {
	case "q", "ctrl+c":
		return m, tea.Quit
	case "esc":
		m.logAgent = ""
	case "up", "k":
		m.sel--
		m.clamp()
	case "down", "j":
		m.sel++
		m.clamp()
	case "l":
		if m.logAgent != "" {
			m.logAgent = ""
			return m, nil
		}
		if a, ok := m.Selected(); ok {
			return m.openLog(a)
		}
	case "enter":
		a, ok := m.Selected()
		if !ok {
			return m, nil
		}
		return m.attachTo(a)
	}
	return m, nil
}

func (m Model) openLog(a state.Agent) (tea.Model, tea.Cmd) {
	m.logAgent, m.logPath, m.logLines, m.logErr = a.ID, a.LogPath, nil, nil
	if a.LogPath == "" {
		m.logErr = fmt.Errorf("agent %s has no run log yet", a.ID)
		return m, nil
	}
	return m, readLog(a.ID, a.LogPath)
}

func (m Model) attachTo(a state.Agent) (tea.Model, tea.Cmd) {
	if a.SessionName == "" {
		m.note = fmt.Sprintf("agent %s has no tmux session yet", a.ID)
		return m, nil
	}
	if m.cfg.Attach == nil {
		m.note = "attach is not available here"
		return m, nil
	}
	cmd := m.cfg.Attach(a.SessionName)
	m.attach = cmd.Args
	m.note = ""
	session, has := a.SessionName, m.cfg.HasSession
	run := tea.ExecProcess(cmd, func(err error) tea.Msg { return attachedMsg{session: session, err: err} })
	if has == nil {
		return m, run
	}
	id := a.ID
	// Check first, in a command so the UI never blocks on tmux.
	return m, func() tea.Msg {
		ok, err := has(context.Background(), session)
		if err == nil && !ok {
			return sessionGoneMsg{agent: id, session: session}
		}
		return run()
	}
}

func readLog(agent, path string) tea.Cmd {
	return func() tea.Msg {
		lines, err := LogTail(path, LogLines)
		return logMsg{agent: agent, lines: lines, err: err}
	}
}

func (m *Model) clamp() {
	n := 0
	if w := pickWave(m.lane, m.cfg.Wave); w != nil {
		n = len(w.Agents)
	}
	m.sel = max(0, min(m.sel, n-1))
}

const footer = "↑/↓ select · enter attach · l log · esc back · q quit"

// View draws the frame (or the selected agent's log) to the window size.
func (m Model) View() string {
	if m.logAgent != "" {
		return m.logView()
	}
	o := Options{Width: m.width, Color: m.cfg.Color, Now: m.now, Wave: m.cfg.Wave, Selected: m.sel}
	frame := Render(m.lane, o)
	if m.height > 0 {
		// Give the agent table whatever the rest of the frame leaves.
		if over := strings.Count(frame, "\n") + 2 - m.height; over > 0 {
			if w := pickWave(m.lane, m.cfg.Wave); w != nil {
				o.MaxAgentRows = max(3, len(w.Agents)-over-2)
				frame = Render(m.lane, o)
			}
		}
	}
	var b strings.Builder
	b.WriteString(frame)
	if m.loadErr != nil {
		fmt.Fprintln(&b, fit("reading state: "+clean(m.loadErr.Error()), m.width))
	}
	if m.note != "" {
		fmt.Fprintln(&b, fit(clean(m.note), m.width))
	}
	b.WriteString(fit(footer, m.width))
	return clip(b.String(), m.height)
}

func (m Model) logView() string {
	var b strings.Builder
	fmt.Fprintln(&b, fit(fmt.Sprintf("log of %s · %s", m.logAgent, clean(m.logPath)), m.width))
	if m.note != "" {
		fmt.Fprintln(&b, fit(clean(m.note), m.width))
	}
	switch {
	case m.logErr != nil:
		fmt.Fprintln(&b, fit(clean(m.logErr.Error()), m.width))
	case len(m.logLines) == 0:
		fmt.Fprintln(&b, "(log is empty)")
	}
	lines := m.logLines
	if m.height > 0 && len(lines) > m.height-3 {
		lines = lines[len(lines)-max(1, m.height-3):]
	}
	for _, l := range lines {
		fmt.Fprintln(&b, fit(l, m.width))
	}
	b.WriteString(fit("l/esc back · q quit", m.width))
	return b.String()
}

// clip keeps the last-resort bound of h lines (the header and table
// first) so a tall frame never scrolls the alternate screen.
func clip(s string, h int) string {
	if h <= 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	if len(lines) <= h {
		return s
	}
	return strings.Join(append(lines[:h-1], lines[len(lines)-1]), "\n")
}
