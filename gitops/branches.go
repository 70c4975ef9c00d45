package gitops

import (
	"context"
	"fmt"
)

// EnsureWaveBranch makes sure wave exists on the remote: when absent it is
// created from the remote's current base (fetched first) with a push that
// only creates (lease: must not exist), so two runs cannot both create it.
// It returns the remote sha and whether this call created it. The local
// branch of the same name is created or caught up by syncLocalWave (never
// moved while checked out, never past a commit of its own).
func (r *Repo) EnsureWaveBranch(ctx context.Context, wave, base string) (string, bool, error) {
	for _, b := range []string{wave, base} {
		if err := r.checkBranch(ctx, b); err != nil {
			return "", false, err
		}
	}
	sha, ok, err := r.RemoteHead(ctx, wave)
	if err != nil {
		return "", false, err
	}
	created := false
	if !ok {
		if err := r.fetchBranches(ctx, base); err != nil {
			return "", false, fmt.Errorf("wave branch %s: base %s: %w", sanitize(wave), sanitize(base), err)
		}
		if sha, _, err = r.localRef(ctx, r.tracking(base)); err != nil {
			return "", false, err
		}
		res, err := r.push(ctx, false, "refs/heads/"+wave+":", sha+":refs/heads/"+wave)
		if err != nil {
			return "", false, fmt.Errorf("wave branch %s: push: %w", sanitize(wave), err)
		}
		// '=' is another run that created it from the same base tip first.
		rejected := res.rejected()
		created = res.flag == '*'
		if !created { // report theirs
			if sha, ok, err = r.RemoteHead(ctx, wave); err != nil || !ok {
				return "", false, fmt.Errorf("wave branch %s: push rejected (%s) and not on %s: %v", sanitize(wave), rejected, r.Remote, err)
			}
		}
	}
	if err := r.fetchBranches(ctx, wave); err != nil {
		return "", false, err
	}
	tip := sha
	if t, ok, err := r.localRef(ctx, r.tracking(wave)); err == nil && ok {
		tip = t // just fetched: a merge may have landed since ls-remote
	}
	if local, _, err := r.localRef(ctx, "refs/heads/"+wave); err == nil {
		r.syncLocalWave(ctx, wave, local, tip, "")
	}
	return sha, created, nil
}

// SafeDelete deletes branch locally and on the remote, but only when every
// tip that exists (local, remote) is an ancestor of the remote wave branch
// (fetched first); otherwise nothing is deleted and deleted is false. Each
// deletion is conditional on the tip just checked (update-ref old value,
// push lease), so a commit that lands meanwhile keeps the branch.
func (r *Repo) SafeDelete(ctx context.Context, branch, wave string) (bool, error) {
	for _, b := range []string{branch, wave} {
		if err := r.checkBranch(ctx, b); err != nil {
			return false, err
		}
	}
	if branch == wave {
		return false, fmt.Errorf("safe delete: %s is the wave branch", sanitize(branch))
	}
	remoteTip, onRemote, err := r.RemoteHead(ctx, branch)
	if err != nil {
		return false, err
	}
	fetch := []string{wave}
	if onRemote {
		fetch = append(fetch, branch)
	}
	if err := r.fetchBranches(ctx, fetch...); err != nil {
		return false, fmt.Errorf("safe delete %s: %w", sanitize(branch), err)
	}
	waveTip := r.tracking(wave)
	localTip, onLocal, err := r.localRef(ctx, "refs/heads/"+branch)
	if err != nil {
		return false, err
	}
	for _, tip := range []struct {
		sha string
		ok  bool
	}{{localTip, onLocal}, {remoteTip, onRemote}} {
		if !tip.ok {
			continue
		}
		merged, err := r.IsAncestor(ctx, tip.sha, waveTip)
		if err != nil {
			return false, fmt.Errorf("safe delete %s: %w", sanitize(branch), err)
		}
		if !merged {
			r.log.Info("branch not deleted: not merged into the wave branch", "branch", branch, "tip", short(tip.sha), "wave", wave)
			return false, nil
		}
	}
	if onLocal {
		if err := r.deleteLocalBranch(ctx, branch, localTip); err != nil {
			return false, err
		}
	}
	if onRemote {
		res, err := r.push(ctx, false, "refs/heads/"+branch+":"+remoteTip, ":refs/heads/"+branch)
		rejected := res.rejected()
		if err != nil {
			return onLocal, fmt.Errorf("safe delete %s on %s: %w", sanitize(branch), r.Remote, err)
		}
		if rejected != "" {
			return onLocal, fmt.Errorf("safe delete %s on %s: %w: %s", sanitize(branch), r.Remote, ErrRejected, rejected)
		}
		_, _ = r.git(ctx, r.Dir, "update-ref", "-d", r.tracking(branch))
	}
	return onLocal || onRemote, nil
}

// deleteLocalBranch removes refs/heads/<branch> if it is still at tip and
// no worktree has it checked out (that worktree would be left on a branch
// that does not exist).
func (r *Repo) deleteLocalBranch(ctx context.Context, branch, tip string) error {
	if wt, err := r.checkedOutAt(ctx, branch); err != nil || wt != "" {
		if err != nil {
			return fmt.Errorf("safe delete %s: %w", sanitize(branch), err)
		}
		return fmt.Errorf("safe delete %s: checked out in worktree %s; remove it first", sanitize(branch), wt)
	}
	// A packed ref's deletion rewrites packed-refs under its lock, which
	// another deletion may hold this instant.
	err := r.retryLocked(ctx, func() error {
		_, err := r.git(ctx, r.Dir, "update-ref", "-d", "refs/heads/"+branch, tip)
		return err
	})
	if err != nil {
		return fmt.Errorf("safe delete %s: %w", sanitize(branch), err)
	}
	return nil
}

// checkedOutAt is the path of the worktree (the main one or a linked one)
// that has refs/heads/<branch> checked out, "" when none does.
func (r *Repo) checkedOutAt(ctx context.Context, branch string) (string, error) {
	list, err := r.worktrees(ctx)
	if err != nil {
		return "", err
	}
	for _, w := range list {
		if w.Branch == "refs/heads/"+branch {
			return w.Path, nil
		}
	}
	return "", nil
}

// syncLocalWave brings the local branch refs/heads/<wave>, read as local
// ("" = absent), to tip (the remote wave tip) for the user and for workers
// told to `git merge <wave>`, creating it when missing. known, when set, is
// a commit the caller knows tip descends from (no ancestry check needed). It is the user's branch, so it moves only when
// that loses nothing: never while a worktree has it checked out (update-ref
// would leave that working tree stale, and its next commit would revert
// the merges; git branch -f refuses for the same reason), and only as a
// fast-forward (a commit made there stays). Otherwise it is left where it
// is, with a warning saying how to catch up; the run goes on either way,
// since the merge engine works from the remote and its own intent ref.
//
// Every update is conditional on local: a commit the user makes meanwhile
// fails it, and their branch stays.
func (r *Repo) syncLocalWave(ctx context.Context, wave, local, tip, known string) {
	if local == tip {
		return
	}
	wt, err := r.checkedOutAt(ctx, wave)
	switch {
	case err != nil:
		r.log.Warn("local wave branch not updated", "branch", wave, "err", err)
		return
	case wt != "":
		r.log.Warn("local wave branch left alone: it is checked out; run `git merge --ff-only "+r.Remote+"/"+wave+"` there to catch up",
			"branch", wave, "worktree", wt, "at", short(local), "remote", short(tip))
		return
	}
	if local != "" && local != known {
		ff, err := r.IsAncestor(ctx, local, tip)
		if err != nil {
			r.log.Warn("local wave branch not updated", "branch", wave, "err", err)
			return
		}
		if !ff {
			r.log.Warn("local wave branch left alone: it has commits "+r.Remote+" lacks (they are not in the run)",
				"branch", wave, "at", short(local), "remote", short(tip))
			return
		}
	}
	if _, err := r.git(ctx, r.Dir, "update-ref", "-m", "wave-orchestrator: fast-forward to "+r.Remote, "refs/heads/"+wave, tip, local); err != nil {
		r.log.Warn("local wave branch not updated", "branch", wave, "err", err)
	}
}
