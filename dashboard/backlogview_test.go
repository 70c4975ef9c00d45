package dashboard

import (
	"context"
	"errors"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

func TestBacklogGolden(t *testing.T) {
	withLogs := func(t *testing.T) backlog.StatusView {
		v := runningBacklog()
		dir := t.TempDir()
		withWorkerLog(t, &v, dir, 15, 40)
		withWorkerLog(t, &v, dir, 27, 12)
		return v
	}
	tests := []struct {
		name string
		view func(t *testing.T) backlog.StatusView
		w, h int
		keys []string
	}{
		{"backlog-running-80x24", withLogs, 80, 24, nil},
		{"backlog-running-120x30", withLogs, 120, 30, nil},
		{"backlog-running-180x30", withLogs, 180, 30, nil},
		{"backlog-parked-selected-80x24", withLogs, 80, 24, []string{"j", "j", "j", "j"}},
		{"backlog-zoom-80x24", withLogs, 80, 24, []string{"l"}},
		{"backlog-help-80x24", withLogs, 80, 24, []string{"?"}},
		{"backlog-finished-80x24", func(*testing.T) backlog.StatusView { return finishedBacklog() }, 80, 24, nil},
		{"backlog-many-80x24", func(*testing.T) backlog.StatusView { return manyBacklog() }, 80, 24, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := press(t, newBacklogModel(t, Config{}, &loader{views: []backlog.StatusView{tt.view(t)}}, tt.w, tt.h), tt.keys...)
			got := m.View()
			golden(t, tt.name, got+"\n")
			checkFrame(t, got, tt.w, tt.h)
		})
	}
	t.Run("backlog-none-80x24", func(t *testing.T) {
		m := newBacklogModel(t, Config{}, &loader{none: true}, 80, 24)
		got := m.View()
		golden(t, "backlog-none-80x24", got+"\n")
		checkFrame(t, got, 80, 24)
	})
	t.Run("backlog-frame", func(t *testing.T) {
		golden(t, "backlog-frame-running-100", BacklogFrame(runningBacklog(), true, 100, false, clock))
		golden(t, "backlog-frame-finished-80", BacklogFrame(finishedBacklog(), true, 80, false, clock))
		golden(t, "backlog-frame-none-80", BacklogFrame(backlog.StatusView{}, false, 80, false, clock))
	})
}

// issueRow matches the table row of issue n in state st.
func issueRow(n, st string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^(› |  )#` + regexp.QuoteMeta(n) + `\s+` + regexp.QuoteMeta(st) + `\b`)
}

func backlogOf(m Model) backlogView { return m.views[m.active].(backlogView) }

// At 80×24 every running, parked and failed issue stays on screen
// wherever the selection is, and so does the selected one; the tally and
// the header always show.
func TestBacklogFrameKeepsRunningParkedAndFailed(t *testing.T) {
	v := manyBacklog()
	m := newBacklogModel(t, Config{}, &loader{views: []backlog.StatusView{v}}, 80, 24)
	m = press(t, m, slices.Repeat([]string{"k"}, 40)...)
	for i := range v.Issues {
		frame := m.View()
		checkFrame(t, frame, 80, 24)
		if !strings.Contains(frame, "merged 16 / in flight 4 / blocked 3 / needs-input 0 / waiting 7") {
			t.Fatalf("selection %d: no tally:\n%s", i, frame)
		}
		for _, is := range v.Issues {
			if urgentIssue(is) && !issueRow(itoa(is.Number), is.State).MatchString(frame) {
				t.Fatalf("selection %d: #%d (%s) is hidden:\n%s", i, is.Number, is.State, frame)
			}
		}
		sel, _ := backlogOf(m).Selected()
		if !regexp.MustCompile(`(?m)^› #` + itoa(sel.Number) + ` `).MatchString(frame) {
			t.Fatalf("the selected #%d is hidden:\n%s", sel.Number, frame)
		}
		m = press(t, m, "j")
	}
}

// The one-frame mode shows every issue; untrusted text never reaches the
// terminal raw.
func TestBacklogFrameEscapesIssueText(t *testing.T) {
	v := runningBacklog()
	v.Issues[4].Question = "rm -rf / \x1b]52;c;cHduZWQ=\x07?"
	v.NeedsInput[0].Question = v.Issues[4].Question
	v.Issues[5].Files = []string{"src/\x1b[31mred.ts"}
	v.Run.WaveBranch = "wave/\x1b[2Jx"
	for _, frame := range []string{BacklogFrame(v, true, 200, false, clock),
		newBacklogModel(t, Config{}, &loader{views: []backlog.StatusView{v}}, 200, 40).View()} {
		if strings.ContainsAny(frame, "\x1b\x07") {
			t.Fatalf("raw escapes in the frame: %q", frame)
		}
		for _, want := range []string{"Evil title", "rm -rf / ?", "src/red.ts", "wave/x"} {
			if !strings.Contains(frame, want) {
				t.Errorf("frame lacks %q:\n%s", want, frame)
			}
		}
	}
}

// clockAt is a settable clock for Config.Now.
type clockAt struct{ t time.Time }

func (c *clockAt) now() time.Time { return c.t }

func TestBacklogViewUpdate(t *testing.T) {
	moved := func() backlog.StatusView {
		v := runningBacklog()
		v.Issues = append([]backlog.IssueView{issueView(40, "A new issue taken", backlog.StateClaimed)}, v.Issues...)
		v.Issues[2].State = backlog.StateReady // #15 finished its work
		return v
	}
	tests := []struct {
		name  string
		l     func(t *testing.T) *loader
		cfg   func(t *testing.T) Config
		keys  []string
		check func(t *testing.T, m Model, l *loader)
	}{
		{"the first read selects the first running issue", oneRun, nil, nil,
			func(t *testing.T, m Model, l *loader) {
				if is, _ := backlogOf(m).Selected(); is.Number != 15 || !issueRow("15", "running").MatchString(m.View()) || !strings.Contains(m.View(), "› #15 ") {
					t.Fatalf("selected #%d:\n%s", is.Number, m.View())
				}
			}},
		{"j and k move the selection and stop at the ends", oneRun, nil, []string{"k", "k", "k", "j", "down", "up"},
			func(t *testing.T, m Model, l *loader) {
				if is, _ := backlogOf(m).Selected(); is.Number != 15 {
					t.Fatalf("selected #%d, want #15", is.Number)
				}
				m = press(t, m, slices.Repeat([]string{"j"}, 20)...)
				if is, _ := backlogOf(m).Selected(); is.Number != 31 {
					t.Fatalf("selection ran off the end: #%d", is.Number)
				}
			}},
		{"/ filters the issues as it filters the agents; esc clears it", withLogsRun, nil, []string{"/", "c", "a", "r", "t"},
			func(t *testing.T, m Model, l *loader) {
				v := m.View()
				if !issueRow("27", "parked").MatchString(v) || issueRow("15", "running").MatchString(v) || !strings.Contains(v, "/cart█  1 of 8 issues") {
					t.Fatalf("/cart should show #27 only:\n%s", v)
				}
				if is, _ := backlogOf(m).Selected(); is.Number != 27 || !strings.Contains(v, "worker 27 line 12") {
					t.Fatalf("selected #%d; the preview should follow it:\n%s", is.Number, v)
				}
				if v = press(t, m, "x").View(); !strings.Contains(v, "no issue matches /cartx") {
					t.Fatalf("a filter that hides every issue:\n%s", v)
				}
				if v = press(t, m, "backspace", "enter", "esc").View(); !issueRow("15", "running").MatchString(v) || strings.Contains(v, "of 8 issues") {
					t.Fatalf("esc did not clear the filter:\n%s", v)
				}
			}},
		{"a new read keeps the selection on its issue", func(*testing.T) *loader {
			return &loader{views: []backlog.StatusView{runningBacklog(), moved()}}
		}, nil, nil,
			func(t *testing.T, m Model, l *loader) {
				m = drive(t, m, StateMsg{Lane: runningLane()})
				is, _ := backlogOf(m).Selected()
				if is.Number != 15 || is.State != backlog.StateReady || !regexp.MustCompile(`› #15\s+ready`).MatchString(m.View()) {
					t.Fatalf("after the read #%d %s selected:\n%s", is.Number, is.State, m.View())
				}
			}},
		{"every lane change reads the run again", oneRun, nil, nil,
			func(t *testing.T, m Model, l *loader) {
				before := l.reads
				m = drive(t, m, StateMsg{Lane: runningLane()})
				drive(t, m, StateMsg{Lane: runningLane()})
				if l.reads != before+2 {
					t.Fatalf("%d reads for 2 changes", l.reads-before)
				}
			}},
		{"a failed read keeps the last view and says why", func(*testing.T) *loader {
			return &loader{views: []backlog.StatusView{runningBacklog()}}
		}, nil, nil,
			func(t *testing.T, m Model, l *loader) {
				l.err = errors.New("events.jsonl: permission denied")
				v := drive(t, m, StateMsg{Lane: runningLane()}).View()
				if !strings.Contains(v, "reading the backlog run: events.jsonl: permission denied") || !issueRow("15", "running").MatchString(v) {
					t.Fatalf("failed read:\n%s", v)
				}
			}},
		{"no run yet, then the run appears", func(*testing.T) *loader { return &loader{none: true} }, nil, nil,
			func(t *testing.T, m Model, l *loader) {
				if v := m.View(); !strings.Contains(v, "no backlog run on this lane yet") || !strings.Contains(v, "backlog run --issues") {
					t.Fatalf("no run:\n%s", v)
				}
				l.none, l.views = false, []backlog.StatusView{runningBacklog()}
				if v := drive(t, m, StateMsg{Lane: runningLane()}).View(); !strings.Contains(v, "merged 1 / in flight 3") {
					t.Fatalf("the run did not show up:\n%s", v)
				}
			}},
		{"enter attaches to the selected worker's session", oneRun, attachConfig, nil,
			func(t *testing.T, m Model, l *loader) {
				next, _ := m.Update(keyMsg("enter"))
				want := []string{"tmux", "-u", "-L", "wb-test", "attach-session", "-t", "=backlog-i15"}
				if got := backlogOf(next.(Model)).AttachArgv(); !slices.Equal(got, want) {
					t.Fatalf("attach argv %q, want %q", got, want)
				}
				if !strings.Contains(fullHelp(t, m), "attach (C-b L comes back)") {
					t.Errorf("no hint how to come back:\n%s", fullHelp(t, m))
				}
			}},
		{"enter on a worker in a pod attaches with attach --issue and the row names the pod", podRun, podAttachConfig, nil,
			func(t *testing.T, m Model, l *loader) {
				if v := m.View(); !strings.Contains(v, "pod agents/wave-i15-x on node-1") {
					t.Errorf("the selection does not name the pod:\n%s", v)
				}
				next, _ := m.Update(keyMsg("enter"))
				want := []string{"wave-orchestrator", "attach", "--issue", "15"}
				if got := backlogOf(next.(Model)).AttachArgv(); !slices.Equal(got, want) {
					t.Fatalf("attach argv %q, want %q", got, want)
				}
			}},
		{"enter on a waiting issue says there is no session", oneRun, attachConfig, slices.Repeat([]string{"j"}, 9),
			func(t *testing.T, m Model, l *loader) {
				m = press(t, m, "enter")
				if backlogOf(m).AttachArgv() != nil || !strings.Contains(m.View(), "#31 has no worker session yet (planned)") {
					t.Fatalf("enter on #31:\n%s", m.View())
				}
			}},
		{"enter on a parked issue shows its output", withLogsRun, attachConfig, []string{"j", "j", "j", "j", "enter"},
			func(t *testing.T, m Model, l *loader) {
				v := m.View()
				if backlogOf(m).AttachArgv() != nil || !strings.Contains(v, "#27 is parked; its worker has ended") || !strings.Contains(v, "worker 27 line 12") || !strings.Contains(v, "#27 output") {
					t.Fatalf("enter on parked #27:\n%s", v)
				}
			}},
		{"the preview follows the selection and the worker's new run", withLogsRun, nil, nil,
			func(t *testing.T, m Model, l *loader) {
				if v := m.View(); !strings.Contains(v, "#15 output · following") || !strings.Contains(v, "worker 15 line 40") {
					t.Fatalf("preview of #15:\n%s", v)
				}
				m = press(t, m, "j", "j", "j", "j")
				if v := m.View(); !strings.Contains(v, "worker 27 line 12") || strings.Contains(v, "worker 15 line") {
					t.Fatalf("preview did not move to #27:\n%s", v)
				}
				m = press(t, m, "k", "k", "k", "k")
				// A salvage relaunch writes a new run dir: the preview reads it.
				next := l.views[0]
				next.Issues = slices.Clone(next.Issues) // a read returns a new view
				withWorkerLog(t, &next, t.TempDir(), 15, 3)
				l.views = []backlog.StatusView{next}
				if v := drive(t, m, StateMsg{Lane: runningLane()}).View(); !strings.Contains(v, "worker 15 line 03") || strings.Contains(v, "line 40") {
					t.Fatalf("preview did not follow the relaunch:\n%s", v)
				}
			}},
		{"l shows the output full screen, esc returns", withLogsRun, nil, []string{"l"},
			func(t *testing.T, m Model, l *loader) {
				if v := m.View(); !strings.Contains(v, "worker 15 line 40") || strings.Contains(v, "STATE") {
					t.Fatalf("zoomed:\n%s", v)
				}
				if v := press(t, m, "esc").View(); !strings.Contains(v, "STATE") {
					t.Fatalf("esc did not return to the table:\n%s", v)
				}
			}},
		{"pgup stops following the output, G follows again", withLogsRun, nil, []string{"pgup"},
			func(t *testing.T, m Model, l *loader) {
				if v := m.View(); !strings.Contains(v, "G follows") || strings.Contains(v, "worker 15 line 40") {
					t.Fatalf("pgup should scroll away from the tail:\n%s", v)
				}
				if v := press(t, m, "G").View(); !strings.Contains(v, "following") || !strings.Contains(v, "worker 15 line 40") {
					t.Fatalf("G should follow the tail:\n%s", v)
				}
			}},
		{"tab goes to the wave view and back", oneRun, nil, []string{"tab"},
			func(t *testing.T, m Model, l *loader) {
				if v := m.View(); !strings.Contains(v, "wave 3 · running") || strings.Contains(v, "in flight") {
					t.Fatalf("tab should show the waves:\n%s", v)
				}
				if v := press(t, m, "tab").View(); !strings.Contains(v, "merged 1 / in flight 3") {
					t.Fatalf("tab back:\n%s", v)
				}
			}},
		{"the wave view's attach is not reported by the backlog view", oneRun, nil, nil,
			func(t *testing.T, m Model, l *loader) {
				for _, msg := range []tea.Msg{attachedMsg{view: "waves", session: "w3-A2"}, sessionGoneMsg{view: "waves", agent: "A2", session: "w3-A2"}} {
					if _, cmd := backlogOf(m).Update(msg); cmd != nil {
						t.Fatalf("the backlog view answered the wave view's %T", msg)
					}
				}
				m = drive(t, m, attachedMsg{view: BacklogViewName, session: "backlog-i15"})
				if v := m.View(); !strings.Contains(v, "back from backlog-i15") {
					t.Fatalf("its own attach:\n%s", v)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.l(t)
			cfg := Config{}
			if tt.cfg != nil {
				cfg = tt.cfg(t)
			}
			m := press(t, newBacklogModel(t, cfg, l, 100, 30), tt.keys...)
			tt.check(t, m, l)
		})
	}
}

func oneRun(*testing.T) *loader { return &loader{views: []backlog.StatusView{runningBacklog()}} }

// podRun is oneRun with its workers in pods.
func podRun(*testing.T) *loader {
	v := runningBacklog()
	for i := range v.Issues {
		if v.Issues[i].Session != "" {
			v.Issues[i].Pod = "agents/wave-i" + strconv.Itoa(v.Issues[i].Number) + "-x on node-1"
		}
	}
	return &loader{views: []backlog.StatusView{v}}
}

func podAttachConfig(t *testing.T) Config {
	c := attachConfig(t)
	c.AttachIssue = func(n int) *exec.Cmd { return exec.Command("wave-orchestrator", "attach", "--issue", strconv.Itoa(n)) }
	return c
}

func withLogsRun(t *testing.T) *loader {
	v := runningBacklog()
	dir := t.TempDir()
	withWorkerLog(t, &v, dir, 15, 40)
	withWorkerLog(t, &v, dir, 27, 12)
	return &loader{views: []backlog.StatusView{v}}
}

func attachConfig(*testing.T) Config {
	c := tmuxadapter.New("wb-test")
	return Config{Back: "C-b L", Attach: func(s string) *exec.Cmd { return AttachCommand(c.AttachArgv(s, false), false) }}
}

// A running run is read again every few seconds for its worktrees'
// progress, ages count on between reads, and a finished run is left alone.
func TestBacklogTicksRefreshALiveRun(t *testing.T) {
	c := &clockAt{t: clock}
	l := oneRun(t)
	var v View = NewBacklogView(Config{Now: c.now}, l.load)
	step := func(msg tea.Msg) tea.Cmd {
		var cmd tea.Cmd
		v, cmd = v.Update(msg)
		return cmd
	}
	feed := func(cmd tea.Cmd) {
		for _, msg := range runCmd(cmd) {
			feedAll(&v, msg)
		}
	}
	step(tea.WindowSizeMsg{Width: 100, Height: 30})
	feed(v.Init())
	feed(step(StateMsg{})) // a read at clock
	reads := l.reads
	c.t = clock.Add(time.Second)
	if cmd := step(TickMsg(c.t)); cmd != nil {
		feed(cmd)
	}
	if l.reads != reads {
		t.Fatalf("a tick 1 s after the read read again")
	}
	if out := v.View(); !strings.Contains(out, "elapsed 12m35s") || !regexp.MustCompile(`#15\s+running\s+2\s+3\s+5s`).MatchString(out) {
		t.Fatalf("ages did not count on with the clock:\n%s", out)
	}
	c.t = clock.Add(backlogRefresh)
	feed(step(TickMsg(c.t)))
	if l.reads != reads+1 {
		t.Fatalf("%d reads after %v, want one more", l.reads-reads, backlogRefresh)
	}
	l.views = []backlog.StatusView{finishedBacklog()}
	feed(step(StateMsg{}))
	reads = l.reads
	c.t = c.t.Add(time.Hour)
	feed(step(TickMsg(c.t)))
	if l.reads != reads {
		t.Fatal("a finished run was read again on a tick")
	}
	if out := v.View(); !strings.Contains(out, "elapsed 12m34s") {
		t.Fatalf("a finished run's elapsed time moved:\n%s", out)
	}
}

// feedAll updates v with msg and every message its commands produce.
func feedAll(v *View, msg tea.Msg) {
	queue := []tea.Msg{msg}
	for len(queue) > 0 {
		var cmd tea.Cmd
		*v, cmd = (*v).Update(queue[0])
		queue = append(queue[1:], runCmd(cmd)...)
	}
}

// Reads never pile up: a change during a read asks for one more read
// after it, not one per change.
func TestBacklogReadsDoNotPileUp(t *testing.T) {
	l := oneRun(t)
	var v View = NewBacklogView(Config{Now: func() time.Time { return clock }}, l.load)
	v, first := v.Update(StateMsg{})
	v, second := v.Update(StateMsg{})
	v, third := v.Update(StateMsg{})
	if first == nil || second != nil || third != nil {
		t.Fatalf("reads started: %v %v %v, want only the first", first != nil, second != nil, third != nil)
	}
	msgs := runCmd(first)
	v, again := v.Update(msgs[0])
	if len(runCmd(again)) == 0 || l.reads != 2 {
		t.Fatalf("after the read: %d reads, want the one asked for during it", l.reads)
	}
}

// enter checks the session first: a gone worker session shows the
// worker's output with a note instead of failing in tmux.
func TestBacklogEnterFallsBackToOutputWhenSessionGone(t *testing.T) {
	c := isolateTmux(t)
	ctx := context.Background()
	for _, name := range []string{workerSession(15), "dashboard"} {
		if err := c.NewSession(ctx, tmuxadapter.SessionSpec{Name: name, Argv: []string{"sleep", "600"}}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{HasSession: c.HasSession, Attach: func(s string) *exec.Cmd { return AttachCommand(c.AttachArgv(s, false), false) }}
	m := newBacklogModel(t, cfg, withLogsRun(t), 100, 30)
	_, cmd := m.Update(keyMsg("enter"))
	if _, gone := cmd().(sessionGoneMsg); gone {
		t.Fatal("live session backlog-i15 reported gone")
	}
	if err := c.KillSession(ctx, workerSession(15)); err != nil {
		t.Fatal(err)
	}
	v := press(t, m, "enter").View()
	if !strings.Contains(v, "session backlog-i15 is gone; showing #15's output") || !strings.Contains(v, "worker 15 line 40") || strings.Contains(v, "STATE") {
		t.Errorf("gone session should show the output full screen with a note:\n%s", v)
	}
}

// BenchmarkBacklogFrame is one redraw of the backlog view of a 200-issue
// run at 120×40 (layout and frame), what every key and read costs.
func BenchmarkBacklogFrame(b *testing.B) {
	v := runningBacklog()
	base := v.Issues
	v.Issues = nil
	for i := range 200 {
		is := base[i%len(base)]
		is.Number = 1000 + i
		v.Issues = append(v.Issues, is)
	}
	var view View = NewBacklogView(Config{Now: func() time.Time { return clock }}, nil)
	view, _ = view.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	view, _ = view.Update(backlogMsg{v: v, ok: true})
	for b.Loop() {
		view, _ = view.Update(keyMsg("j"))
		_ = view.View()
	}
}
