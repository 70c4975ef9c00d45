package kubernetes

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/kube/kubetest"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// kubeRun is a kubernetes run of agent A1 in wave 0, written as the
// launcher and its mirror leave it: events, launch.json, runtime.json
// naming its pod, and the agent.log the pod's runner wrote to the shared
// workspace.
type kubeRun struct {
	r   *e2etest.Repo
	dir string
	rec runtime.Record
}

// kubeRepo is a repository whose lane runs on the kubernetes backend of
// the cluster kubeconfig names, in namespace ns.
func kubeRepo(t *testing.T, kubeconfig, ns string) *e2etest.Repo {
	r := e2etest.NewRepo(t)
	r.Write("wave.config.yaml", strings.Replace(e2etest.Config, "runtime:\n", "runtime:\n  backend: kubernetes\n  kubernetes:\n"+
		"    kubeconfig: "+kubeconfig+"\n    namespace: "+ns+"\n    image: registry.example.com/agents:1\n"+
		"    workspace: {hostPath: "+r.Root+"}\n", 1))
	return r
}

func writeKubeRun(t *testing.T, r *e2etest.Repo, ns, pod string, logLines ...string) *kubeRun {
	t.Helper()
	l := r.Layout()
	dir := l.RunDir(0, "A1", 1)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	job := "wave-w0-a1-a1-0badc0de"
	now := time.Now().UTC()
	p := runtime.Payload{SchemaVersion: runtime.SchemaVersion, RunID: "w0-A1-a1", Lane: "main", AgentID: "A1", Attempt: 1,
		RunDir: dir, Argv: []string{"claude"}, HeartbeatIntervalMs: 200,
		Kubernetes: &runtime.KubeRun{Namespace: ns, Name: job, LeaseDurationSeconds: 1}}
	p.FillPaths()
	rec := runtime.Record{SchemaVersion: runtime.SchemaVersion, RunID: p.RunID, Lane: "main", AgentID: "A1", Attempt: 1,
		SessionBackend: runtime.BackendKubernetes, TerminalDisposition: runtime.Running, StartedAt: now, LastHeartbeatAt: now,
		HeartbeatIntervalMs: 200, Kubernetes: &runtime.KubeRef{Namespace: ns, Job: job, Pod: pod, Node: "node-a"},
		LogPath: p.LogPath, StatusPath: p.StatusPath}
	for path, v := range map[string]any{filepath.Join(dir, "launch.json"): p, p.RuntimePath: rec} {
		if err := runtime.WriteJSON(path, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(p.LogPath, []byte(strings.Join(logLines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []state.Event{
		state.NewEvent("main", 0, state.EntityWaveRun, "wave-0", "started", 0,
			state.Data(state.WaveStarted{MaxAttempts: 1, Agents: []state.AgentInfo{{ID: "A1", Title: "Part A1", Executor: "claude"}}})),
		state.NewEvent("main", 0, state.EntityAgentRun, "wave-0-attempt-1-agent-A1", "started", 1,
			state.Data(state.AgentRunData{AgentID: "A1", SessionName: lanes.SessionName(0, "A1"), Executor: "claude", RunDir: dir, LogPath: p.LogPath})),
	} {
		if err := state.Append(l.EventsPath(), ev); err != nil {
			t.Fatal(err)
		}
	}
	return &kubeRun{r: r, dir: dir, rec: rec}
}

// finish ends the run as the mirror records it: a last log line, then
// status.json and the final record.
func (k *kubeRun) finish(t *testing.T, last string) {
	t.Helper()
	f, err := os.OpenFile(k.rec.LogPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(last + "\n")
	f.Close()
	now := time.Now().UTC()
	if err := runtime.WriteJSON(k.rec.StatusPath, runtime.Status{Code: 0, Attempt: 1, CompletedAt: now}); err != nil {
		t.Fatal(err)
	}
	rec := k.rec
	code := 0
	rec.TerminalDisposition, rec.ExitCode, rec.FinishedAt = runtime.Completed, &code, &now
	if err := runtime.WriteJSON(filepath.Join(k.dir, lanes.RuntimeFile), rec); err != nil {
		t.Fatal(err)
	}
}

// attach --agent on a kubernetes run whose pod is gone says so (the pod
// name from the record escaped), shows the agent's log and follows it
// until the run ends, as for a tmux run whose session is gone.
func TestAttachKubeRunWithPodGoneFollowsTheLog(t *testing.T) {
	t.Parallel()
	c := kubeCluster.Get(t)
	ns := c.Namespace(t, "attach")
	r := kubeRepo(t, manifestLauncher(t, c, ns), ns)
	pod := "wave-w0-a1-a1-0badc0de-\x1b[2Jx"
	run := writeKubeRun(t, r, ns, pod, "agent: reading the repository", "agent: editing src/a1.txt")
	att := r.Start(e2etest.Context(t), "attach", "--lane", "main", "--agent", "A1")
	// stdout and stderr are two pipes read apart: the tail printed before
	// "following new output" may reach the test after it.
	e2etest.WaitFor(t, "attach to show the log's tail and follow it", 60*time.Second, func() bool {
		return strings.Contains(att.Err.String(), "following new output") &&
			strings.Contains(att.Out.String(), "agent: editing src/a1.txt")
	})
	stderr := att.Err.String()
	if strings.Contains(stderr, "\x1b") {
		t.Errorf("attach printed the pod name's escape sequence raw:\n%q", stderr)
	}
	for _, want := range []string{"agent A1: pod " + ns + "/wave-w0-a1-a1-0badc0de-", "the pod is gone", "showing agent A1's log " + run.rec.LogPath} {
		if !strings.Contains(stderr, want) {
			t.Errorf("attach stderr lacks %q:\n%s", want, stderr)
		}
	}
	run.finish(t, "agent: done")
	res := att.Wait(t, "attach following a run that ended", 30*time.Second)
	if res.Code != 0 || !strings.Contains(res.Stderr, "is completed; nothing more will be written") {
		t.Fatalf("attach exit %d, want 0 saying the run ended\n%s", res.Code, res.Stderr)
	}
	if !strings.Contains(res.Stdout, "agent: done") {
		t.Errorf("attach did not follow the log to its end:\n%s", res.Stdout)
	}
	t.Logf("attach said:\n%s", res.Stderr)
}

// A run whose record names no pod yet and whose Job is gone, and a run
// already over, show their log at once with the reason.
func TestAttachKubeRunWithoutPodOrOverShowsTheLog(t *testing.T) {
	t.Parallel()
	c := kubeCluster.Get(t)
	ns := c.Namespace(t, "attach")
	launcher := manifestLauncher(t, c, ns)
	r := kubeRepo(t, launcher, ns)
	run := writeKubeRun(t, r, ns, "", "agent: started")
	run.finish(t, "agent: finished")
	res := r.Run(e2etest.Context(t), "attach", "--lane", "main", "--agent", "A1")
	if res.Code != 0 || !strings.Contains(res.Stderr, "run w0-A1-a1 is completed, so its pod has no agent to attach to") ||
		!strings.Contains(res.Stdout, "agent: finished") {
		t.Fatalf("attach to a finished kubernetes run: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}

	r2 := kubeRepo(t, launcher, ns)
	writeKubeRun(t, r2, ns, "", "agent: started")
	att := r2.Start(e2etest.Context(t), "attach", "--lane", "main", "--agent", "A1")
	e2etest.WaitFor(t, "attach to follow the log", 60*time.Second, func() bool {
		return strings.Contains(att.Err.String(), "following new output")
	})
	if want := "agent A1: namespace " + ns + ": job wave-w0-a1-a1-0badc0de and its pod are gone"; !strings.Contains(att.Err.String(), want) {
		t.Errorf("attach stderr lacks %q:\n%s", want, att.Err.String())
	}
	_ = att.Cmd.Process.Signal(os.Interrupt)
	if res := att.Wait(t, "attach stopped with SIGINT", 30*time.Second); res.Code != 0 {
		t.Errorf("attach stopped by SIGINT: exit %d\n%s", res.Code, res.Stderr)
	}
}

// attach --agent from a terminal, on a running kubernetes run, through
// the real API server to the node: the user sees the agent's terminal,
// types to it (Ctrl-C goes to the agent, the attach stays), the agent
// follows the terminal's size, and Ctrl-P Ctrl-Q detaches, reaching the
// agent never, and leaving it running.
func TestAttachKubeRunTypesToTheAgentAndDetaches(t *testing.T) {
	t.Parallel()
	c := kubeCluster.Get(t)
	ns := c.Namespace(t, "attach")
	node := c.StartAttachNode(t)
	pod := "wave-w0-a1-a1-0badc0de-q7x2m"
	node.RunningPod(t, ns, pod, "agent", nil, nil)
	r := kubeRepo(t, manifestLauncher(t, c, ns), ns)
	writeKubeRun(t, r, ns, pod, "agent: started")

	cmd := r.Command(e2etest.Context(t), "attach", "--lane", "main", "--agent", "A1")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	screen := e2etest.NewLockedBuffer()
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(screen, tty); close(copied) }()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); tty.Close() })

	s := node.Accept(t, 60*time.Second)
	for _, want := range []kubetest.TerminalSize{{Width: 121, Height: 41}, {Width: 120, Height: 40}} {
		if got := nextSize(t, s); got != want {
			t.Errorf("the agent's terminal got size %v, want %v", got, want)
		}
	}
	_, _ = io.WriteString(s.Stdout, "agent> ready\r\n")
	e2etest.WaitFor(t, "the agent's output on the user's terminal", 30*time.Second, func() bool {
		return strings.Contains(screen.String(), "agent> ready")
	})
	_, _ = io.WriteString(tty, "fix it\r\x03")
	keys := make([]byte, len("fix it\r\x03"))
	if _, err := io.ReadFull(s.Stdin, keys); err != nil || string(keys) != "fix it\r\x03" {
		t.Fatalf("the agent got %q (%v), want the keys as typed, Ctrl-C included", keys, err)
	}
	if err := pty.Setsize(tty, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	if got := nextSize(t, s); got != (kubetest.TerminalSize{Width: 100, Height: 30}) {
		t.Errorf("after a resize the agent's terminal got %v, want 100x30", got)
	}
	_, _ = io.WriteString(tty, "\x10\x11")
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("attach after Ctrl-P Ctrl-Q: %v\n%s", err, screen.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("Ctrl-P Ctrl-Q did not detach:\n%s", screen.String())
	}
	<-copied
	if rest, _ := io.ReadAll(s.Stdin); len(rest) != 0 {
		t.Errorf("the agent got %q after the detach keys", rest)
	}
	if !strings.Contains(screen.String(), "detached from agent A1; it keeps running in pod "+ns+"/"+pod) {
		t.Errorf("attach does not say it detached:\n%s", screen.String())
	}
}

func nextSize(t *testing.T, s *kubetest.AttachSession) kubetest.TerminalSize {
	t.Helper()
	select {
	case size := <-s.Sizes:
		return size
	case <-time.After(30 * time.Second):
		t.Fatal("no terminal size reached the agent")
		return kubetest.TerminalSize{}
	}
}
