package gitops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// scratchPrefix begins the name of a scratch worktree's parent directory,
// followed by the pid of the process that made it, so a later process can
// tell one left by a killed process from one in use.
const scratchPrefix = "wave-verify-"

func scratchPattern() string { return scratchPrefix + strconv.Itoa(os.Getpid()) + "-" }

// scratchOwner is the pid in a scratch parent directory's name.
func scratchOwner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, scratchPrefix)
	if !ok {
		return 0, false
	}
	p, _, ok := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(p)
	return pid, ok && err == nil && pid > 0
}

// RemoveStaleScratch removes the scratch (verify) checkouts in the
// scratch directory whose process is no longer alive — a supervisor
// killed during verify — and returns how many. Those of live processes
// (another lane verifying) are left alone. Scratch worktrees an older
// version registered in this clone go the same way.
func (r *Repo) RemoveStaleScratch(ctx context.Context, alive func(pid int) bool) (int, error) {
	n, err := r.removeStaleScratchWorktrees(ctx, alive)
	if err != nil {
		return n, err
	}
	entries, err := os.ReadDir(r.scratchDir)
	if err != nil {
		return n, nil // no scratch directory: nothing left behind
	}
	for _, e := range entries {
		pid, ok := scratchOwner(e.Name())
		if !ok || !e.IsDir() || alive(pid) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(r.scratchDir, e.Name())); err != nil {
			return n, fmt.Errorf("remove stale scratch checkout %s: %w", e.Name(), err)
		}
		n++
	}
	return n, nil
}

// removeStaleScratchWorktrees removes the scratch worktrees of dead
// processes an older version registered in this clone.
func (r *Repo) removeStaleScratchWorktrees(ctx context.Context, alive func(pid int) bool) (int, error) {
	list, err := r.worktrees(ctx)
	if err != nil {
		return 0, err
	}
	root := canonical(r.scratchDir)
	n := 0
	for _, w := range list {
		parent := filepath.Dir(w.Path)
		pid, ok := scratchOwner(filepath.Base(parent))
		if !ok || filepath.Base(w.Path) != "tree" || canonical(filepath.Dir(parent)) != root || alive(pid) {
			continue
		}
		_, rmErr := r.git(ctx, r.Dir, "worktree", "remove", "--force", "--force", w.Path)
		if err := os.RemoveAll(parent); err != nil {
			return n, fmt.Errorf("remove stale scratch worktree %s: %w", parent, err)
		}
		if rmErr != nil {
			if _, err := r.git(ctx, r.Dir, "worktree", "prune"); err != nil {
				return n, fmt.Errorf("remove stale scratch worktree %s: %w", w.Path, err)
			}
		}
		n++
	}
	return n, nil
}
