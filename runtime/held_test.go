package runtime

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// heldCmd is argv in a session of its own, as the supervisor starts the
// repository's code.
func heldCmd(argv ...string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}

// exitCode is how cmd's Wait ended.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// A process whose starter dies (or gives up) before releasing it has run
// nothing of its program: there is no moment in which it runs without
// its identity recorded.
func TestAHeldProcessNobodyReleasedRunsNothing(t *testing.T) {
	t.Parallel()
	mark := filepath.Join(t.TempDir(), "ran")
	cmd := heldCmd("sh", "-c", `echo $$ > "$0"`, mark)
	h, err := StartHeld(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if id := h.ID(); !ProcAlive(id.Pid, id.Start) || id.Start == 0 {
		t.Fatalf("held process %+v is not alive as identified", id)
	}
	h.Abandon()
	if code := exitCode(t, cmd.Wait()); code != heldCode {
		t.Fatalf("an abandoned held process exited %d, want %d", code, heldCode)
	}
	if _, err := os.Stat(mark); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the program ran though never released (%v)", err)
	}
}

// Released, the held process becomes its program in place: the identity
// recorded before the release is the program's own, in its own session,
// and its exit code and environment are the program's.
func TestAReleasedProcessIsTheOneItsIdentityNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	cmd := heldCmd("sh", "-c", `echo "$$ $(cut -d' ' -f6 /proc/$$/stat) $HELD_ENV $PWD" > "$0"; exit 7`, mark)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "HELD_ENV=kept")
	h, err := StartHeld(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd.Wait()); code != 7 {
		t.Fatalf("exit %d, want the program's 7", code)
	}
	b, err := os.ReadFile(mark)
	if err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(h.ID().Pid)
	if got, want := strings.Fields(string(b)), []string{pid, pid, "kept", dir}; !slices.Equal(got, want) {
		t.Fatalf("the program saw pid, session, env, cwd %v; want %v", got, want)
	}
}

// What a process left running after it died — its own group and a group
// one of them made in its session, ignoring SIGTERM — is ended, and the
// id it was recorded with is reported found.
func TestEndSessionsEndsEveryGroupOfAnOrphanedSession(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	own, inGroup := filepath.Join(dir, "own"), filepath.Join(dir, "group")
	cmd := heldCmd("sh", "-c", `"$0" fake-agent spawn "$1" pgid && "$0" fake-agent spawn "$2" group && exec sleep 600`, self, own, inGroup)
	h, err := StartHeld(cmd)
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	t.Cleanup(func() { syscall.Kill(-h.ID().Pid, syscall.SIGKILL) })
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	go func() { waited <- cmd.Wait() }()
	waitFor(t, "both guards", func() bool {
		_, e1 := os.Stat(own)
		_, e2 := os.Stat(inGroup)
		return e1 == nil && e2 == nil
	})
	p1, s1 := guardPid(t, own)
	p2, s2 := guardPid(t, inGroup)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	found, err := EndSessions(ctx, []ProcID{h.ID(), {Pid: 1 << 22, Start: 5}}, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(found, []ProcID{h.ID()}) {
		t.Fatalf("found %v, want only %v", found, h.ID())
	}
	<-waited
	for _, p := range []ProcID{h.ID(), {p1, s1}, {p2, s2}} {
		if ProcAlive(p.Pid, p.Start) {
			t.Errorf("process %d of the session is still alive", p.Pid)
		}
	}
}

// A pid the kernel gave to another process since it was recorded is
// never signalled, nor its session.
func TestEndSessionsNeverSignalsAReusedPid(t *testing.T) {
	t.Parallel()
	cmd := heldCmd("sleep", "600")
	h, err := StartHeld(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-h.ID().Pid, syscall.SIGKILL); cmd.Wait() })
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	id := h.ID()
	recorded := ProcID{Pid: id.Pid, Start: id.Start - 1} // an earlier process of that pid
	found, err := EndSessions(context.Background(), []ProcID{recorded}, 100*time.Millisecond)
	if err != nil || len(found) != 0 {
		t.Fatalf("found %v, %v; want nothing", found, err)
	}
	if !ProcAlive(id.Pid, id.Start) {
		t.Fatal("the process now holding the recorded pid was signalled")
	}
}

func TestLiveSessions(t *testing.T) {
	t.Parallel()
	p := func(pid, pgrp, sid int, start uint64, zombie bool) proc {
		return proc{pid: pid, procStat: procStat{pgrp: pgrp, sid: sid, start: start, zombie: zombie}}
	}
	id := ProcID{Pid: 100, Start: 50}
	for _, tc := range []struct {
		name  string
		procs []proc
		want  []int
	}{
		{"leader and its group", []proc{p(100, 100, 100, 50, false), p(101, 100, 100, 51, false)}, []int{100}},
		{"leader gone, members in two groups", []proc{p(101, 100, 100, 51, false), p(102, 102, 100, 52, false)}, []int{100, 102}},
		{"only zombies left", []proc{p(100, 100, 100, 50, true), p(101, 100, 100, 51, true)}, nil},
		{"pid reused by another process", []proc{p(100, 100, 100, 90, false), p(101, 100, 100, 91, false)}, nil},
		{"another session", []proc{p(7, 7, 7, 60, false)}, nil},
		{"older than the leader", []proc{p(101, 100, 100, 49, false)}, nil},
	} {
		got := liveSessions([]ProcID{id}, tc.procs)[id]
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: groups %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := liveSessions([]ProcID{{Pid: 100}}, []proc{p(100, 100, 100, 50, false)}); len(got) != 0 {
		t.Errorf("an id without a start time matched %v", got)
	}
}
