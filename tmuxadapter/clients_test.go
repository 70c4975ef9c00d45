package tmuxadapter

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// A window named after an agent keeps that name, literally: '#' in the
// name is not a format (which could run "#(cmd)"), and the program in
// the pane does not rename it.
func TestWindowNameIsLiteralAndStays(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	name := "A1#(touch pwned)#{session_name}"
	// The pane's program tries to rename its window with an escape.
	if err := c.NewSession(ctx, SessionSpec{Name: "w1-A1", Window: name,
		Argv: []string{`printf '\033kother\033\\'; exec sleep 60`}}); err != nil {
		t.Fatal(err)
	}
	out, err := c.run(ctx, false, nil, "list-windows", "-t", "=w1-A1", "-F", "#{window_name}"+sep+"#{automatic-rename}")
	if err != nil {
		t.Fatal(err)
	}
	got, auto, _ := strings.Cut(strings.TrimSpace(out), sep)
	if got != name || auto != "0" {
		t.Fatalf("window name %q automatic-rename %q, want %q and 0", got, auto, name)
	}
	if _, err := os.Stat("pwned"); err == nil {
		os.Remove("pwned")
		t.Fatal("a #(…) in a window name ran a command")
	}
}

func TestPaneSessionNamesTheSession(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	if err := c.NewSession(ctx, SessionSpec{Name: "dashboard", Argv: []string{"sleep 60"}}); err != nil {
		t.Fatal(err)
	}
	out, err := c.run(ctx, false, nil, "display-message", "-p", "-t", "=dashboard:", "#{pane_id}")
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.PaneSession(ctx, strings.TrimSpace(out))
	if err != nil || s != "dashboard" {
		t.Fatalf("PaneSession = %q, %v; want dashboard", s, err)
	}
	if _, err := c.PaneSession(ctx, "dashboard; kill-server"); err == nil {
		t.Fatal("a pane id that is not %N was accepted")
	}
}

// RespawnPane swaps the pane's command while a client stays attached;
// DetachClient then detaches that client and leaves the session running.
func TestRespawnKeepsClientAndDetachLeavesSession(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	if err := c.NewSession(ctx, SessionSpec{Name: "dashboard", Window: "dashboard", Argv: []string{"sleep 60"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DetachClient(ctx, "dashboard"); !errors.Is(err, ErrNoClient) {
		t.Fatalf("detach with no client: %v, want ErrNoClient", err)
	}
	attach := exec.Command(c.AttachArgv("dashboard", false)[0], c.AttachArgv("dashboard", false)[1:]...)
	attach.Env = append(c.environ(), "TERM=screen")
	f, err := pty.StartWithSize(attach, &pty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	go func() { _, _ = io.Copy(io.Discard, f) }()
	exited := make(chan error, 1)
	go func() { exited <- attach.Wait() }()
	clients := func() string {
		out, _ := c.run(ctx, false, nil, "list-clients", "-t", "=dashboard", "-F", "#{client_name}")
		return strings.TrimSpace(out)
	}
	waitFor(t, "a client on dashboard", func() bool { return clients() != "" })

	if err := c.RespawnPane(ctx, SessionSpec{Name: "dashboard", Window: "dashboard", Argv: []string{"sleep", "61"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the respawned command", func() bool {
		out, _ := c.run(ctx, false, nil, "display-message", "-p", "-t", "=dashboard:", "#{pane_start_command}")
		return strings.Contains(out, "61")
	})
	if clients() == "" {
		t.Fatal("respawn dropped the attached client")
	}

	name, err := c.DetachClient(ctx, "dashboard")
	if err != nil || name == "" {
		t.Fatalf("DetachClient = %q, %v", name, err)
	}
	if err := <-exited; err != nil {
		t.Logf("attach exited: %v", err)
	}
	if ok, err := c.HasSession(ctx, "dashboard"); !ok || err != nil {
		t.Fatalf("session gone after detach: %v %v", ok, err)
	}
}

func TestActiveClientPicksLatestActivity(t *testing.T) {
	tests := map[string]string{
		"":                           "",
		"/dev/pts/1" + sep + "100\n": "/dev/pts/1",
		"/dev/pts/1" + sep + "100\n/dev/pts/2" + sep + "200\n": "/dev/pts/2",
		"/dev/pts/3" + sep + "300\n/dev/pts/2" + sep + "200\n": "/dev/pts/3",
		"garbage\n": "",
	}
	for in, want := range tests {
		if got := activeClient(in); got != want {
			t.Errorf("activeClient(%q) = %q, want %q", in, got, want)
		}
	}
}
