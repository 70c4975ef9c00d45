package gitops

import (
	"context"
	"fmt"
	"strings"
)

// SafeDeleteAll is SafeDelete for many branches at once, with its
// guarantee for each: a branch goes (locally and on the remote) only when
// every tip of it that exists is an ancestor of the remote wave branch
// (fetched first), and each deletion is conditional on the tip just
// looked at. It runs a fixed number of git commands however many branches:
// one ls-remote, one fetch, one for-each-ref of the tips and one of those
// merged, one worktree list, one update-ref transaction for the local
// deletions and one push for the remote ones (not atomic: each ref under
// its own lease, deleted or kept alone). deleted names the branches that
// went; a branch kept (not merged, checked out, moved meanwhile) is false.
func (r *Repo) SafeDeleteAll(ctx context.Context, branches []string, wave string) (map[string]bool, error) {
	if err := r.checkBranch(ctx, wave); err != nil {
		return nil, err
	}
	deleted := map[string]bool{}
	var want []string
	for _, b := range branches {
		// Names are passed as exact refs, never as options: git refuses a
		// malformed one by itself (it then matches nothing).
		if err := preCheckName(b); err != nil {
			return nil, fmt.Errorf("safe delete: %w", err)
		}
		if b == wave {
			return nil, fmt.Errorf("safe delete: %s is the wave branch", sanitize(b))
		}
		deleted[b] = false
		want = append(want, b)
	}
	if len(want) == 0 {
		return deleted, nil
	}
	remote, err := r.remoteHeads(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("safe delete %d branch(es): %w", len(want), err)
	}
	fetch := []string{wave}
	for _, b := range want {
		if _, ok := remote[b]; ok {
			fetch = append(fetch, b)
		}
	}
	if err := r.fetchBranches(ctx, fetch...); err != nil {
		return nil, fmt.Errorf("safe delete %d branch(es): %w", len(want), err)
	}
	local, merged, err := r.tipsMerged(ctx, want, remote, r.tracking(wave))
	if err != nil {
		return nil, fmt.Errorf("safe delete %d branch(es): %w", len(want), err)
	}
	out, err := r.worktrees(ctx)
	if err != nil {
		return nil, err
	}
	checkedOut := map[string]bool{}
	for _, w := range out {
		checkedOut[w.Branch] = true
	}
	var gone []string
	for _, b := range want {
		lt, onLocal := local[b]
		rt, onRemote := remote[b]
		switch {
		case !onLocal && !onRemote:
		case onLocal && !merged[lt], onRemote && !merged[rt]:
			r.log.Info("branch not deleted: not merged into the wave branch", "branch", b, "wave", wave)
		case onLocal && checkedOut["refs/heads/"+b]:
			r.log.Info("branch not deleted: checked out in a worktree", "branch", b)
		default:
			gone = append(gone, b)
		}
	}
	if err := r.deleteLocalBranches(ctx, gone, local); err != nil {
		return deleted, err
	}
	failed, err := r.deleteRemoteBranches(ctx, gone, remote)
	for _, b := range gone {
		_, onLocal := local[b]
		deleted[b] = onLocal || !failed[b]
	}
	return deleted, err
}

// remoteHeads is the remote tip of each branch that exists there, in one
// ls-remote.
func (r *Repo) remoteHeads(ctx context.Context, branches []string) (map[string]string, error) {
	args := []string{"ls-remote", r.Remote}
	for _, b := range branches {
		args = append(args, "refs/heads/"+b)
	}
	out, err := r.git(ctx, r.Dir, args...)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, b := range branches {
		want[b] = true
	}
	heads := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		sha, name, ok := strings.Cut(strings.TrimSpace(l), "\t")
		if b := strings.TrimPrefix(name, "refs/heads/"); ok && want[b] {
			heads[b] = sha // ls-remote patterns match by tail: keep exact names only
		}
	}
	return heads, nil
}

// tipsMerged reads the local tips of branches and which of those tips
// (local, and remote as fetched) are ancestors of waveTip: two
// for-each-ref, the second with --merged.
func (r *Repo) tipsMerged(ctx context.Context, branches []string, remote map[string]string, waveTip string) (local map[string]string, merged map[string]bool, err error) {
	var refs []string
	for _, b := range branches {
		refs = append(refs, "refs/heads/"+b)
		if _, ok := remote[b]; ok {
			refs = append(refs, r.tracking(b))
		}
	}
	list := func(extra ...string) (map[string]string, error) {
		args := append(append([]string{"for-each-ref", "--format=%(refname) %(objectname)"}, extra...), refs...)
		out, err := r.git(ctx, r.Dir, args...)
		if err != nil {
			return nil, err
		}
		m := map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			if name, sha, ok := strings.Cut(strings.TrimSpace(l), " "); ok {
				m[name] = sha
			}
		}
		return m, nil
	}
	all, err := list()
	if err != nil {
		return nil, nil, err
	}
	in, err := list("--merged=" + waveTip)
	if err != nil {
		return nil, nil, err
	}
	local, merged = map[string]string{}, map[string]bool{}
	for _, b := range branches {
		if sha, ok := all["refs/heads/"+b]; ok {
			local[b] = sha
		}
	}
	for _, sha := range in {
		merged[sha] = true
	}
	for b, sha := range remote {
		// The remote tip is merged when the fetched copy is that tip and
		// merged; a branch that moved since ls-remote is kept.
		if in[r.tracking(b)] != sha {
			delete(merged, sha)
		}
	}
	return local, merged, nil
}

// deleteLocalBranches deletes each branch at its tip in local, in one
// update-ref transaction; a transaction refused (a branch moved meanwhile)
// is done one branch at a time, so the others still go.
func (r *Repo) deleteLocalBranches(ctx context.Context, branches []string, local map[string]string) error {
	var b strings.Builder
	var each []string
	for _, name := range branches {
		if tip, ok := local[name]; ok {
			fmt.Fprintf(&b, "delete refs/heads/%s %s\n", name, tip)
			each = append(each, name)
		}
	}
	if len(each) == 0 {
		return nil
	}
	err := r.retryLocked(ctx, func() error {
		_, err := r.do(ctx, call{dir: r.Dir, args: []string{"update-ref", "--stdin"}, stdin: b.String()})
		return err
	})
	if err == nil {
		return nil
	}
	r.log.Info("branch deletions: one transaction refused; one at a time", "branches", len(each), "err", err)
	var errs []string
	for _, name := range each {
		if err := r.deleteLocalBranch(ctx, name, local[name]); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("safe delete: %s", strings.Join(errs, "; "))
	}
	return nil
}

// deleteRemoteBranches deletes each branch on the remote under a lease of
// its tip in remote, in one push; failed names those it kept.
func (r *Repo) deleteRemoteBranches(ctx context.Context, branches []string, remote map[string]string) (map[string]bool, error) {
	args := []string{"push", "--porcelain"}
	var specs, tracking []string
	failed := map[string]bool{}
	for _, b := range branches {
		if tip, ok := remote[b]; ok {
			args = append(args, "--force-with-lease=refs/heads/"+b+":"+tip)
			specs = append(specs, ":refs/heads/"+b)
			failed[b] = true
		}
	}
	if len(specs) == 0 {
		return failed, nil
	}
	args = append(append(args, r.Remote), specs...)
	r.fetchMu.Lock()
	out, err := r.git(ctx, r.Dir, args...)
	r.fetchMu.Unlock()
	status := parsePushAll(out)
	var refused []string
	for b := range failed {
		if res, ok := status["refs/heads/"+b]; ok && res.flag != '!' {
			failed[b] = false
			tracking = append(tracking, r.tracking(b))
			continue
		}
		refused = append(refused, b)
	}
	r.dropTracking(ctx, tracking)
	if len(refused) > 0 {
		return failed, fmt.Errorf("safe delete on %s: %w: %s (%v)", r.Remote, ErrRejected, sanitize(strings.Join(refused, ", ")), err)
	}
	return failed, nil
}

// dropTracking deletes our tracking refs of branches deleted on the
// remote (push does it too where the clone's fetch refspec covers them).
func (r *Repo) dropTracking(ctx context.Context, refs []string) {
	if len(refs) == 0 {
		return
	}
	var b strings.Builder
	for _, ref := range refs {
		fmt.Fprintf(&b, "delete %s\n", ref)
	}
	if _, err := r.do(ctx, call{dir: r.Dir, args: []string{"update-ref", "--stdin"}, stdin: b.String()}); err != nil {
		r.log.Debug("tracking refs not dropped", "refs", len(refs), "err", err)
	}
}
