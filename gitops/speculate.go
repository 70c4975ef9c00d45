package gitops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrStalePrepared: a prepared merge commit (MergeRequest.Prepared) is
// not the merge of the remote wave tip and the worker tip any more, so
// what was verified is not what would land. Nothing was merged.
var ErrStalePrepared = errors.New("the prepared merge is not on the wave branch's tip")

// Candidate is a merge commit made ahead of its landing: the worker
// merged onto Base, which is the wave branch's tip or the would-be merge
// commit of the candidate ahead of it in the merge train
// (docs/merge-gate.md, "The pipeline").
type Candidate struct {
	Base   string // the commit Commit is built on
	Worker string // the worker tip merged
	// Commit is the merge commit, parents (Base, Worker); "" when the
	// worker conflicts with Base or is in it already.
	Commit    string
	Conflicts []string // non-empty: the worker conflicts with Base in these files
	Already   bool     // the worker tip is in Base: there is nothing to merge
	// Verified: Commit is the merge a previous supervisor verified and
	// recorded for its push (the intent ref, pendingRef) before it was
	// stopped; it is not verified again.
	Verified bool
}

// PrepareMerge makes the merge commit of worker on base, as Merge would
// make it on the wave tip, without moving any ref: git merge-tree, then
// commit-tree with parents (base, worker). base is a commit: the wave tip
// the caller last recorded, or the Commit of the candidate ahead. A merge
// of exactly (base, worker) waiting in the intent ref — verified, then
// left unpushed by a killed supervisor — is returned as it is, Verified.
func (r *Repo) PrepareMerge(ctx context.Context, wave, base, worker, message string) (Candidate, error) {
	if err := r.checkBranch(ctx, wave); err != nil {
		return Candidate{}, fmt.Errorf("prepare merge: wave: %w", err)
	}
	if base == "" || strings.HasPrefix(base, "-") || worker == "" || strings.HasPrefix(worker, "-") {
		return Candidate{}, fmt.Errorf("prepare merge: invalid base %q or worker %q", base, worker)
	}
	c := Candidate{}
	var err error
	if c.Base, err = r.revParse(ctx, r.Dir, base+"^{commit}"); err != nil {
		return c, fmt.Errorf("prepare merge: base: %w", err)
	}
	if c.Worker, err = r.revParse(ctx, r.Dir, worker+"^{commit}"); err != nil {
		return c, fmt.Errorf("prepare merge: worker: %w", err)
	}
	if in, err := r.IsAncestor(ctx, c.Worker, c.Base); err != nil || in {
		c.Already = in
		return c, err
	}
	if pending, parents, ok := r.pendingMerge(ctx, wave); ok && slices.Equal(parents, []string{c.Base, c.Worker}) {
		c.Commit, c.Verified = pending, true
		return c, nil
	}
	tree, conflicts, err := r.mergeTree(ctx, c.Base, c.Worker)
	if err != nil || len(conflicts) > 0 {
		c.Conflicts = conflicts
		return c, err
	}
	c.Commit, err = r.commitMerge(ctx, tree, c.Base, c.Worker, message, worker, wave)
	return c, err
}

// pendingMerge is the intent ref's commit and its parents, ok false when
// there is none.
func (r *Repo) pendingMerge(ctx context.Context, wave string) (string, []string, bool) {
	out, err := r.git(ctx, r.Dir, "for-each-ref", "--format=%(objectname) %(parent)", pendingRef(wave))
	f := strings.Fields(out)
	if err != nil || len(f) == 0 {
		return "", nil, false
	}
	return f[0], f[1:], true
}

// commitMerge writes the merge commit of tree with parents (base,
// worker): unsigned (a signing prompt would hang an unattended
// supervisor) and authored by the user, or by the tool where no identity
// is set.
func (r *Repo) commitMerge(ctx context.Context, tree, base, worker, msg, workerName, wave string) (string, error) {
	if msg == "" {
		msg = fmt.Sprintf("Merge %s into %s", workerName, wave)
	}
	out, err := r.do(ctx, call{dir: r.Dir, args: []string{"commit-tree", "--no-gpg-sign", tree, "-p", base, "-p", worker},
		stdin: msg, env: r.mergeIdentity(ctx)})
	if err != nil {
		return "", fmt.Errorf("merge %s: commit-tree: %w", sanitize(workerName), err)
	}
	return firstLine(out), nil
}

// VerifyAt runs fn in a scratch checkout of commit (a repository of its
// own, removed afterwards whatever happens): a failure is ErrVerifyFailed.
func (r *Repo) VerifyAt(ctx context.Context, commit string, fn func(ctx context.Context, dir, commit string) error) error {
	dir, cleanup, err := r.scratchCheckout(ctx, commit)
	if err != nil {
		return err
	}
	defer cleanup()
	if err := fn(ctx, dir, commit); err != nil {
		return fmt.Errorf("%w: %w", ErrVerifyFailed, err)
	}
	return nil
}

// usePrepared checks req.Prepared is the merge of (st.origin, st.worker)
// and records it for its push, as prepare does a merge it made.
func (r *Repo) usePrepared(ctx context.Context, req MergeRequest, st mergeState) (string, error) {
	out, err := r.git(ctx, r.Dir, "rev-list", "--parents", "-n", "1", req.Prepared+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("merge %s: the prepared merge: %w", sanitize(req.Worker), err)
	}
	f := strings.Fields(out)
	if len(f) != 3 || f[1] != st.origin || f[2] != st.worker {
		return "", fmt.Errorf("merge %s: %s on %s, the wave tip %s: %w", sanitize(req.Worker), short(req.Prepared),
			strings.Join(f[min(1, len(f)):], " "), short(st.origin), ErrStalePrepared)
	}
	if st.pending != f[0] {
		if err := r.recordPending(ctx, req.Wave, st, f[0]); err != nil {
			return "", err
		}
	}
	return f[0], nil
}
