package e2etest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/coord"
)

// Context is a context for one test's invocations: two minutes, then cancelled.
func Context(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Launch runs `launch --lane main --no-dashboard` with extra flags in r.
func Launch(t *testing.T, r *Repo, extra ...string) Result {
	t.Helper()
	args := append([]string{"launch", "--lane", "main", "--no-dashboard"}, extra...)
	return r.Run(Context(t), args...)
}

// ExitCodeHonoured runs a wave whose A1 exits 3 on r: the launch fails
// naming the code, and status.json holds the real exit code.
func ExitCodeHonoured(t *testing.T, r *Repo) {
	t.Helper()
	r.WriteWave(0, append([]Agent{ImplAgent("A1", "local.exit-code: 3")}, ClosureAgents()...)...)
	res := Launch(t, r, "--max-retries-per-wave", "0")
	if res.Code != 1 || !strings.Contains(res.Stdout, "A1: 3") {
		t.Fatalf("exit %d, want 1 with A1: 3\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var st struct {
		Code int `json:"code"`
	}
	ReadJSONFile(t, filepath.Join(r.Layout().RunDir(0, "A1", 1), "status.json"), &st)
	if st.Code != 3 {
		t.Fatalf("status.json code %d, want the real exit code 3", st.Code)
	}
}

// WaitTerminal waits until a runtime record is terminal, so nothing writes
// into the test's directories after it ends.
func WaitTerminal(t *testing.T, path string) {
	WaitFor(t, "terminal record "+path, 30*time.Second, func() bool {
		var rec struct {
			TerminalDisposition string `json:"terminalDisposition"`
		}
		b, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(b, &rec) != nil {
			return false
		}
		switch rec.TerminalDisposition {
		case "completed", "failed", "terminated":
			return true
		}
		return false
	})
}

// KillLauncherWhileRunning starts a launcher, waits until agent id's first
// run is running, and kills the launcher with SIGKILL.
func KillLauncherWhileRunning(t *testing.T, r *Repo, id string) {
	t.Helper()
	first := r.Command(Context(t), "launch", "--lane", "main", "--no-dashboard")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, id+" running", 30*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(r.Layout().RunDir(0, id, 1), "runtime.json"))
		return err == nil && strings.Contains(string(b), `"running"`)
	})
	_ = first.Process.Signal(syscall.SIGKILL)
	_ = first.Wait()
}

// RunWith runs the binary on the repo with extra environment entries
// (later entries win, so "PATH=..." replaces the PATH).
func (r *Repo) RunWith(ctx context.Context, env []string, args ...string) Result {
	r.T.Helper()
	cmd := r.Command(ctx, args...)
	cmd.Env = append(cmd.Env, env...)
	return RunCmd(r.T, cmd)
}

// RunCmd runs cmd and returns its exit code and output.
func RunCmd(t *testing.T, cmd *exec.Cmd) Result {
	t.Helper()
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", cmd.Args, err)
	}
	return Result{Code: code, Stdout: so.String(), Stderr: se.String()}
}

// PathOf is a PATH of one directory holding links to the named tools
// (and scripts: name → body, written as executables).
func PathOf(t *testing.T, tools []string, scripts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, tool := range tools {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s not on PATH: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// NothingStarted fails the test if the launch left any run or event.
func NothingStarted(t *testing.T, r *Repo) {
	t.Helper()
	if runs, _ := filepath.Glob(filepath.Join(r.Layout().StateDir, "waves", "*", "runs", "*")); len(runs) > 0 {
		t.Errorf("run directories were created: %v", runs)
	}
	if _, err := os.Stat(r.Layout().EventsPath()); err == nil {
		t.Errorf("events were recorded although nothing should have started")
	}
}

// FakeClaude stands in for the claude CLI: it is only ever started to
// see that preflight let it through.
const FakeClaude = "#!/bin/sh\necho fake claude\nexit 0\n"

// PostRecord posts a record to wave 0 and returns its id.
func PostRecord(t *testing.T, r *Repo, args ...string) string {
	t.Helper()
	res := r.Run(Context(t), append([]string{"coord", "post", "-w", "0", "--json"}, args...)...)
	var rec coord.Record
	if res.Code != 0 || json.Unmarshal([]byte(res.Stdout), &rec) != nil {
		t.Fatalf("coord post %v: exit %d %s%s", args, res.Code, res.Stdout, res.Stderr)
	}
	return rec.ID
}

// WriteKubeConfig makes the repo's lane main a kubernetes lane against
// the cluster of kubeconfig, in namespace ns.
func (r *Repo) WriteKubeConfig(kubeconfig, ns string) {
	r.T.Helper()
	kube := "runtime:\n  backend: kubernetes\n  kubernetes:\n" +
		"    kubeconfig: " + strconv.Quote(kubeconfig) + "\n" +
		"    namespace: " + ns + "\n" +
		"    image: registry.example.com/agents:1\n" +
		"    serviceAccount: wave\n" +
		"    workspace: {hostPath: " + strconv.Quote(r.Root) + "}\n"
	r.Write("wave.config.yaml", strings.Replace(Config, "runtime:\n", kube, 1))
}
