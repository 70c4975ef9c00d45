package gitops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// tracking is our copy of a remote branch: refs/remotes/<remote>/<branch>.
// We always fetch into it with an explicit refspec, so it does not depend
// on the clone's configured fetch refspecs.
func (r *Repo) tracking(branch string) string {
	return "refs/remotes/" + r.Remote + "/" + branch
}

// Fetch fetches refspecs (or the remote's configured ones) from the remote,
// without writing FETCH_HEAD (shared by every process in the clone).
// Callers that ask while a fetch runs share the next one of the same refs
// that begins after they asked: its refs are as fresh as they asked for.
func (r *Repo) Fetch(ctx context.Context, refspecs ...string) error {
	return r.fetch(ctx, nil, refspecs)
}

// fetchChecked is Fetch with every object it brings checked as a
// worker's are (fsckStrict): a fetch of what a worker's pod pushed.
func (r *Repo) fetchChecked(ctx context.Context, refspecs ...string) error {
	return r.fetch(ctx, fsckStrict(), refspecs)
}

// fetch is Fetch with pre, git's global options (-c key=value), before
// the command.
func (r *Repo) fetch(ctx context.Context, pre, refspecs []string) error {
	for _, s := range refspecs {
		if strings.HasPrefix(s, "-") {
			return fmt.Errorf("fetch: refspec %q starts with '-'", s)
		}
	}
	key := strings.Join(append(slices.Clone(pre), refspecs...), "\x00")
	asked := r.fetchSeq.Load()
	unlock := r.lockFetch()
	defer unlock()
	if last, ok := r.lastFetch[key]; ok && last.seq > asked {
		// The same fetch began after this call did and has ended: it
		// is as good as our own.
		return last.err
	}
	seq := r.fetchSeq.Add(1)
	args := append(append(slices.Clone(pre), "fetch", "--quiet", "--no-write-fetch-head", r.Remote), refspecs...)
	err := r.retryLocked(ctx, func() error { _, err := r.git(ctx, r.Dir, args...); return err })
	if err != nil {
		err = fmt.Errorf("fetch from %s: %w", r.Remote, err)
	}
	if r.lastFetch == nil {
		r.lastFetch = map[string]fetchDone{}
	}
	r.lastFetch[key] = fetchDone{seq: seq, err: err}
	return err
}

// fetchDone is a fetch's number and outcome.
type fetchDone struct {
	seq uint64
	err error
}

// FetchBranch updates our tracking ref of one branch on the remote
// (shared like Fetch by callers that wait behind the same fetch).
func (r *Repo) FetchBranch(ctx context.Context, branch string) error {
	if err := r.checkBranch(ctx, branch); err != nil {
		return err
	}
	return r.fetchBranches(ctx, branch)
}

// lockFetch takes fetchMu; the returned func releases it.
func (r *Repo) lockFetch() func() {
	r.fetchMu.Lock()
	return r.fetchMu.Unlock
}

// fetchBranches updates the tracking refs of branches that exist on the remote.
func (r *Repo) fetchBranches(ctx context.Context, branches ...string) error {
	specs := make([]string, len(branches))
	for i, b := range branches {
		specs[i] = "+refs/heads/" + b + ":" + r.tracking(b)
	}
	return r.Fetch(ctx, specs...)
}

// retryLocked repeats f while it fails on another process's lock file
// (concurrent ref updates in one clone); any other outcome returns at once.
func (r *Repo) retryLocked(ctx context.Context, f func() error) error {
	delay := 10 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := f()
		if err == nil || attempt >= 6 || !isLockContention(err) {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		delay *= 2
	}
}

func isLockContention(err error) bool {
	var ge *Error
	if !errors.As(err, &ge) {
		return false
	}
	return strings.Contains(ge.Stderr, ".lock") && strings.Contains(ge.Stderr, "File exists")
}

// RemoteHead is the sha of refs/heads/<branch> on the remote (ls-remote).
func (r *Repo) RemoteHead(ctx context.Context, branch string) (string, bool, error) {
	sha, ok, err := r.lsRemote(ctx, "refs/heads/"+branch)
	if err != nil {
		return "", false, fmt.Errorf("remote head of %s: %w", sanitize(branch), err)
	}
	return sha, ok, nil
}

// lsRemote reads one exact ref from the remote.
func (r *Repo) lsRemote(ctx context.Context, ref string) (string, bool, error) {
	out, err := r.git(ctx, r.Dir, "ls-remote", "--exit-code", r.Remote, ref)
	if exitCode(err) == 2 {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	for _, l := range strings.Split(out, "\n") {
		sha, name, ok := strings.Cut(strings.TrimSpace(l), "\t")
		if ok && name == ref {
			return sha, true, nil
		}
	}
	return "", false, nil
}

// RevParse resolves rev to an object name.
func (r *Repo) RevParse(ctx context.Context, rev string) (string, error) {
	return r.revParse(ctx, r.Dir, rev)
}

func (r *Repo) revParse(ctx context.Context, dir, rev string) (string, error) {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("rev-parse: invalid revision %q", rev)
	}
	out, err := r.git(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev)
	if err != nil {
		return "", fmt.Errorf("rev-parse %s: %w", sanitize(rev), err)
	}
	return firstLine(out), nil
}

// localRef is the sha of a full ref in the clone, ok false when absent.
func (r *Repo) localRef(ctx context.Context, ref string) (string, bool, error) {
	out, err := r.git(ctx, r.Dir, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if exitCode(err) == 1 {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", sanitize(ref), err)
	}
	return firstLine(out), true, nil
}

// IsAncestor reports whether ancestor is reachable from descendant (a
// commit is its own ancestor).
func (r *Repo) IsAncestor(ctx context.Context, ancestor, descendant string) (bool, error) {
	for _, rev := range []string{ancestor, descendant} {
		if rev == "" || strings.HasPrefix(rev, "-") {
			return false, fmt.Errorf("is-ancestor: invalid revision %q", rev)
		}
	}
	_, err := r.git(ctx, r.Dir, "merge-base", "--is-ancestor", ancestor, descendant)
	if err == nil {
		return true, nil
	}
	if exitCode(err) == 1 {
		return false, nil
	}
	return false, fmt.Errorf("is %s an ancestor of %s: %w", sanitize(ancestor), sanitize(descendant), err)
}

// Push pushes localRef to refs/heads/<remoteBranch> without force: a
// non-fast-forward is ErrRejected.
func (r *Repo) Push(ctx context.Context, localRef, remoteBranch string) error {
	if err := r.checkBranch(ctx, remoteBranch); err != nil {
		return err
	}
	if localRef == "" || strings.HasPrefix(localRef, "-") || strings.ContainsAny(localRef, ":+") {
		return fmt.Errorf("push: invalid local ref %q", localRef)
	}
	res, err := r.push(ctx, false, "", localRef+":refs/heads/"+remoteBranch)
	rejected := res.rejected()
	if err != nil {
		return fmt.Errorf("push %s to %s: %w", sanitize(localRef), sanitize(remoteBranch), err)
	}
	if rejected != "" {
		return fmt.Errorf("push %s to %s: %w: %s", sanitize(localRef), sanitize(remoteBranch), ErrRejected, rejected)
	}
	return nil
}

// pushResult is the remote's answer for the one ref a push updated.
type pushResult struct {
	flag    byte   // git push --porcelain flag: '*' created, '=' already there, '!' rejected, ...
	summary string // "[rejected] (stale info)", "[new branch]", ...
}

// rejected is the remote's reason for refusing the update, "" when it did not.
func (p pushResult) rejected() string {
	if p.flag != '!' {
		return ""
	}
	if p.summary == "" {
		return "rejected"
	}
	return p.summary
}

// push runs one git push --porcelain of refspec. lease, when set, is a
// --force-with-lease=<ref>:<expected> value (expected "" = must not exist).
// A refusal by the remote is reported in the result, not as err; err is
// for everything else (unreachable remote, hook failure).
func (r *Repo) push(ctx context.Context, noVerify bool, lease, refspec string) (pushResult, error) {
	args := []string{"push", "--porcelain"}
	if noVerify {
		args = append(args, "--no-verify")
	}
	if lease != "" {
		args = append(args, "--force-with-lease="+lease)
	}
	args = append(args, r.Remote, refspec)
	if strings.Contains(refspec, ":refs/heads/") {
		// A push to a branch updates our tracking ref of it: never while
		// a fetch writes the tracking refs ("cannot lock ref ... is at X
		// but expected Y").
		r.fetchMu.Lock()
		defer r.fetchMu.Unlock()
	}
	out, err := r.git(ctx, r.Dir, args...)
	res, ok := parsePush(out)
	if ok && res.flag == '!' {
		if cause := hookRefusal(res.summary); cause != "" {
			// Not an answer about the ref: the remote would not take
			// any update now. An error, so no caller reads it as a lost
			// lease.
			ge := &Error{Dir: r.Dir, Args: args, ExitCode: exitCode(err), Stderr: sanitize(res.summary), Transient: cause}
			var orig *Error
			if errors.As(err, &orig) {
				ge.Stderr, ge.Err = ge.Stderr+": "+orig.Stderr, orig.Err
			}
			return pushResult{}, ge
		}
		return res, nil
	}
	if err == nil && !ok {
		err = fmt.Errorf("push %s: no status line in output", sanitize(refspec))
	}
	return res, err
}

// parsePush reads the status line ("<flag>\t<from>:<to>\t<summary>") of
// git push --porcelain output.
func parsePush(out string) (pushResult, bool) {
	for _, l := range strings.Split(out, "\n") {
		f := strings.SplitN(l, "\t", 3)
		if len(f) < 2 || len(f[0]) != 1 || !strings.Contains(f[1], ":") {
			continue
		}
		res := pushResult{flag: f[0][0]}
		if len(f) == 3 {
			res.summary = strings.TrimSpace(f[2])
		}
		return res, true
	}
	return pushResult{}, false
}
