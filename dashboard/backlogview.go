package dashboard

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
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
// nothing; its list owns the table's selection, filter, preview and
// answer line.
type backlogView struct {
	cfg  Config
	load BacklogLoader

	st      backlog.StatusView
	found   bool      // the lane has a backlog run
	loaded  bool      // the first read returned
	loadErr error     // the last read failed (st is the one before)
	readAt  time.Time // when st was read, to age its numbers
	now     time.Time

	loading bool      // a read is under way
	again   bool      // something changed during it: read once more
	askedAt time.Time // when the last read started

	list   list[backlog.IssueView]
	attach []string // argv of the last attach command

	width, height int
	plan          viewPlan
}

// issueRows is what the backlog view's list knows of an issue. Before
// the user chose one, the first issue a user would want to look at is
// selected: running, else parked or failed, else the first.
func issueRows() rowSpec[backlog.IssueView] {
	return rowSpec[backlog.IssueView]{
		words: listWords{noun: "issue", fields: "#, title, state, branch", attach: "the worker's tmux session"},
		id:    func(is backlog.IssueView) string { return issueID(is.Number) },
		log:   logPath,
		text: func(is backlog.IssueView) string {
			return strings.Join([]string{issueID(is.Number), is.Title, is.State, is.Branch}, " ")
		},
		urgent: urgentIssue,
		first:  firstUrgent,
	}
}

// NewBacklogView returns the backlog view for cfg (its clock, colour and
// attach hooks), reading the run with load. Pass it in Config.Views.
func NewBacklogView(cfg Config, load BacklogLoader) View {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	v := backlogView{cfg: cfg, load: load, now: cfg.Now(), width: 100,
		list: newList(issueRows(), cfg.Back, actAttach)}
	v.list.asks.backlog = true
	v.plan = v.layout()
	return v.sized()
}

func (v backlogView) Name() string    { return BacklogViewName }
func (v backlogView) Capturing() bool { return v.list.capturing() }

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
	return v.list.shortHelp(actUp, actAttach, actZoom, actPageUp)
}

// FullHelp lists every key of the view.
func (v backlogView) FullHelp() [][]key.Binding { return v.list.fullHelp() }

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

// Update handles reads, state changes, the clock, size and keys; after
// each the preview follows the selection.
func (v backlogView) Update(msg tea.Msg) (View, tea.Cmd) {
	var cmd tea.Cmd
	read := false // the run was read: read the selected log again
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
		read = true
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

func (v backlogView) receive(m backlogMsg) (backlogView, tea.Cmd) {
	v.loading = false
	v.now = v.cfg.Now()
	v.loadErr = m.err
	if m.err == nil {
		v.st, v.found, v.loaded, v.readAt = m.v, m.ok, true, v.now
		v.list = v.list.setRows(v.st.Issues)
	}
	if v.again {
		return v.read()
	}
	return v, nil
}

// key hands k to the list and does the view's own action, attach.
func (v backlogView) key(k tea.KeyMsg) (backlogView, tea.Cmd) {
	var act action
	var cmd tea.Cmd
	v.list, act, cmd = v.list.key(v.cfg, k)
	if act == actAttach {
		is, _ := v.list.selected()
		return v.attachTo(is)
	}
	return v, cmd
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
			v.list.zoom = true
		}
		return v, Note("%s is %s; its worker has ended, showing its output", id, is.State)
	case is.Pod != "" && v.cfg.AttachIssue == nil:
		return v, Note("attach is not available here; run: wave-orchestrator attach --issue %d", is.Number)
	case is.Pod != "":
		var cmd tea.Cmd
		v.attach, cmd = attachPod(v.Name(), id, v.cfg.AttachIssue(is.Number))
		return v, cmd
	case v.cfg.Attach == nil:
		return v, Note("attach is not available here; run: tmux -L <socket> attach -t %s", clean(is.Session))
	}
	var cmd tea.Cmd
	v.attach, cmd = attachSession(v.cfg, v.Name(), id, is.Session)
	return v, cmd
}

// Selected returns the selected issue.
func (v backlogView) Selected() (backlog.IssueView, bool) { return v.list.selected() }

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
// cut: its worker runs or waits for a usage limit's reset, or it needs a
// person (parked, failed).
func urgentIssue(is backlog.IssueView) bool {
	switch is.State {
	case backlog.StateRunning, backlog.StateMerging, backlog.ViewPaused, backlog.StateParked, backlog.StateFailed:
		return true
	}
	return false
}
