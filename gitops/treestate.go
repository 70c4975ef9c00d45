package gitops

import (
	"context"
	"fmt"
)

// WorktreeState names the worktree's whole state in one string: its
// HEAD and the tree of its files as they are (staged, unstaged and
// untracked, not ignored), built in a private copy of the index like
// Snapshot's. Two equal states mean no commit and no changed file in
// between; the worktree's own index and files are not touched.
func (r *Repo) WorktreeState(ctx context.Context, worktree string) (string, error) {
	head, err := r.revParse(ctx, worktree, "HEAD")
	if err != nil {
		return "", fmt.Errorf("state of %s: %w", worktree, err)
	}
	tree, err := r.worktreeTree(ctx, worktree)
	if err != nil {
		return "", err
	}
	return head + " " + tree, nil
}
