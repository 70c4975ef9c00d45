package human

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// watching reports whether process pid holds an inotify instance: the
// watch `feedback watch` waits on is in place.
func watching(pid int) bool {
	fds, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "fd", "*"))
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && l == "anon_inode:inotify" {
			return true
		}
	}
	return false
}

// startWatch starts `feedback watch` with env and waits until it watches
// the lane.
func startWatch(t *testing.T, r *e2etest.Repo, env []string) (*exec.Cmd, *bytes.Buffer, chan error) {
	t.Helper()
	cmd := r.Command(e2etest.Context(t), "feedback", "watch", "--timeout-seconds", "60")
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	e2etest.WaitFor(t, "feedback watch to watch the lane", 30*time.Second, func() bool { return watching(cmd.Process.Pid) })
	return cmd, &out, done
}

// endOfWatch waits for `feedback watch` to end and checks it printed the
// question.
func endOfWatch(t *testing.T, out *bytes.Buffer, done chan error, question string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil || !strings.Contains(out.String(), question) {
			t.Fatalf("feedback watch: %v, want exit 0 printing %q\n%s", err, question, out.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("feedback watch did not end")
	}
}

// `feedback watch` wakes for a question asked while it waits even when
// nothing else of the lane changes: a wave agent's question that blocks
// nothing.
func TestFeedbackWatchWakesForAQuestionThatBlocksNothing(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, e2etest.ImplAgent("A1"))
	_, out, done := startWatch(t, r, nil)
	if res := r.Run(e2etest.Context(t), "ask", "--wave", "0", "--agent", "A1", "--question", "Which port?"); res.Code != 0 {
		t.Fatalf("ask: %d %s", res.Code, res.Stderr)
	}
	endOfWatch(t, out, done, "Which port?")
}

// `feedback watch` wakes for a backlog worker's question: the run's log
// is not the wave state it used to wait on.
func TestFeedbackWatchWakesForABacklogQuestion(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Pick an API", "Files: a/**\n\nlocal-agent: result=needs-input question=\"Which API?\"")
	_, out, done := startWatch(t, r.Repo, r.Env())
	if res := r.RunEnv(context.Background(), "backlog", "run", "--issues", "1", "--no-dashboard"); res.Code != 43 {
		t.Fatalf("backlog run: exit %d, want 43 (a question)\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	endOfWatch(t, out, done, "Which API?")
}
