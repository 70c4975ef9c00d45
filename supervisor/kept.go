package supervisor

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// takeOverKeptWorktree: a finished run keeps the worktree of an issue it
// did not merge (a question, a park: the work lives there), and a later
// run whose wave branch has the same name (the first merged nothing, so
// its empty wave branch was deleted) wants the same worker branch, which
// git lets one worktree check out at a time. The later run moves the kept
// worktree to its own path, uncommitted work included, and goes on there.
// A worktree not kept by a finished run of this lane is left alone (and
// EnsureWorktree says where the branch is checked out).
func (s *Supervisor) takeOverKeptWorktree(ctx context.Context, n int, branch, wt string) error {
	at, err := s.o.Git.WorktreeFor(ctx, branch)
	if err != nil || at == "" || samePath(at, wt) {
		return err
	}
	if !s.keptByFinishedRun(n, at) {
		return nil
	}
	if err := s.o.Git.MoveWorktree(ctx, at, wt); err != nil {
		return fmt.Errorf("#%d: take over the worktree an earlier run kept: %w", n, err)
	}
	s.printf("#%d: took over the worktree an earlier run kept (%s), with any uncommitted work in it", n, at)
	return nil
}

// keptByFinishedRun: path is issue n's worktree in a finished run of this
// lane other than this one.
func (s *Supervisor) keptByFinishedRun(n int, path string) bool {
	dirs, err := ListRuns(s.o.Layout.StateDir)
	if err != nil {
		return false
	}
	for _, dir := range dirs {
		r, _, err := ReadRun(dir)
		if err != nil || !r.Finished || r.Info.ID == s.run().Info.ID {
			continue
		}
		if is, ok := r.Issues[n]; ok && is.Worktree != "" && is.State != backlog.StateMerged && samePath(is.Worktree, path) {
			return true
		}
	}
	return false
}

func samePath(a, b string) bool {
	ea, errA := filepath.EvalSymlinks(a)
	eb, errB := filepath.EvalSymlinks(b)
	if errA == nil && errB == nil {
		return ea == eb
	}
	return filepath.Clean(a) == filepath.Clean(b)
}
