package supervisor

import (
	"context"
	"errors"
	"fmt"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
)

// ensureWorktree is gitops.EnsureWorktree, taking over a worktree a
// finished run kept. A finished run keeps the worktree of an issue it did
// not merge (a question, a park: the work lives there), and a later run
// whose wave branch has the same name (the first merged nothing, so its
// empty wave branch was deleted) wants the same worker branch, which git
// lets one worktree check out at a time. The later run moves the kept
// worktree to its own path, uncommitted work included, and goes on there.
// A branch checked out anywhere else stays an error.
func (c *localCheckout) ensureWorktree(ctx context.Context, n int, wt, branch string) (bool, error) {
	resumed, err := c.git.EnsureWorktree(ctx, wt, branch, c.waveRef())
	var co *gitops.CheckedOutError
	if !errors.As(err, &co) || !c.keptBy(n, co.Path) {
		return resumed, err
	}
	if err := c.git.MoveWorktree(ctx, co.Path, wt); err != nil {
		return false, fmt.Errorf("take over the worktree an earlier run kept: %w", err)
	}
	c.say("#%d: took over the worktree an earlier run kept (%s), with any uncommitted work in it", n, co.Path)
	return c.git.EnsureWorktree(ctx, wt, branch, c.waveRef())
}

// keptByFinishedRun: path is issue n's worktree in a finished run of this
// lane other than this one.
func (s *Supervisor) keptByFinishedRun(n int, path string) bool {
	dirs, err := runlog.List(s.o.Layout.StateDir)
	if err != nil {
		return false
	}
	for _, dir := range dirs {
		r, _, err := runlog.Read(dir)
		if err != nil || !r.Finished || r.Info.ID == s.run().Info.ID {
			continue
		}
		if is, ok := r.Issues[n]; ok && is.Worktree != "" && is.State != backlog.StateMerged && gitops.SamePath(is.Worktree, path) {
			return true
		}
	}
	return false
}
