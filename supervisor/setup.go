package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/sandbox"
)

// A worker checkout is made ready to build before its worker first
// starts in it (docs/merge-gate.md, "Checkouts ready to build"): the
// git-ignored files backlog.copyIgnored names are copied from the
// repository, then backlog.setup runs there. setup is the repository's
// own code, so it runs as untrusted as the worker: without the
// supervisor's secrets, in a session of its own, and in the worker's
// sandbox (its checkout and git metadata writable, the network through
// the allowlist proxy to backlog.sandbox.allowHosts only). A try that
// fails is tried once more; a second failure parks the issue with the
// end of its log. The run's log says when setup passed in which
// checkout, so a salvage, a rework, an answer or a restarted supervisor
// goes on in that checkout without running it again; a checkout that
// was deleted and is made again gets it again.

// setupTries is how many tries setup gets in a checkout before the
// issue parks.
const setupTries = 2

// setupTail is how much of a failed setup's log the park's question
// quotes.
const setupTail = 2000

// setupWanted reports whether checkouts need anything before they are
// ready (backlog.setup or backlog.copyIgnored).
func (s *Supervisor) setupWanted() bool {
	b := s.o.Config.Backlog
	return len(b.Setup) > 0 || len(b.CopyIgnored) > 0
}

// checkSetup refuses, before anything is claimed, what a run could not
// do for every checkout: setup on a kubernetes lane (a pod clones
// origin itself, and the repository's ignored files are not there), and
// an ignored file that is a symlink out of the repository.
func (s *Supervisor) checkSetup(ctx context.Context) error {
	if !s.setupWanted() {
		return nil
	}
	b := s.o.Config.Backlog
	if s.o.Lane.Runtime.UsesKubernetes() {
		key := "backlog.setup"
		if len(b.Setup) == 0 {
			key = "backlog.copyIgnored"
		}
		return fmt.Errorf("%s: %s: a worker in a pod clones origin itself, so %s cannot prepare its checkout "+
			"on a kubernetes lane (lane %s); build what it needs into the worker image (runtime.kubernetes.image) "+
			"and remove %s, or run the backlog on a tmux lane", s.o.Config.KeyLine(key), key, key, s.o.Lane.Name, key)
	}
	_, err := s.ignoredFiles(ctx)
	return err
}

// ignoredFiles lists the repository's files to copy into a checkout,
// each checked to be a regular file inside the repository (a symlink
// is followed only while it stays inside). The lane state directory and
// worker checkouts under the repository are never among them.
func (s *Supervisor) ignoredFiles(ctx context.Context) ([]string, error) {
	globs := s.o.Config.Backlog.CopyIgnored
	if len(globs) == 0 {
		return nil, nil
	}
	files, err := s.o.Git.IgnoredFiles(ctx, globs)
	if err != nil {
		return nil, fmt.Errorf("%s: backlog.copyIgnored: %w", s.o.Config.KeyLine("backlog.copyIgnored"), err)
	}
	skip := s.notCopied()
	out := files[:0]
	for _, f := range files {
		if !underAny(f, skip) {
			out = append(out, f)
		}
	}
	if err := checkCopyable(s.o.Git.Dir, out); err != nil {
		return nil, fmt.Errorf("%s: backlog.copyIgnored: %w", s.o.Config.KeyLine("backlog.copyIgnored"), err)
	}
	return out, nil
}

// notCopied are the repository's directories (relative) whose files are
// never copied into a checkout: the lane state (the run's records) and
// the worker checkouts, when they are under the repository.
func (s *Supervisor) notCopied() []string {
	var out []string
	root := s.o.Git.Dir
	if rel, err := filepath.Rel(root, s.o.Layout.StateDir); err == nil && filepath.IsLocal(rel) {
		out = append(out, strings.Split(filepath.ToSlash(rel), "/")[0])
	}
	if rel, err := filepath.Rel(root, s.worktreeRoot()); err == nil && filepath.IsLocal(rel) {
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

func underAny(rel string, dirs []string) bool {
	for _, d := range dirs {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}

// forgetLostSetup records that the checkout setup last ran in for j's
// issue is gone (deleted by a person or a tool): the one made in its place
// gets setup again. Called before the checkout is made again, so a
// supervisor killed in between still knows.
func (s *Supervisor) forgetLostSetup(j *job) error {
	w := j.w
	var st *backlog.SetupState
	j.onLoop(func() { st = w.is.Setup })
	if st == nil || st.Worktree == "" {
		return nil
	}
	if _, err := os.Lstat(st.Worktree); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return j.record(backlog.Event{Kind: backlog.EvSetup, Issue: w.n, Worktree: st.Worktree, Outcome: backlog.SetupReset})
}

// readyCheckout makes the checkout of j's issue at wt ready to build
// unless the run's log says it is: the ignored files copied and setup passed. It
// reports whether the issue parked instead (setup failed twice).
func (s *Supervisor) readyCheckout(ctx context.Context, j *job, wt string) (parked bool, err error) {
	w := j.w
	if !s.setupWanted() || s.pods() {
		return false, nil
	}
	n := w.n
	for {
		var ready bool
		var failed int
		var detail string
		j.onLoop(func() {
			st := w.is.Setup
			ready, failed = st.Ready(wt), st.FailedTries(wt)
			if st != nil {
				detail = st.Detail
			}
		})
		if ready {
			return false, nil
		}
		if failed >= setupTries {
			return true, s.parkSetup(ctx, j, detail, failed)
		}
		try := failed + 1
		if err := j.record(backlog.Event{Kind: backlog.EvSetup, Issue: n, Worktree: wt, Outcome: backlog.SetupRunning, Attempt: try}); err != nil {
			return false, err
		}
		s.printf("#%d: making its checkout ready (%s), try %d of %d", n, s.setupWhat(), try, setupTries)
		start := time.Now()
		err := s.setupCheckout(ctx, j, wt, try)
		if ctx.Err() != nil {
			return false, fmt.Errorf("#%d: setup: %w", n, ctx.Err()) // a stop is no verdict on the checkout
		}
		if err == nil {
			s.printf("#%d: checkout ready in %s", n, time.Since(start).Round(time.Second))
			return false, j.record(backlog.Event{Kind: backlog.EvSetup, Issue: n, Worktree: wt, Outcome: backlog.SetupPassed, Attempt: try})
		}
		s.printf("#%d: setup failed (try %d of %d): %s", n, try, setupTries, oneLine(err.Error()))
		if err := j.record(backlog.Event{Kind: backlog.EvSetup, Issue: n, Worktree: wt, Outcome: backlog.SetupFailed,
			Attempt: try, Detail: oneLine(err.Error())}); err != nil {
			return false, err
		}
	}
}

// setupWhat names what making a checkout ready does, for the output.
func (s *Supervisor) setupWhat() string {
	b := s.o.Config.Backlog
	var parts []string
	if len(b.CopyIgnored) > 0 {
		parts = append(parts, "copying "+strings.Join(b.CopyIgnored, ", "))
	}
	if len(b.Setup) > 0 {
		parts = append(parts, "running "+strings.Join(b.Setup, " "))
	}
	return strings.Join(parts, ", then ")
}

// parkSetup parks j's issue after its setup failed tries times, the end
// of the last try's log in the question (the repository's output:
// cleaned of control characters, fenced as data by the comment).
func (s *Supervisor) parkSetup(ctx context.Context, j *job, detail string, tries int) error {
	n := j.w.n
	log := s.setupLog(n, tries)
	tail, _ := tailOf(log, setupTail)
	q := fmt.Sprintf("The checkout of #%d could not be made ready: backlog.setup failed %d times (%s). "+
		"Fix the setup (or what it needs) and answer to try again. Its log: %s; it ends:\n\n%s",
		n, tries, detail, log, backlog.Clean(tail))
	return s.park(ctx, j, "setup failed "+fmt.Sprint(tries)+" times: "+detail, q, nil)
}

// setupLog is where try k of issue n's checkout setup writes its output.
func (s *Supervisor) setupLog(n, try int) string {
	return filepath.Join(s.log.dir, "setup", fmt.Sprintf("i%d-%d.log", n, try))
}

// setupCheckout is one try of readying the checkout of j's issue at dir,
// its output in its own log.
func (s *Supervisor) setupCheckout(ctx context.Context, j *job, dir string, try int) error {
	n := j.w.n
	path := s.setupLog(n, try)
	if err := jsonfile.MkdirAll(filepath.Dir(path)); err != nil {
		return err
	}
	out, err := jsonfile.Create(path)
	if err != nil {
		return err
	}
	defer out.Close()
	if err := s.prepareFiles(ctx, j, n, dir, out, true); err != nil {
		return fmt.Errorf("%w (log: %s)", err, path)
	}
	return nil
}

// setupScratch readies a verify checkout at dir the way a worker's is
// (the ignored files, then setup, its git metadata read-only as verify's
// is), its output in out (the verify log). Verify's checkout is fresh at
// the would-be merge commit, so it never reuses what a worker's setup
// left: a worker can write anything in its own checkout, and verify
// must judge the commits alone.
func (s *Supervisor) setupScratch(ctx context.Context, j *job, n int, dir string, out io.Writer) error {
	if !s.setupWanted() {
		return nil
	}
	fmt.Fprintf(out, "[wave] making the verify checkout ready: %s\n", s.setupWhat())
	if err := s.prepareFiles(ctx, j, n, dir, out, false); err != nil {
		return err
	}
	fmt.Fprintln(out, "[wave] the verify checkout is ready")
	return nil
}

// prepareFiles copies the ignored files into dir, then runs setup there
// (bounded by backlog.setupTimeoutMinutes) for issue n, writing to out
// what it did; the hosts its sandbox refused are recorded through j.
func (s *Supervisor) prepareFiles(ctx context.Context, j *job, n int, dir string, out io.Writer, gitWritable bool) error {
	files, err := s.ignoredFiles(ctx)
	if err != nil {
		fmt.Fprintln(out, err)
		return err
	}
	if len(files) > 0 {
		if err := copyIgnored(s.o.Git.Dir, dir, files); err != nil {
			fmt.Fprintln(out, err)
			return err
		}
		fmt.Fprintf(out, "[wave] copied %d ignored file(s): %s\n", len(files), strings.Join(files, ", "))
	}
	argv := s.o.Config.Backlog.Setup
	if len(argv) == 0 {
		return nil
	}
	timeout := time.Duration(s.o.Config.Backlog.SetupTimeoutMinutes) * time.Minute
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd, done, err := s.untrustedCommand(ctx, argv, dir, setupEnv(s.o.Config, os.Environ(), n), gitWritable, sandbox.NetAllowlist)
	if err != nil {
		fmt.Fprintln(out, err)
		return fmt.Errorf("setup #%d: %w", n, err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	err = s.runRecorded(j, n, "setup", dir, cmd)
	if berr := s.noteBlocked(j, n, "setup", done()); berr != nil && err == nil {
		return berr
	}
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("timed out after %s (backlog.setupTimeoutMinutes)", timeout)
		}
		fmt.Fprintf(out, "[wave] %s: %v\n", strings.Join(argv, " "), err)
		return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return nil
}

// setupEnv is what setup runs with: the supervisor's environment
// without its secrets and its tmux (as verify's), and the issue.
func setupEnv(cfg *config.Config, environ []string, n int) []string {
	drop := map[string]bool{"TMUX": true, "TMUX_PANE": true}
	for _, k := range cfg.SecretEnvNames(environ) {
		drop[k] = true
	}
	out := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			out = append(out, kv)
		}
	}
	return append(out, fmt.Sprintf("WAVE_ISSUE_NUMBER=%d", n))
}
