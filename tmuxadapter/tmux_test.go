package tmuxadapter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestInstantExitKeepsDeadPaneWithStatus(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	// The pane exits before any later tmux call could set remain-on-exit.
	if err := c.NewSession(ctx, SessionSpec{Name: "fast", Argv: []string{"exit 7"}}); err != nil {
		t.Fatal(err)
	}
	// The pane stays (remain-on-exit was set in the same invocation). tmux
	// 3.3a sometimes never learns the status of a child that exits this
	// fast (measured: 4 of 40 panes show pane_dead=1 with no status), which
	// is why liveness treats a dead pane without status as unknown.
	var p Pane
	waitFor(t, "dead pane", func() bool {
		var err error
		p, err = c.PaneInfo(ctx, "fast")
		if err != nil {
			t.Fatalf("pane of an instantly exiting command is gone: %v", err)
		}
		return p.Dead
	})
	if p.DeadStatus != nil && *p.DeadStatus != 7 {
		t.Fatalf("pane_dead_status = %v, want 7 when known", *p.DeadStatus)
	}
}

func TestSignalDeathReportsSignal(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	if err := c.NewSession(ctx, SessionSpec{Name: "sig", Argv: []string{"kill -KILL $$"}}); err != nil {
		t.Fatal(err)
	}
	var p Pane
	// pane_dead turns on at EOF, before tmux reaps the child and learns how
	// it died — and tmux 3.3a sometimes never learns it (see
	// TestInstantExitKeepsDeadPaneWithStatus), so "unknown" is allowed;
	// a known outcome must be the signal.
	waitFor(t, "dead pane", func() bool {
		p, _ = c.PaneInfo(ctx, "sig")
		return p.Dead
	})
	deadline := time.Now().Add(2 * time.Second)
	for p.DeadStatus == nil && p.DeadSignal == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		p, _ = c.PaneInfo(ctx, "sig")
	}
	if p.DeadStatus != nil || p.DeadSignal != 0 && p.DeadSignal != 9 {
		t.Fatalf("pane = %+v, want no status and signal 9 (or nothing known yet)", p)
	}
}

func TestBatchCreateTagsAndLists(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	var specs []SessionSpec
	for i := range 20 {
		specs = append(specs, SessionSpec{
			Name: fmt.Sprintf("w1-A%d", i), Argv: []string{"sleep 60"},
			Options: map[string]string{"@wave_run": fmt.Sprintf("w1-A%d-a1", i), "@wave_lane": "main;", "@wave_agent": fmt.Sprintf("A%d", i)},
		})
	}
	if err := c.NewSessions(ctx, specs); err != nil {
		t.Fatal(err)
	}
	ss, err := c.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 20 {
		t.Fatalf("got %d sessions, want 20", len(ss))
	}
	byName := map[string]Session{}
	for _, s := range ss {
		byName[s.Name] = s
	}
	got := byName["w1-A3"]
	if got.Run != "w1-A3-a1" || got.Lane != "main;" || got.Agent != "A3" || got.Created == 0 {
		t.Fatalf("w1-A3 = %+v", got)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	if ss, err := c.ListSessions(ctx); err != nil || len(ss) != 0 {
		t.Fatalf("no server: ListSessions = %v, %v; want empty, nil", ss, err)
	}
	if ok, err := c.HasSession(ctx, "x"); ok || err != nil {
		t.Fatalf("no server: HasSession = %v, %v", ok, err)
	}
	if _, err := c.PaneInfo(ctx, "x"); !errors.Is(err, ErrNoServer) {
		t.Fatalf("no server: PaneInfo err = %v, want ErrNoServer", err)
	}
	if err := c.NewSession(ctx, SessionSpec{Name: "a", Argv: []string{"sleep 60"}}); err != nil {
		t.Fatal(err)
	}
	err := c.NewSession(ctx, SessionSpec{Name: "a", Argv: []string{"sleep 60"}})
	if !errors.Is(err, ErrSessionExists) {
		t.Fatalf("duplicate: err = %v, want ErrSessionExists", err)
	}
	var te *Error
	if !errors.As(err, &te) || te.Stderr == "" {
		t.Fatalf("duplicate: err %v is not a *Error with stderr", err)
	}
	if _, err := c.Capture(ctx, "nope", 10); !errors.Is(err, ErrSessionNotFound) {
		t.Fatalf("missing: Capture err = %v, want ErrSessionNotFound", err)
	}
	// Exact match: "a" must not be found as a prefix of another name.
	if ok, _ := c.HasSession(ctx, "ab"); ok {
		t.Fatal("HasSession(ab) true with only session a")
	}
	if err := c.KillSession(ctx, "nope"); err != nil {
		t.Fatalf("KillSession of a missing session = %v, want nil", err)
	}
	if err := New("x", WithBinary("/nonexistent/tmux")).KillServer(ctx); !errors.Is(err, ErrBinaryMissing) {
		t.Fatalf("missing binary err = %v", err)
	}
}

func TestArgvIsNotClassified(t *testing.T) {
	// A prompt-like argument that mentions "no server running" must not
	// change the outcome of a successful call.
	c := newClient(t)
	ctx := context.Background()
	spec := SessionSpec{Name: "p", Argv: []string{"echo 'no server running; duplicate session'; sleep 60"}}
	if err := c.NewSession(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.HasSession(ctx, "p"); !ok || err != nil {
		t.Fatalf("HasSession = %v, %v", ok, err)
	}
}

func TestEnvCwdAndHostileWordsArriveLiterally(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "cwd #{session_name}")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	val := `a'b"c $(touch PWNED) ` + "`x`;"
	// Several words: tmux execs them directly, no shell.
	argv := []string{"sh", "-c", `printf '%s\n' "$PWD" "$V" "$1" > "$0"`, out, "last;"}
	err := c.NewSession(ctx, SessionSpec{Name: "env", Argv: argv, Cwd: dir, Env: map[string]string{"V": val}})
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	waitFor(t, "output file", func() bool {
		got, _ = os.ReadFile(out)
		return strings.Count(string(got), "\n") == 3
	})
	want := dir + "\n" + val + "\nlast;\n"
	if string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestSendKeysAndCapture(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	if err := c.NewSession(ctx, SessionSpec{Name: "cat", Argv: []string{"cat"}, Width: 100, Height: 20}); err != nil {
		t.Fatal(err)
	}
	if err := c.SendLiteral(ctx, "cat", "hello Enter;"); err != nil {
		t.Fatal(err)
	}
	if err := c.SendKeys(ctx, "cat", "Enter"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "echo in pane", func() bool {
		s, err := c.Capture(ctx, "cat", 50)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(s, "hello Enter;") == 2 // tty echo + cat's output
	})
}

func TestRejectsBadNames(t *testing.T) {
	c := New("unused")
	for _, n := range []string{"", "a b", "a:b", "a.b", "=a", "$(x)"} {
		if err := c.NewSession(context.Background(), SessionSpec{Name: n, Argv: []string{"true"}}); err == nil {
			t.Errorf("NewSession(%q) accepted", n)
		}
	}
}

func TestAttachArgv(t *testing.T) {
	c := New("sock")
	if got := strings.Join(c.AttachArgv("w1-A", false), " "); got != "tmux -u -L sock attach-session -t =w1-A" {
		t.Errorf("outside: %s", got)
	}
	if got := strings.Join(c.AttachArgv("w1-A", true), " "); got != "tmux -u -L sock switch-client -t =w1-A" {
		t.Errorf("inside: %s", got)
	}
}

func TestVersion(t *testing.T) {
	v, err := newClient(t).Version(context.Background())
	if err != nil || !strings.HasPrefix(v, "tmux ") {
		t.Fatalf("Version = %q, %v", v, err)
	}
}

// The user's tmux.conf must not apply to our servers: with
// destroy-unattached on, every detached session would be destroyed.
func TestUserConfIsNotRead(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".tmux.conf"), []byte("set -g destroy-unattached on\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, WithEnv("HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config")))
	ctx := context.Background()
	if err := c.NewSession(ctx, SessionSpec{Name: "kept", Argv: []string{"sleep", "600"}}); err != nil {
		t.Fatal(err)
	}
	// A second session: a server that read the conf has destroyed the
	// first by the time it handles this command.
	if err := c.NewSession(ctx, SessionSpec{Name: "other", Argv: []string{"sleep", "600"}}); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.HasSession(ctx, "kept"); !ok || err != nil {
		t.Fatalf("detached session destroyed: %v %v", ok, err)
	}
}

// A mutation that times out after tmux did it must not be retried: the
// retry of a new-session would fail as a duplicate and hide the timeout.
func TestMutationTimeoutIsNotRetried(t *testing.T) {
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not installed")
	}
	// A tmux that, when it succeeds, hangs past the client's timeout.
	slow := filepath.Join(t.TempDir(), "slow-tmux")
	script := "#!/bin/sh\n'" + strings.ReplaceAll(real, "'", `'\''`) + "' \"$@\" || exit\nexec sleep 60\n"
	if err := os.WriteFile(slow, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := newClient(t)
	sc := New(c.Socket(), WithBinary(slow), WithTimeout(2*time.Second))
	ctx := context.Background()
	err = sc.NewSession(ctx, SessionSpec{Name: "slow", Argv: []string{"sleep", "600"}})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if ok, err := c.HasSession(ctx, "slow"); !ok || err != nil {
		t.Fatalf("session made by the timed-out call: %v %v", ok, err)
	}
}

func TestLiveAndKillServers(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	if err := c.NewSession(ctx, SessionSpec{Name: "s", Argv: []string{"sleep 60"}}); err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("TMUX_TMPDIR")
	if live := LiveServers(ctx, dir); !slices.Contains(live, c.Socket()) {
		t.Fatalf("live %v lacks %s", live, c.Socket())
	}
	if killed := KillServers(ctx, dir); !slices.Contains(killed, c.Socket()) {
		t.Fatalf("killed %v lacks %s", killed, c.Socket())
	}
	if live := LiveServers(ctx, dir); slices.Contains(live, c.Socket()) {
		t.Fatalf("%s still live after KillServers", c.Socket())
	}
}

// A session that never existed, on a live server, is gone: a run recorded
// as launching whose session was never created (its starter killed in
// between) must be classified, not wait forever.
func TestPaneInfoOfMissingSessionIsGone(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	if err := c.NewSession(ctx, SessionSpec{Name: "other", Argv: []string{"sleep 30"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PaneInfo(ctx, "never-created"); !IsGone(err) {
		t.Fatalf("PaneInfo of a missing session: %v, want a gone error", err)
	}
}

// A value left with SetSessionOption (a runner's exit code) is read back
// by PaneInfo, also once the pane is dead.
func TestExitOptionRoundTrip(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	if err := c.NewSession(ctx, SessionSpec{Name: "opt", Argv: []string{"sleep 30"}}); err != nil {
		t.Fatal(err)
	}
	if p, err := c.PaneInfo(ctx, "opt"); err != nil || p.ExitOption != nil {
		t.Fatalf("before: %+v %v", p, err)
	}
	if err := c.SetSessionOption(ctx, "opt", ExitOptionName, "3"); err != nil {
		t.Fatal(err)
	}
	if p, err := c.PaneInfo(ctx, "opt"); err != nil || p.ExitOption == nil || *p.ExitOption != 3 {
		t.Fatalf("after: %+v %v", p, err)
	}
	if err := c.SetSessionOption(ctx, "opt", "status", "off"); err == nil {
		t.Fatal("a tmux option (not a user option) was accepted")
	}
}

// Killing a server's last session makes the server exit; a new session
// started right then must not fail because it reached the exiting server
// (a worker relaunched in place of its finished run does exactly this).
func TestNewSessionRightAfterTheLastSessionClosed(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	for i := range 40 {
		if err := c.NewSession(ctx, SessionSpec{Name: "only", Argv: []string{"sleep 30"}}); err != nil {
			t.Fatalf("round %d: start: %v", i, err)
		}
		if err := c.KillSession(ctx, "only"); err != nil && !IsGone(err) {
			t.Fatalf("round %d: kill: %v", i, err)
		}
	}
	_ = c.KillSession(ctx, "only")
}

func TestKillSessionsKillsTheLiveOnesNamedAndLeavesTheRest(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	var specs []SessionSpec
	for i := range 6 {
		specs = append(specs, SessionSpec{Name: fmt.Sprintf("k%d", i), Argv: []string{"sleep 60"}})
	}
	if err := c.NewSessions(ctx, specs); err != nil {
		t.Fatal(err)
	}
	// k9 never existed: named, it must not stop the batch.
	if err := c.KillSessions(ctx, []string{"k0", "k9", "k2", "k4", "k4"}); err != nil {
		t.Fatal(err)
	}
	ss, err := c.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, s := range ss {
		left = append(left, s.Name)
	}
	if strings.Join(left, ",") != "k1,k3,k5" {
		t.Fatalf("left %v, want k1,k3,k5", left)
	}
	if err := c.KillSessions(ctx, []string{"k1", "k3", "k5"}); err != nil {
		t.Fatal(err)
	}
	if err := c.KillSessions(ctx, []string{"k1"}); err != nil { // no server left
		t.Fatalf("no server: %v", err)
	}
}

// A kill decided on a listing reaches only the session listed: once that
// one is gone and another is made under its name (an agent's next
// attempt) — on the same server or on a new one, which numbers its
// sessions from $0 again — killing the listed one leaves the new one.
func TestAKillOfAListedSessionNeverReachesOneMadeUnderItsNameSince(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	start := func(name, run string) {
		t.Helper()
		if err := c.NewSession(ctx, SessionSpec{Name: name, Argv: []string{"sleep 60"}, Options: map[string]string{"@wave_run": run}}); err != nil {
			t.Fatal(err)
		}
	}
	listed := func(run string) Session {
		t.Helper()
		ss, err := c.ListSessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			if s.Run == run {
				if s.ID == "" || s.Server <= 0 {
					t.Fatalf("listed %+v without its id and server", s)
				}
				return s
			}
		}
		t.Fatalf("no session of run %s in %+v", run, ss)
		return Session{}
	}
	// The same server: another session keeps it alive.
	start("dashboard", "")
	start("w0-A1", "a1")
	a1 := listed("a1")
	if err := c.KillSession(ctx, "w0-A1"); err != nil {
		t.Fatal(err)
	}
	start("w0-A1", "a2")
	if err := c.KillListed(ctx, a1); err != nil {
		t.Fatal(err)
	}
	listed("a2")
	// A new server: the kill of its last session ended the old one, and
	// the new one numbers its sessions from $0 again.
	if err := c.KillServer(ctx); err != nil {
		t.Fatal(err)
	}
	start("w0-A1", "b1")
	b1 := listed("b1")
	if err := c.KillSession(ctx, "w0-A1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the emptied server to exit", func() bool { return syscall.Kill(b1.Server, 0) != nil })
	start("w0-A1", "b2")
	if b2 := listed("b2"); b2.ID != b1.ID || b2.Server == b1.Server {
		t.Fatalf("the new server's session is %s on %d, want %s again on another server than %d", b2.ID, b2.Server, b1.ID, b1.Server)
	}
	if err := c.KillListed(ctx, b1); err != nil {
		t.Fatal(err)
	}
	if err := c.KillListed(ctx, listed("b2")); err != nil {
		t.Fatal(err)
	}
	if ss, _ := c.ListSessions(ctx); len(ss) != 0 {
		t.Fatalf("sessions %+v left after killing the listed one", ss)
	}
	for _, bad := range []Session{{ID: "w0-A1", Server: 1}, {ID: "$", Server: 1}, {ID: "$1;kill-server", Server: 1}, {ID: "$1"}} {
		if err := c.KillListed(ctx, bad); err == nil {
			t.Errorf("KillListed(%+v) accepted", bad)
		}
	}
}
