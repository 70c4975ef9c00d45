package gitops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// WorktreeFor is the live worktree that has branch checked out, or "".
func (r *Repo) WorktreeFor(ctx context.Context, branch string) (string, error) {
	list, err := r.worktrees(ctx)
	if err != nil {
		return "", err
	}
	for _, w := range list {
		if w.Branch == "refs/heads/"+branch && exists(w.Path) {
			return w.Path, nil
		}
	}
	return "", nil
}

// MoveWorktree moves a linked worktree, its uncommitted work with it, to
// to (which must not exist yet); git keeps its branch checked out there.
func (r *Repo) MoveWorktree(ctx context.Context, from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return fmt.Errorf("move worktree %s: %w", from, err)
	}
	if _, err := r.git(ctx, r.Dir, "worktree", "move", from, to); err != nil {
		return fmt.Errorf("move worktree %s to %s: %w", from, to, err)
	}
	return nil
}
