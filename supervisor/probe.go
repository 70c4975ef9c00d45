package supervisor

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// probe checks, before a salvage relaunch, that the executor can answer
// at all (the seed's one-token `claude -p "reply ok"` with a timeout,
// since a probe can hang rather than fail): backlog.probe when set, the
// claude probe when workers run claude, else nothing.
func (s *Supervisor) probe(ctx context.Context) (bool, string) {
	argv := s.o.Config.Backlog.Probe.Argv
	if len(argv) == 0 && s.workerExecutor() == executor.Claude {
		argv = []string{"claude", "-p", "reply ok", "--max-turns", "1"}
	}
	if len(argv) == 0 {
		return true, ""
	}
	timeout := time.Duration(s.o.Config.Backlog.Probe.TimeoutSeconds) * time.Second
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := command(ctx, argv, "")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return false, fmt.Sprintf("%s timed out after %s", argv[0], timeout)
		}
		return false, fmt.Sprintf("%s: %v: %s", argv[0], err, oneLine(tail(string(out), 200)))
	}
	return true, ""
}

func (s *Supervisor) workerExecutor() string {
	if id := s.workerConfig()["id"]; id != "" {
		return id
	}
	return s.o.Lane.Executors.Default
}

func replaceIssue(w string, n int) string { return strings.ReplaceAll(w, "{issue}", strconv.Itoa(n)) }

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

func processAlive(pid int) bool { return runtime.ProcAlive(pid, 0) }

// command is a user-configured argv (hook, verify, probe), run by the
// runtime in its own process group.
func command(ctx context.Context, argv []string, dir string) *exec.Cmd {
	return runtime.GroupCommand(ctx, argv, dir)
}
