package e2etest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// Lives starts `backlog run` lives of one repo, each with its pid where
// the origin hook reads it.
type Lives struct {
	R    *BacklogRepo
	Args []string
	Env  []string
	Outs []*SyncBuf
}

// SyncBuf is a buffer a process writes while the test reads it.
type SyncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *SyncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Start starts one life, its pid written to pidFile.
func (l *Lives) Start(ctx context.Context, pidFile string) *exec.Cmd {
	l.R.T.Helper()
	cmd := l.R.Command(ctx, l.Args...)
	cmd.Env = append(append(cmd.Env, l.R.Env()...), l.Env...)
	out := &SyncBuf{}
	cmd.Stdout, cmd.Stderr = out, out
	l.Outs = append(l.Outs, out)
	if err := cmd.Start(); err != nil {
		l.R.T.Fatal(err)
	}
	if pidFile != "" {
		if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
			l.R.T.Fatal(err)
		}
	}
	return cmd
}

// Dump logs every life's output.
func (l *Lives) Dump(t *testing.T) {
	if t.Failed() {
		for i, o := range l.Outs {
			t.Logf("life %d:\n%s", i, o.String())
		}
	}
}

// BacklogEvents reads the repo's one backlog run and its events.
func BacklogEvents(t *testing.T, r *BacklogRepo) (*backlog.Run, []backlog.Event) {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*"))
	if len(dirs) != 1 {
		t.Fatalf("%d backlog runs, want exactly 1: %v", len(dirs), dirs)
	}
	evs, _, err := jsonfile.ReadLines[backlog.Event](filepath.Join(dirs[0], "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return backlog.Reduce(evs), evs
}

// StatusJSON is what `backlog status --json` prints, as the tests read it.
type StatusJSON struct {
	State  string             `json:"state"`
	Tally  backlog.Tally      `json:"tally"`
	Train  *backlog.TrainView `json:"train"`
	Issues []struct {
		Number       int    `json:"number"`
		State        string `json:"state"`
		CommitsAhead *int   `json:"commitsAhead"`
	} `json:"issues"`
}

// Status runs `backlog status --json`.
func (r *BacklogRepo) Status(t *testing.T) StatusJSON {
	t.Helper()
	v, err := r.TryStatus()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TryStatus is Status returning its error.
func (r *BacklogRepo) TryStatus() (StatusJSON, error) {
	res := r.RunEnv(context.Background(), "backlog", "status", "--json")
	var v StatusJSON
	if res.Code != 0 {
		return v, fmt.Errorf("status: exit %d: %s", res.Code, res.Stderr)
	}
	if err := json.Unmarshal([]byte(res.Stdout), &v); err != nil {
		return v, fmt.Errorf("status: %w: %s", err, res.Stdout)
	}
	return v, nil
}

// RunLog reads the one backlog run's events ("" before it exists).
func (r *BacklogRepo) RunLog() (string, []backlog.Event) {
	dirs := r.BacklogRuns()
	if len(dirs) != 1 {
		return "", nil
	}
	evs, _, _ := jsonfile.ReadLines[backlog.Event](filepath.Join(dirs[0], "events.jsonl"))
	return dirs[0], evs
}

// HasEvent reports whether the run logged an event that matches.
func (r *BacklogRepo) HasEvent(match func(backlog.Event) bool) bool {
	_, evs := r.RunLog()
	for _, ev := range evs {
		if match(ev) {
			return true
		}
	}
	return false
}

// Merged matches the event of issue n's merge.
func Merged(n int) func(backlog.Event) bool {
	return func(ev backlog.Event) bool { return ev.Kind == backlog.EvMerged && ev.Issue == n }
}

// Life is one supervisor process: its end is seen while the test waits,
// so a supervisor that exits where it should wait fails the test at once.
type Life struct {
	cmd  *exec.Cmd
	Done chan struct{}
	Err  error
}

// StartLife starts cmd as a Life.
func StartLife(cmd *exec.Cmd) *Life {
	l := &Life{cmd: cmd, Done: make(chan struct{})}
	go func() { l.Err = cmd.Wait(); close(l.Done) }()
	return l
}

// WaitFor waits for cond while the supervisor lives.
func (l *Life) WaitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		select {
		case <-l.Done:
			t.Fatalf("the supervisor exited (%v) before %s", l.Err, what)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, with a deadline
	}
}

// Killed reports whether the life, ended, was killed with SIGKILL.
func (l *Life) Killed() bool {
	ws, ok := l.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// Kill kills the life with SIGKILL and waits for its end.
func (l *Life) Kill(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(l.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-l.Done
}
