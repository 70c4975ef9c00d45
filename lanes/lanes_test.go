package lanes

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	l := New("/home/me/My Repo", "", "", "main")
	if l.Project != "my-repo" || l.StateDir != "/home/me/My Repo/.wave/lanes/main" {
		t.Fatalf("layout %+v", l)
	}
	s := l.Socket()
	if !strings.HasPrefix(s, "wave-my-repo-main-") || len(s) != len("wave-my-repo-main-")+8 {
		t.Fatalf("socket %q", s)
	}
	if other := New("/home/me/other/My Repo", "", "", "main").Socket(); other == s {
		t.Fatal("two repos with the same name share a socket")
	}
	for in, want := range map[string]string{"A1": "w3-A1", "a.b:c": "w3-a_b_c", "x'$(y)": "w3-x_y_"} {
		if got := SessionName(3, in); got != want {
			t.Errorf("SessionName(3, %q) = %q, want %q", in, got, want)
		}
	}
	if err := ValidateLane("Main"); err == nil {
		t.Error("upper-case lane accepted")
	}
	if err := ValidateLane("feature-x_2"); err != nil {
		t.Error(err)
	}
	if got := l.RunDir(3, "A1", 2); got != filepath.Join(l.StateDir, "waves/3/runs/A1-a2") {
		t.Errorf("run dir %s", got)
	}
}

// A lock held by another process is refused with its holder named; when
// that process dies the kernel frees it and no cleanup is needed.
func TestLockHeldByAnotherProcessThenFreedByItsDeath(t *testing.T) {
	if os.Getenv("LANES_LOCK_HOLDER") != "" {
		lk, err := AcquireLock(os.Getenv("LANES_LOCK_HOLDER"))
		if err != nil {
			os.Exit(3)
		}
		defer lk.Release()
		os.Stdout.WriteString("held\n")
		io.ReadAll(os.Stdin) // holds the lock until the parent kills us
		return
	}
	path := filepath.Join(t.TempDir(), "lock")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHeldByAnotherProcessThenFreedByItsDeath$")
	cmd.Env = append(os.Environ(), "LANES_LOCK_HOLDER="+path)
	out, _ := cmd.StdoutPipe()
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || string(buf) != "held\n" {
		t.Fatalf("holder did not take the lock: %q %v", buf, err)
	}
	_, err := AcquireLock(path)
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) || le.Holder.Pid != cmd.Process.Pid {
		t.Fatalf("second acquire: %v", err)
	}
	if !Held(path) {
		t.Fatal("Held = false while another process holds it")
	}
	cmd.Process.Kill()
	cmd.Wait()
	lk, err := AcquireLock(path)
	if err != nil {
		t.Fatalf("lock of a dead holder not free: %v", err)
	}
	if info, _ := ReadLockInfo(path); info.Pid != os.Getpid() {
		t.Fatalf("lock body names pid %d", info.Pid)
	}
	lk.Release()
	if Held(path) {
		t.Fatal("Held after release")
	}
}
