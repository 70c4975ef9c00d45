package gitops

import (
	"context"
	"fmt"
)

// EnsureWaveBranch makes sure wave exists on the remote: when absent it is
// created from the remote's current base (fetched first) with a push that
// only creates (lease: must not exist), so two runs cannot both create it.
// It returns the remote sha and whether this call created it. A local
// branch of the same name is created when missing, never moved.
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
	if _, has, err := r.localRef(ctx, "refs/heads/"+wave); err == nil && !has {
		if _, err := r.git(ctx, r.Dir, "update-ref", "refs/heads/"+wave, sha, ""); err != nil {
			r.log.Debug("local wave branch not created", "wave", wave, "err", err)
		}
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
	list, err := r.worktrees(ctx)
	if err != nil {
		return err
	}
	for _, w := range list {
		if w.Branch == "refs/heads/"+branch {
			return fmt.Errorf("safe delete %s: checked out in worktree %s; remove it first", sanitize(branch), w.Path)
		}
	}
	if _, err := r.git(ctx, r.Dir, "update-ref", "-d", "refs/heads/"+branch, tip); err != nil {
		return fmt.Errorf("safe delete %s: %w", sanitize(branch), err)
	}
	return nil
}
