package dashboard

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/wave-orchestrator/wave-orchestrator/questions"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// Config wires the interactive dashboard to a lane. Every hook is
// optional: a missing one turns its key into a hint with the command to
// run instead.
type Config struct {
	// Load reads the lane state through the one loader.
	Load func(ctx context.Context) (state.Lane, error)
	// StateDir is the lane state directory watched for changes.
	StateDir string
	// Wave is the wave shown first; -1 follows the latest.
	Wave  int
	Color bool
	// Attach returns the command that shows an agent's tmux session
	// (attach-session, or switch-client inside a client of the lane
	// server); built from tmuxadapter's AttachArgv.
	Attach func(session string) *exec.Cmd
	// AttachAgent returns the command that attaches to a kubernetes
	// agent's pod (`attach --agent`).
	AttachAgent func(agent string) *exec.Cmd
	// AttachIssue returns the command that attaches to a backlog
	// worker's pod (`attach --issue`).
	AttachIssue func(issue int) *exec.Cmd
	// Back is how the user returns to the dashboard after attaching
	// (e.g. "C-b L"), shown with the enter key.
	Back string
	// HasSession, when set, is asked before attaching so a gone session
	// shows the agent's log instead of a tmux error.
	HasSession func(ctx context.Context, session string) (bool, error)
	// Detach, when set, makes q detach the user's tmux client instead of
	// quitting: the dashboard runs in the lane's dashboard session and
	// keeps its frame for the next attach.
	Detach func(ctx context.Context) error
	// EndSession, when set, runs after the user quits (not when a signal
	// stops the dashboard) to remove the session the dashboard ran in,
	// so no dead pane is left behind.
	EndSession func(ctx context.Context)
	// StopAgent stops the agent's live run with `stop --agent` semantics
	// and returns what it did, in one line.
	StopAgent func(ctx context.Context, agent string) (string, error)
	// Resume starts `resume --wave N` for the lane, detached from the
	// dashboard, and says where it runs.
	Resume func(ctx context.Context, wave int) (string, error)
	// Questions lists the lane's questions (questions.List); the wave
	// and backlog views show those that wait. Answer answers one
	// (questions.Answer) and says what happens next, in one line; without
	// it the a key says which command to run.
	Questions func(ctx context.Context) ([]questions.Question, error)
	Answer    func(ctx context.Context, id, text string) (string, error)
	// Views are further views after the wave view; tab switches.
	Views []View
	// First names the view shown first (e.g. BacklogViewName); "" or an
	// unknown name shows the wave view.
	First string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// View is one screen of the dashboard. The model owns what every view
// shares — the window, the footer with its note line, the ? help
// overlay, y/n confirmations, quitting and detaching, switching views —
// and hands each view the rest:
//
//   - every message that is not a key (StateMsg, TickMsg, a
//     tea.WindowSizeMsg carrying the view's own size, command results)
//     reaches every view, shown or not;
//   - keys reach only the shown view, and only those the model does not
//     bind (?, q, Q, ctrl+c, tab) unless Capturing reports true.
//
// A view asks the model for a note with Note and for a confirmation with
// Confirm. ShortHelp is the footer's hint line, FullHelp the overlay's
// columns.
type View interface {
	help.KeyMap
	// Name labels the view in the tab line.
	Name() string
	Init() tea.Cmd
	Update(msg tea.Msg) (View, tea.Cmd)
	// View draws exactly the size of the last tea.WindowSizeMsg.
	View() string
	// Capturing reports that the view reads text (a filter prompt), so
	// the model's keys go to it as text.
	Capturing() bool
}

// StateMsg delivers a freshly loaded lane state.
type StateMsg struct {
	Lane state.Lane
	Err  error
}

// TickMsg is the 1 s clock that keeps elapsed times and ages current
// between file events.
type TickMsg time.Time

// NoteMsg sets the one-line note in the footer until the next key.
type NoteMsg string

// ConfirmMsg asks the user Prompt; y runs Yes, any other key cancels.
type ConfirmMsg struct {
	Prompt string
	Yes    tea.Cmd
}

// Note returns a command setting the footer note.
func Note(format string, args ...any) tea.Cmd {
	s := fmt.Sprintf(format, args...)
	return func() tea.Msg { return NoteMsg(s) }
}

// Confirm returns a command asking prompt before running yes.
func Confirm(prompt string, yes tea.Cmd) tea.Cmd {
	return func() tea.Msg { return ConfirmMsg{Prompt: prompt, Yes: yes} }
}

type detachedMsg struct{ err error }

// Model is the bubbletea model of the dashboard: the views and what they
// share.
type Model struct {
	cfg           Config
	views         []View
	active        int
	width, height int
	keys          globalKeys
	help          help.Model
	showHelp      bool
	confirm       *ConfirmMsg
	note          string
	quit          bool // the user quit (not a signal)
}

// NewModel returns the model showing l in the wave view, followed by
// cfg.Views.
func NewModel(cfg Config, l state.Lane) Model {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	views := append([]View{newWaveView(cfg, l)}, cfg.Views...)
	m := Model{cfg: cfg, views: views, width: 100, keys: newGlobalKeys(cfg.Detach != nil, len(views)),
		help: newHelp(cfg.Color)}
	for i, v := range views {
		if cfg.First != "" && v.Name() == cfg.First {
			m.active = i
		}
	}
	return m
}

// Init starts the clock and every view.
func (m Model) Init() tea.Cmd {
	cmds := []tea.Cmd{tick(), loadQuestions(m.cfg)}
	for _, v := range m.views {
		cmds = append(cmds, v.Init())
	}
	return tea.Batch(cmds...)
}

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return TickMsg(t) })
}

// Selected returns the selected agent of the wave view.
func (m Model) Selected() (state.Agent, bool) { return m.waves().Selected() }

// AttachArgv is the argv of the last attach command the wave view ran.
func (m Model) AttachArgv() []string { return m.waves().AttachArgv() }

func (m Model) waves() waveView { return m.views[0].(waveView) }

// UserQuit reports whether the user quit (rather than a signal).
func (m Model) UserQuit() bool { return m.quit }

// Update handles the model's own keys and messages and passes the rest on.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m.broadcast(tea.WindowSizeMsg{Width: m.width, Height: m.bodyHeight()})
	case tea.KeyMsg:
		return m.key(msg)
	case NoteMsg:
		m.note = string(msg)
		return m, nil
	case ConfirmMsg:
		m.confirm = &msg
		return m, nil
	case detachedMsg:
		if msg.err != nil {
			m.note = "detach: " + msg.err.Error()
		}
		return m, nil
	case TickMsg:
		m, cmd := m.broadcast(msg)
		return m, tea.Batch(cmd, tick())
	case StateMsg:
		m, cmd := m.broadcast(msg)
		return m, tea.Batch(cmd, loadQuestions(m.cfg))
	case answeredMsg:
		m.note = string(msg)
		return m, loadQuestions(m.cfg)
	}
	return m.broadcast(msg)
}

func (m Model) broadcast(msg tea.Msg) (Model, tea.Cmd) {
	var cmds []tea.Cmd
	for i, v := range m.views {
		var cmd tea.Cmd
		m.views[i], cmd = v.Update(msg)
		cmds = append(cmds, cmd)
	}
	return m, tea.Batch(cmds...)
}

func (m Model) key(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	m.note = ""
	if k.String() == "ctrl+c" {
		return m.quitNow()
	}
	if c := m.confirm; c != nil {
		m.confirm = nil
		if k.String() == "y" || k.String() == "Y" {
			return m, c.Yes
		}
		m.note = "cancelled"
		return m, nil
	}
	if m.showHelp {
		// Any key closes the overlay; q and ? do nothing else.
		m.showHelp = false
		return m, nil
	}
	v := m.views[m.active]
	if !v.Capturing() {
		switch {
		case key.Matches(k, m.keys.Help):
			m.showHelp = true
			return m, nil
		case key.Matches(k, m.keys.Quit):
			if m.cfg.Detach != nil {
				detach := m.cfg.Detach
				return m, func() tea.Msg { return detachedMsg{err: detach(context.Background())} }
			}
			return m.quitNow()
		case key.Matches(k, m.keys.Exit):
			return m.quitNow()
		case key.Matches(k, m.keys.NextView):
			m.active = (m.active + 1) % len(m.views)
			return m, nil
		case key.Matches(k, m.keys.PrevView):
			m.active = (m.active + len(m.views) - 1) % len(m.views)
			return m, nil
		}
	}
	var cmd tea.Cmd
	m.views[m.active], cmd = v.Update(k)
	return m, cmd
}

func (m Model) quitWord() string {
	if m.cfg.Detach != nil {
		return "detach"
	}
	return "quit"
}

func (m Model) quitNow() (tea.Model, tea.Cmd) {
	m.quit = true
	return m, tea.Quit
}

// bodyHeight is what the shown view gets: the window less the footer and
// the tab line.
func (m Model) bodyHeight() int {
	if m.height <= 0 {
		return 0
	}
	h := m.height - 1
	if len(m.views) > 1 {
		h--
	}
	return max(1, h)
}

// View draws the tab line, the shown view (or the help overlay) and the
// footer: a confirmation, else the note, else the key hints.
func (m Model) View() string {
	var b strings.Builder
	if len(m.views) > 1 {
		b.WriteString(m.tabs() + "\n")
	}
	body := ""
	if m.showHelp {
		body = m.helpOverlay()
	} else {
		body = m.views[m.active].View()
	}
	b.WriteString(fitLines(body, m.width, m.bodyHeight()))
	b.WriteString("\n")
	b.WriteString(fit(m.footer(), m.width))
	return b.String()
}

func (m Model) tabs() string {
	p := newPalette(m.cfg.Color)
	var parts []string
	for i, v := range m.views {
		name := " " + v.Name() + " "
		if i == m.active {
			name = p.sel.Render(name)
		}
		parts = append(parts, name)
	}
	return fit(strings.Join(parts, " ")+"  "+p.dim.Render("tab switches"), m.width)
}

func (m Model) footer() string {
	p := newPalette(m.cfg.Color)
	switch {
	case m.confirm != nil:
		return p.warn.Render(clean(m.confirm.Prompt) + " [y/N]")
	case m.note != "":
		return clean(m.note)
	case m.showHelp:
		return p.dim.Render("any key closes the help")
	}
	// The view's hints give way from the end so ? and q always show.
	keys, global := m.views[m.active].ShortHelp(), []key.Binding{m.keys.Help, short(m.keys.Quit, m.quitWord())}
	h := m.help
	line := h.ShortHelpView(append(slices.Clone(keys), global...))
	for len(keys) > 0 && ansiWidth(line) > m.width {
		keys = keys[:len(keys)-1]
		line = h.ShortHelpView(append(slices.Clone(keys), global...))
	}
	return line
}

// fitLines makes s exactly h lines of at most w columns (h <= 0: as is),
// so a view never scrolls the alternate screen or leaves stale lines.
func fitLines(s string, w, h int) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if h > 0 {
		if len(lines) > h {
			lines = lines[:h]
		}
		for len(lines) < h {
			lines = append(lines, "")
		}
	}
	for i, l := range lines {
		lines[i] = fit(l, w)
	}
	return strings.Join(lines, "\n")
}
