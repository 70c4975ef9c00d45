package e2etest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// Background is a CLI invocation running in the background.
type Background struct {
	Cmd      *exec.Cmd
	Out, Err *LockedBuffer
	Done     chan Result
}

// LockedBuffer lets the test read output while the process writes it.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// NewLockedBuffer is an empty LockedBuffer.
func NewLockedBuffer() *LockedBuffer { return &LockedBuffer{} }

func (lb *LockedBuffer) Write(p []byte) (int, error) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return lb.b.Write(p)
}

func (lb *LockedBuffer) String() string {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return lb.b.String()
}

// Start runs the binary on the repo in the background (startCmd).
func (r *Repo) Start(ctx context.Context, args ...string) *Background {
	r.T.Helper()
	return startCmd(r.T, r.Command(ctx, args...))
}

// startCmd starts cmd in the background; the result arrives on done.
// Cleanup kills it if the test did not wait for it.
func startCmd(t *testing.T, cmd *exec.Cmd) *Background {
	t.Helper()
	bg := &Background{Cmd: cmd, Out: NewLockedBuffer(), Err: NewLockedBuffer(), Done: make(chan Result, 1)}
	cmd.Stdout, cmd.Stderr = bg.Out, bg.Err
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", cmd.Args, err)
	}
	go func() {
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			code = -1
		}
		bg.Done <- Result{Code: code, Stdout: bg.Out.String(), Stderr: bg.Err.String()}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	return bg
}

// Wait returns the invocation's result, failing the test after timeout.
func (bg *Background) Wait(t *testing.T, what string, timeout time.Duration) Result {
	t.Helper()
	select {
	case res := <-bg.Done:
		return res
	case <-time.After(timeout):
		t.Fatalf("%s did not exit within %v; output so far:\n%s\n%s", what, timeout, bg.Out.String(), bg.Err.String())
		return Result{}
	}
}

// TmuxLane runs one tmux command on the repo's lane server (through
// tmuxadapter, like everything that runs tmux).
func (r *Repo) TmuxLane(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return tmuxadapter.New(r.Layout().Socket()).Command(ctx, args...)
}

// Capture is the visible text of a session's pane, "" if it is gone.
func (r *Repo) Capture(session string) string {
	out, err := r.TmuxLane("capture-pane", "-p", "-t", session+":")
	if err != nil {
		return ""
	}
	return out
}

// Disposition is terminalDisposition of the agent's run record, "" if
// there is none yet.
func (r *Repo) Disposition(agent string, attempt int) string {
	var rec struct {
		TerminalDisposition string `json:"terminalDisposition"`
	}
	b, err := os.ReadFile(filepath.Join(r.Layout().RunDir(0, agent, attempt), lanes.RuntimeFile))
	if err != nil || json.Unmarshal(b, &rec) != nil {
		return ""
	}
	return rec.TerminalDisposition
}

// Status runs `status --json` and decodes it.
func (r *Repo) Status(t *testing.T) state.Lane {
	t.Helper()
	res := r.Run(Context(t), "status", "--lane", "main", "--json")
	if res.Code != 0 {
		t.Fatalf("status --json exit %d: %s", res.Code, res.Stderr)
	}
	var l state.Lane
	if err := json.Unmarshal([]byte(res.Stdout), &l); err != nil {
		t.Fatalf("status --json: %v\n%s", err, res.Stdout)
	}
	return l
}

// AgentOf is agent id of wave in l; the test fails if there is none.
func AgentOf(t *testing.T, l state.Lane, wave int, id string) state.Agent {
	t.Helper()
	w := l.FindWave(wave)
	if w == nil {
		t.Fatalf("status has no wave %d: %+v", wave, l.Waves)
	}
	for _, a := range w.Agents {
		if a.ID == id {
			return a
		}
	}
	t.Fatalf("wave %d has no agent %s", wave, id)
	return state.Agent{}
}

// ClientSessions lists the sessions the lane server's clients show.
func (r *Repo) ClientSessions() []string {
	out, err := r.TmuxLane("list-clients", "-F", "#{client_session}")
	if err != nil {
		return nil
	}
	return strings.Fields(out)
}

// StopA1AtEnd stops the lane when the test ends and waits for A1's
// first two attempts (those that started) and the launcher bg to end.
func (r *Repo) StopA1AtEnd(t *testing.T, bg *Background) {
	t.Cleanup(func() {
		r.Run(context.Background(), "stop", "--lane", "main")
		for _, k := range []int{1, 2} {
			if r.Disposition("A1", k) != "" {
				WaitTerminal(t, filepath.Join(r.Layout().RunDir(0, "A1", k), lanes.RuntimeFile))
			}
		}
		<-bg.Done
	})
}

// Keys sends keys to the dashboard's pane, as a user's client would.
func (r *Repo) Keys(t *testing.T, keys ...string) {
	t.Helper()
	if out, err := r.TmuxLane(append([]string{"send-keys", "-t", "dashboard:"}, keys...)...); err != nil {
		t.Fatalf("send-keys %v: %v %s", keys, err, out)
	}
}

// Serve starts `serve` on a free loopback port and returns its URL.
func (r *Repo) Serve(t *testing.T, args ...string) string {
	t.Helper()
	return r.ServeEnv(t, nil, args...)
}

// ServeEnv is serve with env added to the binary's environment.
func (r *Repo) ServeEnv(t *testing.T, env []string, args ...string) string {
	t.Helper()
	return r.serve(t, 0, env, args...)
}

// ServeUnderFileLimit is ServeEnv with serve's open-file limit (ulimit
// -n) set to nofile.
func (r *Repo) ServeUnderFileLimit(t *testing.T, nofile int, env []string, args ...string) string {
	t.Helper()
	return r.serve(t, nofile, env, args...)
}

func (r *Repo) serve(t *testing.T, nofile int, env []string, args ...string) string {
	t.Helper()
	cmd := r.Command(Context(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	if nofile > 0 {
		cmd.Args = append([]string{"sh", "-c", fmt.Sprintf(`ulimit -n %d && exec "$@"`, nofile), "sh"}, cmd.Args...)
		cmd.Path = "/bin/sh"
	}
	bg := startCmd(t, cmd)
	t.Cleanup(func() {
		_ = bg.Cmd.Process.Signal(os.Interrupt)
		if res := bg.Wait(t, "serve after an interrupt", 30*time.Second); res.Code != 0 {
			t.Errorf("serve exit %d after an interrupt:\n%s", res.Code, res.Stderr)
		}
	})
	re := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+/)`)
	var url string
	WaitFor(t, "serve to listen", 30*time.Second, func() bool {
		if m := re.FindStringSubmatch(bg.Err.String()); m != nil {
			url = m[1]
			return true
		}
		return false
	})
	return url
}
