package gitops

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Worker-side helpers: what the built-in simulated worker does in its
// worktree (a real agent runs git itself), and what backlog mode asks of
// a clone before it starts.

// worktreeRunner runs git as the worker does in its own checkout (the
// built-in simulated worker): the worker's environment and configuration.
func worktreeRunner() runner {
	env, _ := cleanEnv(configFilesEnv(), nil)
	return runner{env: env, timeout: DefaultTimeout}
}

// identity returns the tool's identity when the worktree has none
// configured (a CI host), so a commit never fails for want of a name.
func identity(ctx context.Context, rn runner, dir string) []string {
	if _, err := rn.run(ctx, call{dir: dir, args: []string{"config", "user.email"}}); err != nil {
		return toolIdentity()
	}
	return nil
}

// mergeIdentity is the identity of merge commits: the clone's configured
// one, else the tool's (a CI host without user.email). Looked up once.
func (r *Repo) mergeIdentity(ctx context.Context) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.identity == nil {
		r.identity = identity(ctx, r.rn, r.Dir)
		if r.identity == nil {
			r.identity = []string{}
		}
	}
	return r.identity
}

// userIdentity is the commit identity this clone uses (its own config,
// else the global one the supervisor copies), as config entries for a
// worker's clone: a worker commits as the person whose repository it
// works in, as it did in a worktree that shared the clone's config, and
// its sandbox's private HOME holds no global config to find one in.
// Looked up once; nil when none is configured.
func (r *Repo) userIdentity(ctx context.Context) []configEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.userID == nil {
		r.userID = []configEntry{}
		for _, k := range []string{"user.name", "user.email"} {
			if v, err := r.line(ctx, "config", "--get", k); err == nil && v != "" {
				r.userID = append(r.userID, configEntry{k, v})
			}
		}
	}
	return r.userID
}

// CommitAll stages everything in the worktree at dir (untracked included)
// and commits it with message (passed on stdin). Nothing to commit is an
// error.
func CommitAll(ctx context.Context, dir, message string) error {
	rn := worktreeRunner()
	if _, err := rn.run(ctx, call{dir: dir, args: []string{"add", "-A"}}); err != nil {
		return err
	}
	_, err := rn.run(ctx, call{dir: dir, args: []string{"commit", "-q", "-F", "-"}, stdin: message, env: identity(ctx, rn, dir)})
	return err
}

// MergeFavouring merges ref into the worktree's branch at dir, resolving
// conflicting hunks with the given side ("ours" or "theirs"). A branch
// name origin has is taken from origin's copy, which the merge engine
// keeps fresh: the local branch of that name is the user's and lags while
// they have it checked out (syncLocalWave), and may hold commits of theirs
// that are not for the run.
func MergeFavouring(ctx context.Context, dir, ref, side, message string) error {
	if side != "ours" && side != "theirs" {
		return fmt.Errorf("merge %s: side %q: want ours or theirs", ref, side)
	}
	rn := worktreeRunner()
	if ref == "" || strings.HasPrefix(ref, "-") {
		return fmt.Errorf("merge: invalid ref %q", ref)
	}
	if !strings.HasPrefix(ref, "refs/") {
		remote := "refs/remotes/origin/" + ref
		if _, err := rn.run(ctx, call{dir: dir, args: []string{"rev-parse", "--verify", "--quiet", remote + "^{commit}"}}); err == nil {
			ref = remote
		}
	}
	_, err := rn.run(ctx, call{dir: dir, args: []string{"merge", "--no-edit", "-X", side, "-m", "merge", ref},
		env: identity(ctx, rn, dir)})
	if err != nil {
		return err
	}
	if message == "" {
		return nil
	}
	_, err = rn.run(ctx, call{dir: dir, args: []string{"commit", "--amend", "-q", "-F", "-"}, stdin: message, env: identity(ctx, rn, dir)})
	return err
}

// DefaultBranch is the remote's default branch: its HEAD as ls-remote
// reports it, else the local refs/remotes/<remote>/HEAD.
func (r *Repo) DefaultBranch(ctx context.Context) (string, error) {
	out, err := r.git(ctx, r.Dir, "ls-remote", "--symref", r.Remote, "HEAD")
	if err == nil {
		for _, l := range strings.Split(out, "\n") {
			if rest, ok := strings.CutPrefix(l, "ref: refs/heads/"); ok {
				if name, _, ok := strings.Cut(rest, "\t"); ok {
					return name, nil
				}
			}
		}
	}
	head, err2 := r.line(ctx, "symbolic-ref", "--short", "refs/remotes/"+r.Remote+"/HEAD")
	if err2 != nil {
		return "", fmt.Errorf("default branch of %s: %w", r.Remote, errorsJoin(err, err2))
	}
	return strings.TrimPrefix(head, r.Remote+"/"), nil
}

func errorsJoin(a, b error) error {
	if a == nil {
		return b
	}
	return fmt.Errorf("%w; %w", a, b)
}

// DiffText is the patch from..to with a stat header, cut at max bytes
// (with a note saying so), for a reviewer's prompt.
func (r *Repo) DiffText(ctx context.Context, from, to string, max int) (string, error) {
	out, err := r.git(ctx, r.Dir, "diff", "--stat", "--patch", "--no-color", "--no-ext-diff", from+"..."+to)
	if err != nil {
		return "", fmt.Errorf("diff %s...%s: %w", from, to, err)
	}
	if len(out) > max {
		out = out[:max] + fmt.Sprintf("\n[diff cut at %d bytes of %d]\n", max, len(out))
	}
	return out, nil
}

// PushReplacing pushes localRef to refs/heads/<remoteBranch> even when it
// is not a fast-forward, but only while the remote tip is still the one
// just read (--force-with-lease): a worker branch that was rebased or
// amended replaces the supervisor's own earlier push of it, never a push
// it has not seen.
func (r *Repo) PushReplacing(ctx context.Context, localRef, remoteBranch string) error {
	if err := r.checkBranch(ctx, remoteBranch); err != nil {
		return err
	}
	if localRef == "" || strings.HasPrefix(localRef, "-") || strings.ContainsAny(localRef, ":+") {
		return fmt.Errorf("push: invalid local ref %q", localRef)
	}
	tip, _, err := r.RemoteHead(ctx, remoteBranch)
	if err != nil {
		return err
	}
	res, err := r.push(ctx, false, "refs/heads/"+remoteBranch+":"+tip, localRef+":refs/heads/"+remoteBranch)
	if err != nil {
		return fmt.Errorf("push %s to %s: %w", sanitize(localRef), sanitize(remoteBranch), err)
	}
	if rej := res.rejected(); rej != "" {
		return fmt.Errorf("push %s to %s: %w: %s", sanitize(localRef), sanitize(remoteBranch), ErrRejected, rej)
	}
	return nil
}

// GitDirs are the git directories the checkout at dir names (its own and
// its common one, absolute): every place a hook or config written through
// git lands. The simulated hostile worker plants there.
func GitDirs(ctx context.Context, dir string) ([]string, error) {
	rn := worktreeRunner()
	out, err := rn.run(ctx, call{dir: dir, args: []string{"rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"}})
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(dirs, l) {
			dirs = append(dirs, l)
		}
	}
	return dirs, nil
}

// SetConfig sets key to value in the configuration of the checkout at dir
// (its repository's own file), as a worker's `git config` does.
func SetConfig(ctx context.Context, dir, key, value string) error {
	if key == "" || strings.HasPrefix(key, "-") {
		return fmt.Errorf("config: invalid key %q", key)
	}
	_, err := worktreeRunner().run(ctx, call{dir: dir, args: []string{"config", "--", key, value}})
	return err
}

// PushAs pushes HEAD of the checkout at dir to refs/heads/<branch> of its
// origin, as a worker running `git push` would: the error says why it was
// refused.
func PushAs(ctx context.Context, dir, branch string) error {
	if err := preCheckName(branch); err != nil {
		return err
	}
	_, err := worktreeRunner().run(ctx, call{dir: dir, args: []string{"push", "--quiet", "origin", "HEAD:refs/heads/" + branch}})
	return err
}
