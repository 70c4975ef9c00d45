package runtime

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// guardPid reads the pid a `guard` child wrote and returns it with its
// start time; the process is killed when the test ends.
func guardPid(t *testing.T, file string) (int, uint64) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	start, _, _ := ProcStartTime(pid)
	t.Cleanup(func() {
		if ProcAlive(pid, start) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return pid, start
}

// An agent that exits 0 while a child it left behind still holds the pty
// open must still be recorded as completed, with the main process's code;
// a child in the agent's group is killed, even if it ignores SIGHUP.
func TestAgentExitWithChildHoldingPty(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"group", "setsid"} {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t)
			root := t.TempDir()
			pidFile := filepath.Join(root, "guard.pid")
			p := h.payload(t, root, "A1", "spawn", pidFile, mode)
			h.start(t, p)
			waitFor(t, "the guard child", func() bool { _, err := os.Stat(pidFile); return err == nil })
			pid, start := guardPid(t, pidFile)
			obs := h.waitDone(t, p.RunDir)
			r := obs.Record
			if r.TerminalDisposition != Completed || r.ExitCode == nil || *r.ExitCode != 0 {
				t.Fatalf("record %+v", r)
			}
			if st, err := ReadStatus(p.StatusPath); err != nil || st.Code != 0 {
				t.Fatalf("status %+v, %v", st, err)
			}
			log, _ := os.ReadFile(p.LogPath)
			if !strings.Contains(string(log), "spawned") {
				t.Fatalf("log:\n%s", log)
			}
			if mode == "group" && ProcAlive(pid, start) {
				t.Fatal("child in the agent's group survived the agent")
			}
		})
	}
}

// startGroup starts `fake-agent spawn FILE group` as the leader of a new
// process group, waits for the leader to exit, and returns the record a
// dead runner would have left and the guard still running in the group.
func startGroup(t *testing.T) (Record, int, uint64) {
	t.Helper()
	self, _ := os.Executable()
	pidFile := filepath.Join(t.TempDir(), "guard.pid")
	cmd := exec.Command(self, "fake-agent", "spawn", pidFile, "group")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	leader := cmd.Process.Pid
	start, _, _ := ProcStartTime(leader)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	pid, gstart := guardPid(t, pidFile)
	rec := Record{RunID: "r", ExecutorPid: leader, ExecutorStartTime: start, Pgid: leader}
	return rec, pid, gstart
}

func TestTerminateKillsGroupAfterLeaderExited(t *testing.T) {
	t.Parallel()
	rec, pid, start := startGroup(t)
	if !ProcAlive(pid, start) {
		t.Fatal("guard not running")
	}
	if err := Terminate(context.Background(), rec, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the guard to die", func() bool { return !ProcAlive(pid, start) })
}

// A group member older than the recorded agent cannot be the agent's: the
// group id was recycled, and Terminate must leave it alone.
func TestTerminateSparesOlderGroupMember(t *testing.T) {
	t.Parallel()
	rec, pid, start := startGroup(t)
	rec.ExecutorStartTime = start + 1
	if err := Terminate(context.Background(), rec, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !ProcAlive(pid, start) {
		t.Fatal("older process in a recycled group was killed")
	}
}

// A group is alive while a member runs and dead once its last member is
// reaped, whether or not the /proc scan is needed to tell.
func TestAGroupIsAliveUntilItsLastMemberIsReaped(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	start, _, err := ProcStartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	if !groupAlive(pid, start) {
		t.Fatal("a running group is not alive")
	}
	if groupAlive(pid, start+1_000_000) {
		t.Fatal("a group whose members predate the recorded start is alive")
	}
	cmd.Process.Kill()
	waitFor(t, "the killed leader to become a zombie", func() bool { _, z, _ := ProcStartTime(pid); return z })
	if groupAlive(pid, start) {
		t.Fatal("a group of one unreaped zombie is alive")
	}
	cmd.Wait()
	if groupAlive(pid, start) {
		t.Fatal("a reaped group is alive")
	}
}
