package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func readEnvJSON(t *testing.T, path string) map[string]string {
	t.Helper()
	var env map[string]string
	data, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(data, &env) != nil {
		t.Fatalf("env of %s: %v %s", path, err, data)
	}
	return env
}

// Two launches on one tmux server: each agent gets its own launcher's
// environment, not the one of the launcher that started the server, and
// secrets reach it though launch.json has them redacted.
func TestAgentEnvIsTheLaunchers(t *testing.T) {
	h := newHarness(t)
	root := t.TempDir()
	var ps []*Payload
	for _, v := range []string{"first", "second"} {
		t.Setenv("WAVE_TEST_FOO", v)
		p := h.payload(t, root, "A"+v, "env", filepath.Join(root, v+".json"))
		p.Env = map[string]string{"API_TOKEN": "s3cret-" + v}
		h.start(t, p)
		h.waitDone(t, p.RunDir)
		ps = append(ps, p)
	}
	for i, v := range []string{"first", "second"} {
		env := readEnvJSON(t, filepath.Join(root, v+".json"))
		if env["WAVE_TEST_FOO"] != v || env["API_TOKEN"] != "s3cret-"+v {
			t.Errorf("launch %d: WAVE_TEST_FOO=%q API_TOKEN=%q", i, env["WAVE_TEST_FOO"], env["API_TOKEN"])
		}
		launch, err := ReadPayload(filepath.Join(ps[i].RunDir, launchFile))
		if err != nil || launch.Env["API_TOKEN"] != RedactedValue {
			t.Errorf("launch.json of %s: %+v %v", v, launch, err)
		}
		if _, err := os.Stat(filepath.Join(ps[i].RunDir, envFile)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("env file of %s left on disk: %v", v, err)
		}
	}
}

func TestEnvFileIsPrivateAndTakenOnce(t *testing.T) {
	t.Parallel()
	p := &Payload{RunID: "r", RunDir: t.TempDir(), Env: map[string]string{"API_KEY": "k", "MODE": "m"}}
	if err := writeEnvFile(p, []string{"PATH=/bin", "TMUX=/tmp/x,1,0", "TMUX_PANE=%1", "TERM=xterm"}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(p.RunDir, envFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("env file: %v %v", fi, err)
	}
	launch := Redacted(*p)
	env, err := takeEnv(&launch, []string{"TERM=tmux-256color", "PATH=/pane"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"PATH=/bin", "TERM=xterm", "TERM=tmux-256color"}
	if len(env) != len(want) {
		t.Fatalf("env %q, want %q", env, want)
	}
	for i := range want {
		if env[i] != want[i] {
			t.Fatalf("env %q, want %q", env, want)
		}
	}
	if launch.Env["API_KEY"] != "k" || launch.Env["MODE"] != "m" {
		t.Fatalf("secrets not restored: %v", launch.Env)
	}
	// Gone after the first read: a second runner falls back to its own.
	env, err = takeEnv(&launch, []string{"PATH=/pane"})
	if err != nil || len(env) != 1 || env[0] != "PATH=/pane" {
		t.Fatalf("second take: %q %v", env, err)
	}
}

// The runner survives a vanished pane by catching SIGPIPE, not ignoring
// it: an ignored signal would be inherited, and `yes | head` would spin
// forever inside the agent.
func TestAgentDoesNotInheritIgnoredSigpipe(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	root := t.TempDir()
	out := filepath.Join(root, "status")
	p := h.payload(t, root, "A1")
	p.Argv = []string{"sh", "-c", `grep SigIgn /proc/self/status > "$1"`, "sh", out}
	h.start(t, p)
	if obs := h.waitDone(t, p.RunDir); obs.Verdict.State != StateCompleted {
		t.Fatalf("verdict %+v", obs.Verdict)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var mask uint64
	if _, err := fmt.Sscanf(string(data), "SigIgn: %x", &mask); err != nil {
		t.Fatalf("%q: %v", data, err)
	}
	if mask&(1<<(syscall.SIGPIPE-1)) != 0 {
		t.Fatalf("agent starts with SIGPIPE ignored: %s", data)
	}
}

// A user's ~/.tmux.conf must not reach lane servers: destroy-unattached
// would kill every (detached) agent session, and a default-shell that is
// not a shell would break the panes.
func TestUserTmuxConfIsIgnored(t *testing.T) {
	home := t.TempDir()
	conf := "set -g destroy-unattached on\nset -g default-shell /bin/false\n"
	if err := os.WriteFile(filepath.Join(home, ".tmux.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("SHELL", "/bin/false")
	h := newHarness(t)
	p := h.payload(t, t.TempDir(), "A1", "echo")
	h.start(t, p)
	waitRunning(t, p)
	ctx := context.Background()
	if err := h.tm.SendLiteral(ctx, p.SessionName, "still here"); err != nil {
		t.Fatal(err)
	}
	if err := h.tm.SendKeys(ctx, p.SessionName, "Enter"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "echo in agent.log", func() bool {
		log, _ := os.ReadFile(p.LogPath)
		return strings.Contains(string(log), "got: still here")
	})
}

// When tmux refuses the sessions, no env file (it holds secrets) is left.
func TestFailedStartLeavesNoEnvFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	root := t.TempDir()
	a := h.payload(t, root, "A1", "hang")
	b := h.payload(t, root, "A2", "hang")
	b.SessionName = a.SessionName // tmux refuses the duplicate
	b.Env = map[string]string{"API_TOKEN": "s3cret"}
	if err := h.b.Start(context.Background(), []*Payload{a, b}); err == nil {
		t.Fatal("start with a duplicate session name succeeded")
	}
	h.tm.KillServer(context.Background())
	if _, err := os.Stat(filepath.Join(b.RunDir, envFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("env file left after a failed start: %v", err)
	}
}
