package gitops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// CheckedOutError: EnsureWorktree found the branch checked out in another
// live worktree (git lets one worktree have a branch at a time).
type CheckedOutError struct {
	Branch string
	Path   string // where it is checked out
}

func (e *CheckedOutError) Error() string {
	return fmt.Sprintf("worktree for %s: branch is checked out at %s", sanitize(e.Branch), e.Path)
}

// SamePath: a and b name the same place once symlinks are resolved (git
// records resolved paths).
func SamePath(a, b string) bool { return canonical(a) == canonical(b) }

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
