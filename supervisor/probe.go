package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// probe checks, before a salvage relaunch, that the executor can answer
// at all (a one-token `claude -p "reply ok"` with a timeout,
// since a probe can hang rather than fail): backlog.probe when set, the
// claude probe when workers run claude, else nothing. It runs as a
// worker would: the worker's resolved command and model, its configured
// env (executors.claude.env, env.NAME, IS_SANDBOX) and its scrub list, so
// a shell's ANTHROPIC_BASE_URL or the GitHub token never reaches it.
// Workers in pods get no default probe (their executor is in the image).
func (s *Supervisor) probe(ctx context.Context) (bool, string) {
	spec, err := s.probeSpec()
	if err != nil {
		return false, err.Error()
	}
	if len(spec.Argv) == 0 {
		return true, ""
	}
	name := filepath.Base(spec.Argv[0])
	timeout := time.Duration(s.o.Config.Backlog.Probe.TimeoutSeconds) * time.Second
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := command(ctx, spec.Argv, "")
	cmd.Env = spec.Environ(os.Environ())
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return false, fmt.Sprintf("%s timed out after %s", name, timeout)
		}
		return false, fmt.Sprintf("%s: %v: %s", name, err, strings.TrimSpace(oneLine(tail(string(out), 200))))
	}
	return true, ""
}

// probeSpec resolves the probe by the worker's own resolution; no argv
// when there is none.
func (s *Supervisor) probeSpec() (executor.Spec, error) {
	res, err := ResolveWorker(s.o.Config, s.o.Lane, s.o.Executor)
	if err != nil {
		return executor.Spec{}, err
	}
	argv := s.o.Config.Backlog.Probe.Argv
	if len(argv) == 0 && s.pods() {
		// The workers' executor is the image's, in a pod: this machine
		// need not have it. Only an explicit backlog.probe runs here.
		return executor.Spec{}, nil
	}
	if len(argv) == 0 {
		argv = executor.ProbeArgv(res)
	}
	return executor.ProbeSpec(res, s.o.Lane, argv, s.o.Config.GitHub.TokenEnv), nil
}

// ProbeFile, in a run directory, holds the salvages waiting for a
// passing probe; it exists only while one waits.
const ProbeFile = "probe.json"

// ProbeWait is one salvage relaunch held by a failing probe: `backlog
// status` shows it as "waiting: probe failed 3×: <reason>".
type ProbeWait = backlog.ProbeWait

// noteProbe records w's probe state for status: failures so far (0
// removes it) and the last reason.
func (s *Supervisor) noteProbe(w *worker, failures int, reason string, next time.Time) {
	n := w.n
	path := filepath.Join(s.log.dir, ProbeFile)
	waits := readProbes(s.log.dir)
	waits = slices.DeleteFunc(waits, func(w ProbeWait) bool { return w.Issue == n })
	if failures > 0 {
		waits = append(waits, ProbeWait{Issue: n, Failures: failures, MaxTries: maxProbeTries, Reason: reason, NextAt: next})
		slices.SortFunc(waits, func(a, b ProbeWait) int { return a.Issue - b.Issue })
	}
	if len(waits) == 0 {
		_ = os.Remove(path)
		return
	}
	if err := jsonfile.Write(path, waits); err != nil {
		s.printf("warning: recording the probe state: %v", err)
	}
}

// readProbes reads a run's probe waits; a missing or corrupt file is none
// (it is only ever a display).
func readProbes(dir string) []ProbeWait {
	b, err := os.ReadFile(filepath.Join(dir, ProbeFile))
	if err != nil {
		return nil
	}
	var waits []ProbeWait
	if json.Unmarshal(b, &waits) != nil {
		return nil
	}
	return waits
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
