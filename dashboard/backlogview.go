package dashboard

import (
	"context"
	"path/filepath"
	"strconv"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

// BacklogViewName names the backlog view in the tab line and for
// Config.First.
const BacklogViewName = "backlog"

// BacklogLoader reads the lane's newest backlog run through
// supervisor.Status (a backlog.StatusView), the one read model `backlog
// status` renders too; ok is
// false while the lane has no backlog run.
type BacklogLoader func(ctx context.Context) (v backlog.StatusView, ok bool, err error)

// backlogRefresh is how often a running backlog run is read again
// between file events: commits and dirty files change in the workers'
// worktrees, which are not watched.
const backlogRefresh = 3 * time.Second

// backlogMsg delivers a backlog run read by the view's loader.
type backlogMsg struct {
	v   backlog.StatusView
	ok  bool
	err error
}

// backlogView shows one backlog run: header, tally, one row per issue,
// the needs-input questions and a preview of the selected worker's
// output. It draws the backlog.StatusView its loader returns and reduces
// nothing.
type backlogView struct {
	cfg  Config
	load BacklogLoader
	keys waveKeys

	st      backlog.StatusView
	found   bool      // the lane has a backlog run
	loaded  bool      // the first read returned
	loadErr error     // the last read failed (st is the one before)
	readAt  time.Time // when st was read, to age its numbers
	now     time.Time

	loading bool      // a read is under way
	again   bool      // something changed during it: read once more
	askedAt time.Time // when the last read started

	selNum int // selected issue, kept across reads
	selIdx int // its row, the fallback when it goes

	out    preview
	zoom   bool
	attach []string // argv of the last attach command
	asks   asks     // the issues' questions that wait, the answer line

	width, height int
	plan          viewPlan
}

// NewBacklogView returns the backlog view for cfg (its clock, colour and
// attach hooks), reading the run with load. Pass it in Config.Views.
func NewBacklogView(cfg Config, load BacklogLoader) View {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	v := backlogView{cfg: cfg, load: load, keys: newBacklogKeys(cfg.Back), now: cfg.Now(), out: newPreview(), width: 100}
	v.out.none = "no issue selected"
	v.asks.backlog = true
	v.plan = v.layout()
	return v.sized()
}

func newBacklogKeys(back string) waveKeys {
	k := newWaveKeys(back)
	k.Up.SetHelp("↑/k", "select previous issue")
	k.Down.SetHelp("↓/j", "select next issue")
	k.Clear.SetHelp("esc", "leave full screen")
	if back == "" {
		k.Attach.SetHelp("enter", "attach to the worker's tmux session")
	}
	k.Zoom.SetHelp("l", "worker output full screen")
	return k
}

func (v backlogView) Name() string    { return BacklogViewName }
func (v backlogView) Capturing() bool { return v.asks.typing }

// Init reads the run.
func (v backlogView) Init() tea.Cmd { return loadBacklog(v.load) }

func loadBacklog(load BacklogLoader) tea.Cmd {
	if load == nil {
		return nil
	}
	return func() tea.Msg {
		st, ok, err := load(context.Background())
		return backlogMsg{v: st, ok: ok, err: err}
	}
}

// ShortHelp is the footer's hint line.
func (v backlogView) ShortHelp() []key.Binding {
	k := v.keys
	return v.asks.hint(k, short(k.Up, "select"), short(k.Attach, "attach"), short(k.Zoom, "output"), short(k.PageUp, "scroll"))
}

// FullHelp lists every key of the view.
func (v backlogView) FullHelp() [][]key.Binding {
	k := v.keys
	return [][]key.Binding{
		v.asks.hint(k, k.Up, k.Down, k.Attach, k.Zoom, k.Clear),
		{k.PageUp, k.PageDown, k.HalfUp, k.HalfDown, k.Top, k.Bottom},
	}
}

// read starts a read of the run unless one is under way, in which case
// it asks for another once that one returns.
func (v backlogView) read() (backlogView, tea.Cmd) {
	if v.load == nil {
		return v, nil
	}
	if v.loading {
		v.again = true
		return v, nil
	}
	v.loading, v.again, v.askedAt = true, false, v.cfg.Now()
	return v, loadBacklog(v.load)
}

// Update handles reads, state changes, the clock, size and keys.
func (v backlogView) Update(msg tea.Msg) (View, tea.Cmd) {
	before := v.selectedKey()
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		v.width, v.height = msg.Width, msg.Height
	case StateMsg:
		v.now = v.cfg.Now()
		v, cmd = v.read()
	case TickMsg:
		v.now = v.cfg.Now()
		if v.st.State == "running" && v.now.Sub(v.askedAt) >= backlogRefresh {
			v, cmd = v.read()
		}
	case backlogMsg:
		v, cmd = v.receive(msg)
	case logMsg:
		v.out = v.out.receive(msg)
	case questionsMsg:
		v.asks = v.asks.receive(msg)
	case attachedMsg, sessionGoneMsg:
		sel := ""
		if is, ok := v.Selected(); ok {
			sel = issueID(is.Number)
		}
		var zoom bool
		cmd, zoom = attachDone(v.cfg, v.Name(), sel, msg)
		v.zoom = v.zoom || zoom
	case tea.KeyMsg:
		v, cmd = v.key(msg)
	}
	if v.selectedKey() != before {
		who, path := "", ""
		if is, ok := v.Selected(); ok {
			who, path = issueID(is.Number), logPath(is)
		}
		v.out = v.out.forLog(who, path)
		cmd = tea.Batch(cmd, v.readSelected())
	}
	v.plan = v.layout()
	return v.sized(), cmd
}

func (v backlogView) receive(m backlogMsg) (backlogView, tea.Cmd) {
	v.loading = false
	v.now = v.cfg.Now()
	v.loadErr = m.err
	if m.err == nil {
		v.st, v.found, v.loaded, v.readAt = m.v, m.ok, true, v.now
		v = v.reselect()
	}
	cmd := v.readSelected()
	if v.again {
		var again tea.Cmd
		v, again = v.read()
		cmd = tea.Batch(cmd, again)
	}
	return v, cmd
}

func (v backlogView) key(k tea.KeyMsg) (backlogView, tea.Cmd) {
	keys := v.keys
	var cmd tea.Cmd
	switch {
	case v.asks.typing:
		v.asks, cmd = v.asks.key(v.cfg, k)
		return v, cmd
	case key.Matches(k, keys.Answer):
		v.asks, cmd = v.asks.open(v.cfg)
		return v, cmd
	case key.Matches(k, keys.Up):
		v = v.move(-1)
	case key.Matches(k, keys.Down):
		v = v.move(1)
	case key.Matches(k, keys.Attach):
		if is, ok := v.Selected(); ok {
			return v.attachTo(is)
		}
		return v, Note("no issue selected")
	case key.Matches(k, keys.Zoom):
		v.zoom = !v.zoom
	case key.Matches(k, keys.Clear):
		v.zoom = false
	default:
		v.out = v.out.scroll(k, keys)
	}
	return v, nil
}

// attachTo shows the worker's tmux session: attach-session, or
// switch-client inside the lane's server, as the wave view does.
func (v backlogView) attachTo(is backlog.IssueView) (backlogView, tea.Cmd) {
	id := issueID(is.Number)
	switch {
	case is.Session == "":
		return v, Note("%s has no worker session yet (%s)", id, is.State)
	case backlog.Terminal(is.State):
		if is.RunDir != "" {
			v.zoom = true
		}
		return v, Note("%s is %s; its worker has ended, showing its output", id, is.State)
	case is.Pod != "":
		return v.attachPod(is)
	case v.cfg.Attach == nil:
		return v, Note("attach is not available here; run: tmux -L <socket> attach -t %s", clean(is.Session))
	}
	var cmd tea.Cmd
	v.attach, cmd = attachSession(v.cfg, v.Name(), id, is.Session)
	return v, cmd
}

// attachPod attaches to a worker's pod with `attach --issue`, run in this
// terminal: the API, not tmux, reaches the pod.
func (v backlogView) attachPod(is backlog.IssueView) (backlogView, tea.Cmd) {
	if v.cfg.AttachIssue == nil {
		return v, Note("attach is not available here; run: wave-orchestrator attach --issue %d", is.Number)
	}
	cmd := v.cfg.AttachIssue(is.Number)
	v.attach = cmd.Args
	view, who := v.Name(), "pod of "+issueID(is.Number)
	return v, tea.ExecProcess(cmd, func(err error) tea.Msg {
		return attachedMsg{view: view, session: who, err: err}
	})
}

// Selected returns the selected issue.
func (v backlogView) Selected() (backlog.IssueView, bool) {
	if v.selIdx < 0 || v.selIdx >= len(v.st.Issues) {
		return backlog.IssueView{}, false
	}
	return v.st.Issues[v.selIdx], true
}

// selectedKey identifies what the preview shows: the issue and its
// current run's log (a relaunch writes a new one).
func (v backlogView) selectedKey() string {
	is, ok := v.Selected()
	if !ok {
		return ""
	}
	return issueID(is.Number) + " " + logPath(is)
}

func (v backlogView) move(d int) backlogView {
	if len(v.st.Issues) == 0 {
		return v
	}
	v.selIdx = max(0, min(v.selIdx+d, len(v.st.Issues)-1))
	v.selNum = v.st.Issues[v.selIdx].Number
	return v
}

// reselect keeps the selection on its issue after a read, or on the
// nearest row; the first read selects the first issue a user would want
// to look at (running, else parked or failed, else the first).
func (v backlogView) reselect() backlogView {
	for i, is := range v.st.Issues {
		if is.Number == v.selNum {
			v.selIdx = i
			return v
		}
	}
	if v.selNum == 0 {
		v.selIdx = firstUrgent(v.st.Issues)
	}
	v.selIdx = max(0, min(v.selIdx, len(v.st.Issues)-1))
	v.selNum = 0
	if len(v.st.Issues) > 0 {
		v.selNum = v.st.Issues[v.selIdx].Number
	}
	return v
}

func firstUrgent(issues []backlog.IssueView) int {
	for i, is := range issues {
		if is.State == backlog.StateRunning {
			return i
		}
	}
	for i, is := range issues {
		if urgentIssue(is) {
			return i
		}
	}
	return 0
}

// readSelected refreshes the preview of the selected worker.
func (v backlogView) readSelected() tea.Cmd {
	is, ok := v.Selected()
	if !ok || is.RunDir == "" {
		return nil
	}
	return readLog(issueID(is.Number), logPath(is))
}

// AttachArgv is the argv of the last attach command the view ran.
func (v backlogView) AttachArgv() []string { return v.attach }

func issueID(n int) string { return "#" + strconv.Itoa(n) }

func logPath(is backlog.IssueView) string {
	if is.RunDir == "" {
		return ""
	}
	return filepath.Join(is.RunDir, lanes.LogFile)
}

// urgentIssue reports whether an issue's row must stay when the table is
// cut: its worker runs, or it needs a person (parked, failed).
func urgentIssue(is backlog.IssueView) bool {
	switch is.State {
	case backlog.StateRunning, backlog.StateMerging, backlog.StateParked, backlog.StateFailed:
		return true
	}
	return false
}
