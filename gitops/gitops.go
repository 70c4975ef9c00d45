// Package gitops is the only code in wave-orchestrator that runs git. It owns
// the backlog's git protocol: claims as compare-and-swap refs on the remote,
// the wave branch and the workers' own clones (read without running git in
// them), snapshots that leave a checkout untouched, and the serialized merge
// engine that moves the wave branch on the remote only under a lease, only
// from the tip its caller last recorded, and proves ancestry before
// reporting success.
//
// Every call is an argv (never a shell) with -C <dir>, a C locale, terminal
// prompts off, a timeout and the hardening of harden.go (no hook, no
// fsmonitor, only an allowlist of the user's global configuration, the
// GitHub token only where origin is reached); untrusted text (commit
// messages built from issue text) travels on stdin, never in argv.
package gitops

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/coalesce"
)

// Errors callers match with errors.Is.
var (
	ErrVerifyFailed = errors.New("verify failed")
	// ErrRejected: the remote refused a push (a lease that no longer holds,
	// or a non-fast-forward).
	ErrRejected = errors.New("push rejected")
	// ErrBadClaim: a claim ref whose commit message is not a claim.
	ErrBadClaim = errors.New("malformed claim")
)

// DefaultTimeout bounds one git call when Options.Timeout is zero.
const DefaultTimeout = 2 * time.Minute

// Options configure a Repo.
type Options struct {
	Remote string       // default "origin"
	Logger *slog.Logger // default slog.Default()
	Env    []string     // extra KEY=VALUE for every git call (after the clean locale env)
	// Credentials names variables holding a credential for the remote
	// besides the GitHub token ones (secretEnv), e.g. github.tokenEnv:
	// like those, they reach only the calls that talk to the remote.
	Credentials []string
	// Secrets names more variables no git call gets at all (a webhook
	// URL, a model's API key).
	Secrets []string
	Timeout time.Duration
	// ScratchDir holds the temporary verify worktrees (default os.TempDir()).
	ScratchDir string
}

// Repo is a clone. Safe for concurrent use.
type Repo struct {
	Dir        string // top level of the clone
	common     string // its common git directory (absolute)
	Remote     string
	scratchDir string
	log        *slog.Logger
	rn         runner
	calls      atomic.Int64

	mu        sync.Mutex // guards emptyTree and identity
	emptyTree string
	identity  []string      // merge commit identity env; nil until looked up
	userID    []configEntry // the clone's user.name/email; nil until looked up
	// fetchMu serialises fetches into our private ref namespaces: two
	// fetches updating one local ref fail on its lock file.
	fetchMu sync.Mutex
	// claimPushes coalesces concurrent claim pushes (claimpush.go).
	claimPushes *coalesce.Queue[claimPush, claimAnswer]
	// wtMu keeps the commands that change the clone's worktrees (add,
	// remove, prune, move) apart from those that read them all: a worktree
	// half added or half removed fails a fetch's connectivity check ("bad
	// object worktrees/<name>/HEAD") and `worktree list` ("failed to read
	// .git/worktrees/<name>/commondir"). Changes hold it alone; readers
	// (fetch, worktree list) share it. Callers are concurrent: a
	// supervisor starts several workers at once.
	wtMu sync.RWMutex
	// fetchSeq numbers the fetches begun; lastFetch (under fetchMu) is,
	// per refspec list, the number and outcome of the last fetch of it.
	// Callers that wait behind a fetch share the next of the same refs
	// (Fetch).
	fetchSeq  atomic.Uint64
	lastFetch map[string]fetchDone
	// branchOK holds branch names git check-ref-format accepted: the
	// answer depends on the name only, and the wave branch's is asked for
	// by almost every operation.
	branchOK sync.Map
}

// Open returns the clone containing dir.
func Open(ctx context.Context, dir string, o Options) (*Repo, error) {
	r := &Repo{Remote: o.Remote, scratchDir: o.ScratchDir, log: o.Logger}
	r.claimPushes = &coalesce.Queue[claimPush, claimAnswer]{Run: r.pushClaimBatch, Key: claimPush.key}
	if r.Remote == "" {
		r.Remote = "origin"
	}
	if r.scratchDir == "" {
		r.scratchDir = os.TempDir()
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	secrets := secretNames(o)
	entries, err := userConfig(ctx, dir, secrets, timeout)
	if err != nil {
		return nil, fmt.Errorf("open git repository %s: %w", dir, err)
	}
	r.calls.Add(2)
	out, err := bootstrapRunner(o.Env, secrets, entries, timeout).run(ctx, call{dir: dir,
		args: []string{"rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir"}})
	if err != nil {
		return nil, fmt.Errorf("open git repository %s: %w", dir, err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		return nil, fmt.Errorf("open git repository %s: rev-parse said %q", dir, firstLine(out))
	}
	r.Dir, r.common = strings.TrimSpace(lines[0]), strings.TrimSpace(lines[1])
	h, err := makeHome(r.common, entries)
	if err != nil {
		// A clone we may not write (a read-only checkout looked at by
		// status): no hook and no configuration of the user's at all.
		r.log.Debug("git home not made; running git with none", "dir", r.common, "err", err)
		r.rn = bootstrapRunner(o.Env, secrets, entries, timeout)
		env, held := cleanEnv(append([]string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull}, o.Env...), secrets)
		r.rn.env, r.rn.secrets = env, credentials(held, o)
		return r, nil
	}
	r.rn = homeRunner(h, o.Env, secrets, timeout)
	r.rn.secrets = credentials(r.rn.secrets, o)
	return r, nil
}

// Calls is the number of git processes this Repo has run.
func (r *Repo) Calls() int64 { return r.calls.Load() }

// git runs git -C dir args... and returns stdout.
func (r *Repo) git(ctx context.Context, dir string, args ...string) (string, error) {
	return r.do(ctx, call{dir: dir, args: args})
}

// do runs one call, counting it and logging it at debug level.
func (r *Repo) do(ctx context.Context, c call) (string, error) {
	cmd := afterConfig(c.args) // the command, after its -c options
	switch access := worktreeAccess(cmd); {
	case c.locked:
	case access == accessChange:
		r.wtMu.Lock()
		defer r.wtMu.Unlock()
	case access == accessRead:
		r.wtMu.RLock()
		defer r.wtMu.RUnlock()
	}
	r.calls.Add(1)
	c.net = c.net || reachesRemote(cmd, r.Remote)
	start := time.Now()
	out, err := r.rn.run(ctx, c)
	r.log.Debug("git", "dir", c.dir, "args", c.args, "took", time.Since(start), "err", err)
	return out, err
}

// afterConfig is args without the -c key=value pairs that lead them:
// the command and its own arguments.
func afterConfig(args []string) []string {
	for len(args) >= 2 && args[0] == "-c" {
		args = args[2:]
	}
	return args
}

// line runs git in the clone and returns stdout's first line, trimmed.
func (r *Repo) line(ctx context.Context, args ...string) (string, error) {
	out, err := r.git(ctx, r.Dir, args...)
	return firstLine(out), err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}

// Version is the installed git's major and minor version (doctor needs
// >= 2.38 for merge-tree --write-tree). `git version` needs nothing of
// the environment but PATH, and gets nothing else: which variables hold
// secrets (a configured token name, a sink's URL) is not known here.
func Version(ctx context.Context) (major, minor int, err error) {
	rn := runner{env: []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull}, config: hardConfig(os.DevNull), timeout: 30 * time.Second}
	out, err := rn.run(ctx, call{dir: os.TempDir(), args: []string{"version"}})
	if err != nil {
		return 0, 0, fmt.Errorf("git version: %w", err)
	}
	return parseVersion(out)
}

// parseVersion reads "git version 2.39.5" (vendors append suffixes such as
// " (Apple Git-143)" or ".windows.1").
func parseVersion(out string) (int, int, error) {
	f := strings.Fields(out)
	if len(f) < 3 || f[0] != "git" || f[1] != "version" {
		return 0, 0, fmt.Errorf("git version: unexpected output %q", firstLine(out))
	}
	parts := strings.SplitN(f[2], ".", 3)
	if len(parts) < 2 {
		return 0, 0, fmt.Errorf("git version: unexpected version %q", f[2])
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("git version: unexpected version %q", f[2])
	}
	return major, minor, nil
}

// How a git command uses the clone's list of worktrees (see wtMu).
const (
	accessNone = iota
	accessRead
	accessChange
)

func worktreeAccess(args []string) int {
	if len(args) == 0 {
		return accessNone
	}
	switch args[0] {
	case "fetch":
		return accessRead
	case "worktree":
		if len(args) > 1 && args[1] == "list" {
			return accessRead
		}
		return accessChange
	}
	return accessNone
}
