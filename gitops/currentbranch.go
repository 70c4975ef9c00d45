package gitops

import (
	"context"
	"fmt"
)

// CurrentBranch is the branch checked out in the clone, "" on a detached
// HEAD: what a message tells the user to push.
func (r *Repo) CurrentBranch(ctx context.Context) (string, error) {
	out, err := r.git(ctx, r.Dir, "symbolic-ref", "--quiet", "--short", "HEAD")
	if exitCode(err) == 1 {
		return "", nil // detached
	}
	if err != nil {
		return "", fmt.Errorf("current branch: %w", err)
	}
	return firstLine(out), nil
}
