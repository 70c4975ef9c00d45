package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"

	"github.com/creack/pty"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// agentRow matches the dashboard table row of an agent in a state (the
// selection marker may precede it).
func agentRow(id, st string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^(› |  )` + regexp.QuoteMeta(id) + `\s+` + regexp.QuoteMeta(st) + `\b`)
}

// The dashboard session follows the wave, outlives the launcher with
// its final frame and a result line, detaches on q and keeps running,
// and is replaced in place (its client staying) by the next launch.
func TestDashboardSessionOutlivesTheWave(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 3s"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	bg := r.Start(e2etest.Context(t), "launch", "--lane", "main")
	env := append(envWithout("TMUX", "TMUX_PANE"), "TMUX_TMPDIR="+e2etest.TmuxDir())

	var frame string
	e2etest.WaitFor(t, "the dashboard to show A1 running", 30*time.Second, func() bool {
		frame = r.Capture(lanes.DashboardSession)
		return agentRow("A1", "running").MatchString(frame)
	})
	if !regexp.MustCompile(`wave 0 · running`).MatchString(frame) {
		t.Fatalf("A1 runs but the wave is not shown running:\n%s", frame)
	}
	// Windows name their agent, not the binary they run.
	windows, err := r.TmuxLane("list-windows", "-a", "-F", "#{session_name}=#{window_name}")
	if err != nil || !strings.Contains(windows, "w0-A1=A1\n") || !strings.Contains(windows, "dashboard=dashboard\n") {
		t.Fatalf("window names (%v):\n%s", err, windows)
	}
	client := ptyClient(t, env, "tmux", "-L", r.Layout().Socket(), "attach", "-t", lanes.DashboardSession)
	e2etest.WaitFor(t, "a client on the dashboard", 30*time.Second, func() bool {
		return slices.Equal(r.ClientSessions(), []string{lanes.DashboardSession})
	})

	res := bg.Wait(t, "launch", time.Minute)
	if res.Code != 0 {
		t.Fatalf("launch exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stdout, "tmux -L "+r.Layout().Socket()+" attach -t dashboard") {
		t.Fatalf("launch does not say how to reach the dashboard:\n%s", res.Stdout)
	}
	// The launcher has exited: the dashboard stays, with the final frame
	// and the result line, and its client stays attached.
	e2etest.WaitFor(t, "the final frame with its result line", 30*time.Second, func() bool {
		frame = r.Capture(lanes.DashboardSession)
		return strings.Contains(frame, "■ wave 0 completed · 5/5 agents ok") && agentRow("A1", "completed").MatchString(frame)
	})
	for _, id := range []string{"A2", "A8", "A9", "A0"} {
		if !agentRow(id, "completed").MatchString(frame) {
			t.Errorf("final frame does not show %s completed:\n%s", id, frame)
		}
	}
	if !strings.Contains(frame, "launcher pid") || !strings.Contains(frame, "exited") {
		t.Errorf("final frame does not say the launcher exited:\n%s", frame)
	}
	if !strings.Contains(frame, "q detach") {
		t.Errorf("in its session the dashboard should offer q to detach:\n%s", frame)
	}
	if s := r.ClientSessions(); !slices.Equal(s, []string{lanes.DashboardSession}) {
		t.Fatalf("the client left the dashboard when the launch ended: %v", s)
	}
	if doc := r.Run(e2etest.Context(t), "doctor", "--lane", "main"); strings.Contains(doc.Stdout+doc.Stderr, "with no launcher") {
		t.Errorf("doctor counts the kept dashboard as a leftover session:\n%s%s", doc.Stdout, doc.Stderr)
	}

	// q detaches the client; the dashboard keeps running, frame intact.
	if _, err := r.TmuxLane("send-keys", "-t", "dashboard:", "q"); err != nil {
		t.Fatal(err)
	}
	e2etest.WaitFor(t, "q to detach the client", 30*time.Second, func() bool {
		return len(r.ClientSessions()) == 0 && processExited(client)
	})
	pane, err := r.TmuxLane("display-message", "-p", "-t", "dashboard:", "#{pane_dead} #{pane_pid}")
	if err != nil || !strings.HasPrefix(pane, "0 ") {
		t.Fatalf("after q the dashboard pane is %q (%v), want alive", pane, err)
	}
	if f := r.Capture(lanes.DashboardSession); !strings.Contains(f, "■ wave 0 completed") {
		t.Fatalf("after q the frame is gone:\n%s", f)
	}

	// The next launch replaces the dashboard in place: a client attached
	// to it stays attached and sees the new run.
	ptyClient(t, env, "tmux", "-L", r.Layout().Socket(), "attach", "-t", lanes.DashboardSession)
	e2etest.WaitFor(t, "a client on the dashboard again", 30*time.Second, func() bool {
		return slices.Equal(r.ClientSessions(), []string{lanes.DashboardSession})
	})
	again := r.Start(e2etest.Context(t), "launch", "--lane", "main")
	if res := again.Wait(t, "second launch", time.Minute); res.Code != 0 {
		t.Fatalf("second launch exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if p, _ := r.TmuxLane("display-message", "-p", "-t", "dashboard:", "#{pane_dead} #{pane_pid}"); !strings.HasPrefix(p, "0 ") || p == pane {
		t.Fatalf("the new launch did not replace the dashboard: pane %q, before %q", p, pane)
	}
	if s := r.ClientSessions(); !slices.Equal(s, []string{lanes.DashboardSession}) {
		t.Fatalf("the new launch dropped the dashboard's client: %v", s)
	}
	e2etest.WaitFor(t, "the new dashboard's final frame", 30*time.Second, func() bool {
		return strings.Contains(r.Capture(lanes.DashboardSession), "■ wave 0 completed")
	})

	// Q quits for good and takes the session along: no dead pane left.
	if _, err := r.TmuxLane("send-keys", "-t", "dashboard:", "Q"); err != nil {
		t.Fatal(err)
	}
	e2etest.WaitFor(t, "Q to end the dashboard session", 30*time.Second, func() bool {
		_, err := r.TmuxLane("has-session", "-t", "=dashboard")
		return err != nil
	})
}

func TestStatusJSONOfFinishedLane(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("launch exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	res := r.Run(e2etest.Context(t), "status", "--lane", "main", "--json")
	if res.Code != 0 {
		t.Fatalf("status --json exit %d: %s", res.Code, res.Stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
		t.Fatalf("status --json is not JSON: %v\n%s", err, res.Stdout)
	}
	if v, _ := doc["schemaVersion"].(float64); v != 1 {
		t.Fatalf("schemaVersion %v, want 1", doc["schemaVersion"])
	}
	for _, k := range []string{"lane", "socket", "launcher", "waves", "problems", "generatedAt", "lastEvents"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("lane has no %q", k)
		}
	}
	waves, _ := doc["waves"].([]any)
	if len(waves) != 1 {
		t.Fatalf("waves %v, want one", doc["waves"])
	}
	w := waves[0].(map[string]any)
	if w["status"] != "completed" || w["phase"] != "completed" {
		t.Fatalf("wave status %v phase %v, want completed", w["status"], w["phase"])
	}
	agents, _ := w["agents"].([]any)
	if len(agents) != 5 {
		t.Fatalf("%d agents, want 5", len(agents))
	}
	// Every documented agent field is present, and the facts a consumer
	// reads first are filled in for a finished run.
	fields := []string{"id", "title", "role", "executor", "state", "attempt", "startedAt", "finishedAt",
		"exitCode", "signal", "heartbeatAgeMs", "sessionName", "runDir", "logPath", "lastMarker", "statusCode", "detail"}
	for _, a := range agents {
		a := a.(map[string]any)
		for _, f := range fields {
			if _, ok := a[f]; !ok {
				t.Errorf("agent %v has no %q", a["id"], f)
			}
		}
		if a["state"] != "completed" || a["exitCode"] != 0.0 || a["finishedAt"] == nil || a["heartbeatAgeMs"] != nil {
			t.Errorf("agent %v: state %v exitCode %v finishedAt %v heartbeatAgeMs %v", a["id"], a["state"], a["exitCode"], a["finishedAt"], a["heartbeatAgeMs"])
		}
		if _, err := os.Stat(a["logPath"].(string)); err != nil {
			t.Errorf("agent %v logPath: %v", a["id"], err)
		}
	}
	text := r.Run(e2etest.Context(t), "status", "--lane", "main")
	if text.Code != 0 {
		t.Fatalf("status exit %d: %s", text.Code, text.Stderr)
	}
	if !strings.Contains(text.Stdout, "wave 0 · completed") || !agentRow("A0", "completed").MatchString(text.Stdout) {
		t.Fatalf("status text does not show the completed wave:\n%s", text.Stdout)
	}
}

// ptyClient runs argv as a tmux client on a pseudo-terminal, as a user's
// terminal would.
func ptyClient(t *testing.T, env []string, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	// bubbletea's init asks the terminal for its background colour and
	// waits up to 5 s for an answer on xterm-like terminals; this pty
	// answers nothing, and termenv does not ask screen/tmux terminals.
	cmd.Env = append(env, "TERM=screen")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatalf("start %v on a pty: %v", argv, err)
	}
	// tmux blocks writing to a pty nobody reads; what it printed is
	// shown when the test fails (a client that exited says why).
	out := &tailBuffer{max: 4096}
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(out, f); close(copied) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		f.Close()
		if t.Failed() {
			<-copied
			t.Logf("%v printed on its terminal (last %d bytes): %q", argv[1:], out.max, out.String())
		}
	})
	return cmd
}

// envWithout is the test environment minus the named variables.
func envWithout(names ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		keep := true
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

func TestAttachTargetsTheAgentSession(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 60s"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	bg := r.Start(e2etest.Context(t), "launch", "--lane", "main", "--no-dashboard")
	t.Cleanup(func() {
		r.Run(context.Background(), "stop", "--lane", "main")
		e2etest.WaitTerminal(t, filepath.Join(r.Layout().RunDir(0, "A1", 1), lanes.RuntimeFile))
		<-bg.Done
	})
	e2etest.WaitFor(t, "A1 to run", 30*time.Second, func() bool { return r.Disposition("A1", 1) == "running" })
	want := e2etest.AgentOf(t, r.Status(t), 0, "A1").SessionName
	if want != lanes.SessionName(0, "A1") {
		t.Fatalf("status names session %q for A1", want)
	}
	env := append(envWithout("TMUX", "TMUX_PANE"), "TMUX_TMPDIR="+e2etest.TmuxDir())

	// From a plain terminal: attach-session, a client on A1's session.
	outside := ptyClient(t, env, e2etest.Bin(), "--repo-root", r.Root, "attach", "--lane", "main", "--agent", "A1")
	e2etest.WaitFor(t, "a client attached to "+want, 30*time.Second, func() bool {
		s := r.ClientSessions()
		return len(s) == 1 && s[0] == want
	})
	if _, err := r.TmuxLane("detach-client", "-s", want); err != nil {
		t.Fatalf("detach: %v", err)
	}
	e2etest.WaitFor(t, "attach to return after detach", 30*time.Second, func() bool {
		return processExited(outside)
	})

	// From inside a client of the lane server ($TMUX set by tmux in the
	// pane): switch-client moves that client to A1's session.
	if out, err := r.TmuxLane("new-session", "-d", "-s", "probe", "-x", "120", "-y", "40", "cat"); err != nil {
		t.Fatalf("probe session: %v %s", err, out)
	}
	ptyClient(t, env, "tmux", "-L", r.Layout().Socket(), "attach", "-t", "probe")
	e2etest.WaitFor(t, "a client on probe", 30*time.Second, func() bool {
		s := r.ClientSessions()
		return len(s) == 1 && s[0] == "probe"
	})
	if out, err := r.TmuxLane("respawn-pane", "-k", "-t", "probe:", e2etest.Bin(), "--repo-root", r.Root, "attach", "--lane", "main", "--agent", "A1"); err != nil {
		t.Fatalf("respawn probe: %v %s", err, out)
	}
	e2etest.WaitFor(t, "the probe client to switch to "+want, 30*time.Second, func() bool {
		s := r.ClientSessions()
		return len(s) == 1 && s[0] == want
	})
}

// processExited reports whether cmd's process is gone (reaped or zombie),
// without waiting for it.
func processExited(cmd *exec.Cmd) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z")
}

func TestAttachShowsLogWhenSessionGone(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("launch exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	a := e2etest.AgentOf(t, r.Status(t), 0, "A1")
	if _, err := r.TmuxLane("has-session", "-t", a.SessionName); err == nil {
		t.Fatalf("session %s still exists after the wave; the test needs it gone", a.SessionName)
	}
	log, err := os.ReadFile(a.LogPath)
	if err != nil || len(bytes.TrimSpace(log)) == 0 {
		t.Fatalf("A1 log %s: %v (%d bytes)", a.LogPath, err, len(log))
	}
	res := r.Run(e2etest.Context(t), "attach", "--lane", "main", "--agent", "A1")
	if res.Code != 0 {
		t.Fatalf("attach exit %d: %s", res.Code, res.Stderr)
	}
	if !strings.Contains(res.Stderr, "session "+a.SessionName+" is gone") || !strings.Contains(res.Stderr, a.LogPath) {
		t.Fatalf("attach does not say the session is gone and which log it shows:\n%s", res.Stderr)
	}
	if !strings.Contains(res.Stderr, "completed; nothing more will be written") {
		t.Fatalf("attach does not say the run is over:\n%s", res.Stderr)
	}
	lastLine := e2etest.Lines(strings.TrimSpace(string(log)))
	if !strings.Contains(res.Stdout, lastLine[len(lastLine)-1]) {
		t.Fatalf("attach output lacks the log's last line %q:\n%s", lastLine[len(lastLine)-1], res.Stdout)
	}
	if res := r.Run(e2etest.Context(t), "attach", "--lane", "main", "--agent", "A7"); res.Code == 0 || !strings.Contains(res.Stderr, "A7") {
		t.Fatalf("attach to an unknown agent: exit %d %q", res.Code, res.Stderr)
	}
}

// A run whose session is gone while it still runs (here: renamed away)
// is followed through its log until it ends.
func TestAttachFollowsLogOfRunWithoutSession(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 60s"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	bg := r.Start(e2etest.Context(t), "launch", "--lane", "main", "--no-dashboard")
	t.Cleanup(func() {
		r.Run(context.Background(), "stop", "--lane", "main")
		e2etest.WaitTerminal(t, filepath.Join(r.Layout().RunDir(0, "A1", 1), lanes.RuntimeFile))
		<-bg.Done
	})
	e2etest.WaitFor(t, "A1 to run", 30*time.Second, func() bool { return r.Disposition("A1", 1) == "running" })
	session := lanes.SessionName(0, "A1")
	if out, err := r.TmuxLane("rename-session", "-t", session+":", "hidden"); err != nil {
		t.Fatalf("rename: %v %s", err, out)
	}
	att := r.Start(e2etest.Context(t), "attach", "--lane", "main", "--agent", "A1")
	e2etest.WaitFor(t, "attach to follow the log", 30*time.Second, func() bool {
		return strings.Contains(att.Err.String(), "following new output")
	})
	if !strings.Contains(att.Err.String(), "session "+session+" is gone") {
		t.Fatalf("attach does not say the session is gone:\n%s", att.Err.String())
	}
	if out, err := r.TmuxLane("rename-session", "-t", "hidden:", session); err != nil {
		t.Fatalf("rename back: %v %s", err, out)
	}
	if res := r.Run(e2etest.Context(t), "stop", "--lane", "main", "--agent", "A1"); res.Code != 0 {
		t.Fatalf("stop --agent exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	res := att.Wait(t, "attach following a run that ended", 30*time.Second)
	if res.Code != 0 || !strings.Contains(res.Stderr, "is terminated; nothing more will be written") {
		t.Fatalf("attach exit %d, want 0 saying the run ended\n%s", res.Code, res.Stderr)
	}
	log, err := os.ReadFile(filepath.Join(r.Layout().RunDir(0, "A1", 1), lanes.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	last := e2etest.Lines(strings.TrimSpace(string(log)))
	if !strings.Contains(res.Stdout, last[len(last)-1]) {
		t.Fatalf("attach did not follow the log to its last line %q:\n%s", last[len(last)-1], res.Stdout)
	}
	t.Logf("followed:\n%s", res.Stdout)
}

func TestStopLaneTerminatesTheWave(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 60s"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	bg := r.Start(e2etest.Context(t), "launch", "--lane", "main", "--no-dashboard")
	e2etest.WaitFor(t, "A1 to run", 30*time.Second, func() bool { return r.Disposition("A1", 1) == "running" })

	stop := r.Run(e2etest.Context(t), "stop", "--lane", "main")
	if stop.Code != 0 || !strings.Contains(stop.Stdout, "terminated w0-A1-a1") {
		t.Fatalf("stop exit %d\n%s\n%s", stop.Code, stop.Stdout, stop.Stderr)
	}
	res := bg.Wait(t, "the stopped launcher", 30*time.Second)
	if res.Code == 0 || !strings.Contains(res.Stderr, "stopped on request") {
		t.Fatalf("launcher exit %d after stop, want non-zero saying it was stopped\n%s", res.Code, res.Stderr)
	}
	var rec struct {
		TerminalDisposition string `json:"terminalDisposition"`
		ExitCode            *int   `json:"exitCode"`
		Signal              string `json:"signal"`
	}
	e2etest.ReadJSONFile(t, filepath.Join(r.Layout().RunDir(0, "A1", 1), lanes.RuntimeFile), &rec)
	if rec.TerminalDisposition != "terminated" || (rec.Signal == "" && rec.ExitCode == nil) {
		t.Fatalf("A1 record %+v, want terminated with a signal or exit code", rec)
	}
	l := r.Status(t)
	if w := l.FindWave(0); w.Status != state.WaveStopped {
		t.Fatalf("wave status %q, want stopped", w.Status)
	}
	if a := e2etest.AgentOf(t, l, 0, "A1"); a.State != state.AgentTerminated || (a.Signal == "" && a.ExitCode == nil) {
		t.Fatalf("A1 in status: state %q signal %q exit %v", a.State, a.Signal, a.ExitCode)
	}
	if l.Launcher == nil || l.Launcher.Alive {
		t.Fatalf("status shows launcher %+v, want it exited", l.Launcher)
	}
	if lanes.Held(r.Layout().LockPath()) {
		t.Fatal("lane lock still held after the launcher stopped")
	}
	// The lane is free: a new launch takes it and runs the wave through.
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("launch after stop: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
}

func TestStopAgentLeavesTheLauncherRunning(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 60s"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	bg := r.Start(e2etest.Context(t), "launch", "--lane", "main", "--no-dashboard")
	r.StopA1AtEnd(t, bg)
	e2etest.WaitFor(t, "A1 to run", 30*time.Second, func() bool { return r.Disposition("A1", 1) == "running" })

	stop := r.Run(e2etest.Context(t), "stop", "--lane", "main", "--agent", "A1")
	if stop.Code != 0 || strings.Contains(stop.Stdout, "asked the running launcher") {
		t.Fatalf("stop --agent exit %d\n%s\n%s", stop.Code, stop.Stdout, stop.Stderr)
	}
	if _, err := os.Stat(r.Layout().ControlPath()); err == nil {
		t.Fatal("stop --agent wrote the lane's stop request")
	}
	e2etest.WaitTerminal(t, filepath.Join(r.Layout().RunDir(0, "A1", 1), lanes.RuntimeFile))
	if d := r.Disposition("A1", 1); d != "terminated" {
		t.Fatalf("A1 attempt 1 is %q, want terminated", d)
	}
	// The launcher treats the terminated run as a failed attempt and,
	// with one retry allowed, runs A1 again; A2, which passed, is not
	// relaunched.
	e2etest.WaitFor(t, "the launcher to retry A1", 30*time.Second, func() bool { return r.Disposition("A1", 2) == "running" })
	select {
	case res := <-bg.Done:
		t.Fatalf("launcher exited %d after stop --agent\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	default:
	}
	launched, _ := e2etest.AgentStarts(r.Events())
	if launched["A1"] != 2 || launched["A2"] != 1 {
		t.Fatalf("launches %v, want A1 twice and A2 once", launched)
	}
	if a := e2etest.AgentOf(t, r.Status(t), 0, "A1"); a.State != state.AgentRunning || a.Attempt != 2 {
		t.Fatalf("status shows A1 %s attempt %d, want running attempt 2", a.State, a.Attempt)
	}
}

// x then y in the dashboard stops the selected agent's run as
// `stop --agent` does: the live launcher counts a failed attempt and
// runs it again.
func TestDashboardStopKeyStopsTheAgent(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 60s"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	bg := r.Start(e2etest.Context(t), "launch", "--lane", "main")
	r.StopA1AtEnd(t, bg)
	e2etest.WaitFor(t, "the dashboard to show A1 running", 30*time.Second, func() bool {
		return regexp.MustCompile(`(?m)^› A1\s+running`).MatchString(r.Capture(lanes.DashboardSession))
	})
	r.Keys(t, "x")
	e2etest.WaitFor(t, "the stop confirmation", 30*time.Second, func() bool {
		return strings.Contains(r.Capture(lanes.DashboardSession), "stop A1's run")
	})
	if d := r.Disposition("A1", 1); d != "running" {
		t.Fatalf("A1 is %q before the stop was confirmed", d)
	}
	r.Keys(t, "y")
	e2etest.WaitTerminal(t, filepath.Join(r.Layout().RunDir(0, "A1", 1), lanes.RuntimeFile))
	if d := r.Disposition("A1", 1); d != "terminated" {
		t.Fatalf("A1 attempt 1 is %q, want terminated", d)
	}
	e2etest.WaitFor(t, "the dashboard to report the stop", 30*time.Second, func() bool {
		return strings.Contains(r.Capture(lanes.DashboardSession), "terminated w0-A1-a1")
	})
	e2etest.WaitFor(t, "the launcher to retry A1", 30*time.Second, func() bool { return r.Disposition("A1", 2) == "running" })
}

// After a failed wave, r then y in the dashboard resumes it in the lane's
// resume session; the resumed launch replaces the dashboard, which then
// shows the wave completed.
func TestDashboardRetryKeyResumesTheWave(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.fail-attempts: 1"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	if res := r.Run(e2etest.Context(t), "launch", "--lane", "main", "--max-retries-per-wave", "0"); res.Code == 0 {
		t.Fatalf("launch passed; the test needs A1's first attempt to fail\n%s", res.Stdout)
	}
	e2etest.WaitFor(t, "the failed wave's result line", 30*time.Second, func() bool {
		return strings.Contains(r.Capture(lanes.DashboardSession), "■ wave 0 failed")
	})
	r.Keys(t, "r")
	e2etest.WaitFor(t, "the resume confirmation", 30*time.Second, func() bool {
		return strings.Contains(r.Capture(lanes.DashboardSession), "resume wave 0: rerun the agents that did not pass")
	})
	r.Keys(t, "y")
	e2etest.WaitFor(t, "the resumed wave to complete on the dashboard", time.Minute, func() bool {
		return strings.Contains(r.Capture(lanes.DashboardSession), "■ wave 0 completed")
	})
	if d := r.Disposition("A1", 2); d != "completed" {
		t.Fatalf("A1 attempt 2 is %q, want completed", d)
	}
	launched, _ := e2etest.AgentStarts(r.Events())
	if launched["A2"] != 1 {
		t.Fatalf("A2 passed and should be reused, launched %d times", launched["A2"])
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
