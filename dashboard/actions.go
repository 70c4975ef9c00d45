package dashboard

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// actionTimeout bounds a stop or resume started from the dashboard: stop
// waits out the run's grace period.
const actionTimeout = 2 * time.Minute

type attachedMsg struct {
	view     string // the view that attached; only it reports the result
	session  string
	switched bool // switch-client: returned at once, the client moved
	err      error
}

// sessionGoneMsg reports that the selected agent's (or issue's) session
// no longer exists, so the view shows its output instead.
type sessionGoneMsg struct{ view, agent, session string }

// AttachArgv is the argv of the last attach command the view ran.
func (v waveView) AttachArgv() []string { return v.attach }

// attachTo shows a's tmux session, or its pod for a kubernetes agent,
// or says which command does when the hook for it is missing.
func (v waveView) attachTo(a state.Agent) (waveView, tea.Cmd) {
	var cmd tea.Cmd
	switch {
	case a.Backend == state.BackendKubernetes && v.cfg.AttachAgent != nil:
		v.attach, cmd = attachPod(v.Name(), a.ID, v.cfg.AttachAgent(a.ID))
		return v, cmd
	case a.Backend != state.BackendKubernetes && a.SessionName == "":
		return v, Note("agent %s has no tmux session yet", a.ID)
	case a.Backend == state.BackendKubernetes || v.cfg.Attach == nil:
		return v, Note("attach is not available here; run: wave-orchestrator attach --lane %s --agent %s", clean(v.lane.Lane), clean(a.ID))
	}
	v.attach, cmd = attachSession(v.cfg, v.Name(), a.ID, a.SessionName)
	return v, cmd
}

// attachPod is the attach of who's pod for the view named view: cmd
// (`attach --agent`, `attach --issue`) runs in this terminal, as the
// API, not tmux, reaches the pod. It returns the argv it runs.
func attachPod(view, who string, cmd *exec.Cmd) ([]string, tea.Cmd) {
	return cmd.Args, tea.ExecProcess(cmd, func(err error) tea.Msg {
		return attachedMsg{view: view, session: "pod of " + who, err: err}
	})
}

// attachSession is the attach of who's tmux session for the view named
// view: the argv it runs and the command that runs it. With HasSession
// the session is checked first, in the command so the UI never blocks on
// tmux, and a gone one is reported instead of failing in tmux.
func attachSession(cfg Config, view, who, session string) ([]string, tea.Cmd) {
	cmd := cfg.Attach(session)
	switched := slices.Contains(cmd.Args, "switch-client")
	run := tea.ExecProcess(cmd, func(err error) tea.Msg {
		return attachedMsg{view: view, session: session, switched: switched, err: err}
	})
	has := cfg.HasSession
	if has == nil {
		return cmd.Args, run
	}
	return cmd.Args, func() tea.Msg {
		ok, err := has(context.Background(), session)
		if err == nil && !ok {
			return sessionGoneMsg{view: view, agent: who, session: session}
		}
		return run()
	}
}

// attachedNote is what the footer says once an attach returned.
func attachedNote(cfg Config, m attachedMsg) tea.Cmd {
	switch {
	case m.err != nil:
		return Note("attach %s: %v", m.session, m.err)
	case m.switched && cfg.Back != "":
		return Note("switched this client to %s; %s comes back here", m.session, cfg.Back)
	case m.switched:
		return Note("switched this client to %s", m.session)
	}
	return Note("back from %s", m.session)
}

// attachDone is a view's answer to the end of an attach it started (see
// attachSession): the footer note, and zoom when the session of the
// selected one (sel: its id) was gone, so its output shows instead.
// Another view's attach is not its to report.
func attachDone(cfg Config, view, sel string, msg tea.Msg) (note tea.Cmd, zoom bool) {
	switch msg := msg.(type) {
	case attachedMsg:
		if msg.view == view {
			return attachedNote(cfg, msg), false
		}
	case sessionGoneMsg:
		if msg.view == view {
			return Note("session %s is gone; showing %s's output", msg.session, msg.agent), sel != "" && sel == msg.agent
		}
	}
	return nil, false
}

// stop asks to stop the selected agent's live run, then runs StopAgent:
// the runner's group gets TERM, then KILL after the grace. A live
// launcher counts the run as a failed attempt and retries it while the
// wave has attempts left.
func (v waveView) stop() tea.Cmd {
	a, ok := v.Selected()
	if !ok {
		return nil
	}
	id := clean(a.ID)
	if a.State != state.AgentRunning && a.State != state.AgentLaunching {
		return Note("%s is %s; only a running agent can be stopped", id, a.State)
	}
	if v.cfg.StopAgent == nil {
		return Note("run: wave-orchestrator stop --lane %s --agent %s", clean(v.lane.Lane), id)
	}
	stop, agent := v.cfg.StopAgent, a.ID
	return Confirm(fmt.Sprintf("stop %s's run (TERM, then KILL after the grace)?", id), func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
		defer cancel()
		out, err := stop(ctx, agent)
		if err != nil {
			return NoteMsg(fmt.Sprintf("stop %s: %v", id, err))
		}
		return NoteMsg(out)
	})
}

// retry resumes the shown wave when no launcher holds the lane: the
// resume plan reruns the agents that did not pass (the selected one
// among them) and reuses proven ones. While a launcher runs it owns
// retries, and starting another would only meet the lane lock, so the
// key explains instead.
func (v waveView) retry() tea.Cmd {
	w := v.shown()
	if w == nil {
		return Note("no wave to retry")
	}
	cmdline := fmt.Sprintf("wave-orchestrator resume --lane %s --wave %d", clean(v.lane.Lane), w.Wave)
	if l := v.lane.Launcher; l != nil && l.Alive {
		return Note("launcher pid %d is running and retries failed agents itself; once it exits, r runs: %s", l.Pid, cmdline)
	}
	if w.Status == state.WaveCompleted {
		return Note("wave %d completed; nothing to retry", w.Wave)
	}
	if v.cfg.Resume == nil {
		return Note("run: %s", cmdline)
	}
	who := "the agents that did not pass"
	if a, ok := v.Selected(); ok && a.State != state.AgentCompleted && a.State != state.AgentReused {
		who += ", " + clean(a.ID) + " among them"
	}
	resume, n := v.cfg.Resume, w.Wave
	return Confirm(fmt.Sprintf("resume wave %d: rerun %s, reuse proven ones?", n, who), func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
		defer cancel()
		out, err := resume(ctx, n)
		if err != nil {
			return NoteMsg(fmt.Sprintf("resume wave %d: %v", n, err))
		}
		return NoteMsg(out)
	})
}
