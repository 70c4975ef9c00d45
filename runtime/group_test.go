package runtime

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
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
