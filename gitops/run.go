package gitops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

// Error is a git invocation that failed. Args never include stdin (commit
// messages travel there, so issue text never lands in an error or a log).
type Error struct {
	Dir      string
	Args     []string
	ExitCode int    // -1 when git did not exit on its own (not found, killed)
	Stderr   string // trimmed, one line, control characters escaped
	Err      error  // the exec error, or the context's error on timeout/cancel
	// Transient is the cause in words when the failure may pass by itself
	// (TransientCause), "" when it is permanent.
	Transient string
}

func (e *Error) Error() string {
	cmd := strings.Join(e.Args, " ")
	if len(cmd) > 200 {
		cmd = cmd[:200] + "…"
	}
	msg := e.Stderr
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s (in %s): %s", sanitize(cmd), e.Dir, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// exitCode is the exit status of a failed git call, or -1.
func exitCode(err error) int {
	var ge *Error
	if errors.As(err, &ge) {
		return ge.ExitCode
	}
	return -1
}

// call is one git invocation.
type call struct {
	dir   string   // -C dir (repo-less commands use the temp dir)
	args  []string // after the global options
	stdin string
	env   []string // extra KEY=VALUE for this call only
	// net: the call talks to the remote (a fetch, push or ls-remote of
	// it), so it gets the credentials the runner holds back from every
	// other call.
	net bool
	// locked: the caller holds wtMu for the call (a batch of worktree
	// changes), so do does not take it.
	locked bool
}

// runner runs git with a fixed environment, the supervisor's own
// configuration and a timeout (harden.go says what is fixed and why).
type runner struct {
	env []string // the process environment without secrets, plus ours
	// secrets are the credential variables (KEY=VALUE) held back from
	// env, handed only to calls that reach the remote (call.net).
	secrets []string
	// config is given to every call as -c key=value: it wins over every
	// file git reads.
	config  []string
	timeout time.Duration
}

// dropEnv reports variables that would point git at another repository,
// index, object store or configuration than the ones we name (set when
// we run under a git hook or a wrapper), or change the language of the
// output we parse.
func dropEnv(k string) bool {
	switch k {
	case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
		"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
		"GIT_PREFIX", "GIT_QUARANTINE_PATH", "LANG", "LANGUAGE",
		"GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL",
		"GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_EXTERNAL_DIFF":
		return true
	}
	return strings.HasPrefix(k, "LC_") || strings.HasPrefix(k, "GIT_CONFIG_KEY_") || strings.HasPrefix(k, "GIT_CONFIG_VALUE_")
}

// cleanEnv is the process environment minus dropEnv's variables and the
// secrets (returned apart), with a C locale and terminal prompts off,
// then extra (later entries win).
func cleanEnv(extra, secretNames []string) (env, secrets []string) {
	env = make([]string, 0, len(os.Environ())+len(extra)+3)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case dropEnv(k):
		case slices.Contains(secretNames, k):
			secrets = append(secrets, kv)
		default:
			env = append(env, kv)
		}
	}
	env = append(env, "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
	return append(env, extra...), secrets
}

// run executes git and returns its stdout. A non-zero exit is an *Error
// carrying the exit code and trimmed stderr.
func (rn runner) run(ctx context.Context, c call) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, rn.timeout)
	defer cancel()
	argv := make([]string, 0, 2*len(rn.config)+2+len(c.args))
	for _, kv := range rn.config {
		argv = append(argv, "-c", kv)
	}
	if c.dir != "" {
		argv = append(argv, "-C", c.dir)
	}
	argv = append(argv, c.args...)
	cmd := exec.CommandContext(cctx, "git", argv...)
	env := append(make([]string, 0, len(rn.env)+len(rn.secrets)+len(c.env)), rn.env...)
	if c.net {
		env = append(env, rn.secrets...)
	}
	cmd.Env = append(env, c.env...)
	// Cut short (the caller gone, or our timeout), git is asked to stop:
	// on TERM it removes the lock files it holds, where a KILL leaves a
	// ref's or the index's .lock for every later git to fail on. It is
	// killed if it has not stopped after WaitDelay, which also keeps a
	// helper (ssh, credential) that inherits our pipes from blocking Wait.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 2 * time.Second
	if c.stdin != "" {
		cmd.Stdin = strings.NewReader(c.stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.String(), nil
	}
	e := &Error{Dir: c.dir, Args: c.args, ExitCode: -1, Stderr: sanitize(strings.TrimSpace(stderr.String())), Err: err}
	var xe *exec.ExitError
	switch {
	case cctx.Err() != nil:
		e.Err = fmt.Errorf("timed out or cancelled: %w", cctx.Err())
		if ctx.Err() == nil { // our own deadline, not the caller giving up
			e.Transient = CauseTimeout
		}
	case errors.As(err, &xe):
		e.ExitCode = xe.ExitCode()
		e.Transient = classifyStderr(e.Stderr, c.dir)
	}
	return stdout.String(), e
}

// sanitize makes text from git or from an issue one safe line for a
// terminal: termtext.Line. A %q verb needs none: it escapes the same
// characters itself, and would escape sanitize's backslashes again.
func sanitize(s string) string { return termtext.Line(s) }

// isControl is termtext's test of a character a terminal must not get
// raw: names and claim fields holding one are refused.
func isControl(r rune) bool { return termtext.Unsafe(r) }
