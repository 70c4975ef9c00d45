package gitops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// worktree is one entry of git worktree list --porcelain.
type worktree struct {
	Path     string
	Head     string
	Branch   string // full ref, "" when detached
	Locked   bool
	Prunable bool
}

func (r *Repo) worktrees(ctx context.Context) ([]worktree, error) {
	out, err := r.git(ctx, r.Dir, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, fmt.Errorf("list worktrees: %w", err)
	}
	return parseWorktrees(out), nil
}

// parseWorktrees reads NUL-separated attribute lines; an empty field ends
// a record.
func parseWorktrees(out string) []worktree {
	var list []worktree
	var cur *worktree
	for _, f := range strings.Split(out, "\x00") {
		k, v, _ := strings.Cut(f, " ")
		switch {
		case f == "":
			cur = nil
		case k == "worktree":
			list = append(list, worktree{Path: v})
			cur = &list[len(list)-1]
		case cur == nil:
		case k == "HEAD":
			cur.Head = v
		case k == "branch":
			cur.Branch = v
		case k == "locked":
			cur.Locked = true
		case k == "prunable":
			cur.Prunable = true
		}
	}
	return list
}

// canonical resolves symlinks in p (or in its parent, when p is missing)
// so paths git recorded compare equal to the ones we were given.
func canonical(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// EnsureWorktree makes path a worktree on branch. A branch that already
// exists is checked out as it is (its commits kept, never reset or
// deleted); a missing branch is created from start. A registered worktree
// whose directory was deleted is pruned and added again; a live worktree
// of branch at path is reused. resumed reports that the branch existed.
func (r *Repo) EnsureWorktree(ctx context.Context, path, branch, start string) (bool, error) {
	if err := r.checkBranch(ctx, branch); err != nil {
		return false, err
	}
	want, ref := canonical(path), "refs/heads/"+branch
	if fresh, err := r.addFresh(ctx, want, branch, start); fresh || err != nil {
		return false, err
	}
	list, err := r.worktrees(ctx)
	if err != nil {
		return false, err
	}
	prune := false
	for _, w := range list {
		same := canonical(w.Path) == want
		switch {
		case same && exists(w.Path) && w.Branch == ref:
			if !checkedOut(w.Path) {
				// Added by addFresh, which was stopped before its checkout.
				return true, r.checkOutNew(ctx, w.Path)
			}
			return true, nil
		case same && exists(w.Path):
			return false, fmt.Errorf("worktree %s is on %s, not %s", want, sanitize(w.Branch), sanitize(branch))
		case same:
			prune = true
		case w.Branch == ref && exists(w.Path):
			return false, &CheckedOutError{Branch: branch, Path: w.Path}
		case w.Branch == ref:
			prune = true
		}
	}
	if prune {
		if _, err := r.git(ctx, r.Dir, "worktree", "prune"); err != nil {
			return false, fmt.Errorf("worktree for %s: prune: %w", sanitize(branch), err)
		}
	}
	if entries, err := os.ReadDir(want); err == nil && len(entries) > 0 {
		return false, fmt.Errorf("worktree for %s: %s exists and is not a worktree of this repository; not touching it", sanitize(branch), want)
	}
	_, resumed, err := r.localRef(ctx, ref)
	if err != nil {
		return false, err
	}
	args := []string{"worktree", "add", "--quiet", want, branch}
	if !resumed {
		if start == "" || strings.HasPrefix(start, "-") {
			return false, fmt.Errorf("worktree for %s: invalid start %q", sanitize(branch), start)
		}
		args = []string{"worktree", "add", "--quiet", "--no-track", "-b", branch, want, start}
	}
	if _, err := r.git(ctx, r.Dir, args...); err != nil {
		return false, fmt.Errorf("worktree for %s at %s: %w", sanitize(branch), want, err)
	}
	return resumed, nil
}

// addFresh is EnsureWorktree's first try for the usual case, a new
// branch at a path nothing is at: one worktree add, which refuses by
// itself everything the careful path looks for first (a branch that
// exists, a path registered or in use). false, nil is "not that case":
// the careful path then looks and decides.
//
// The add itself is --no-checkout, so the worktree lock (wtMu) is held
// only while git registers the worktree; the checkout, most of an add's
// time, runs after it, beside other starts (checkOutNew).
func (r *Repo) addFresh(ctx context.Context, want, branch, start string) (bool, error) {
	if start == "" || strings.HasPrefix(start, "-") {
		return false, nil
	}
	if _, err := os.Lstat(want); !errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if _, err := r.git(ctx, r.Dir, "worktree", "add", "--quiet", "--no-checkout", "--no-track", "-b", branch, want, start); err != nil {
		r.log.Debug("worktree: not a fresh add; looking first", "branch", branch, "path", want, "err", err)
		return false, nil
	}
	return true, r.checkOutNew(ctx, want)
}

// checkOutNew does for a worktree added with --no-checkout what git's own
// add does next: `reset --hard` in it, then the post-checkout hook with
// git's arguments (a null old head, the new head, 1 for a branch). A
// worktree is never left half checked out for a worker: the index is
// written last, and a worktree without one (a kill before it) is checked
// out when EnsureWorktree next finds it.
func (r *Repo) checkOutNew(ctx context.Context, dir string) error {
	if _, err := r.git(ctx, dir, "reset", "--hard", "--quiet", "--no-recurse-submodules"); err != nil {
		return fmt.Errorf("check out the new worktree %s: %w", dir, err)
	}
	if !r.mayHaveHook(ctx, "post-checkout") {
		return nil
	}
	head, err := r.revParse(ctx, dir, "HEAD")
	if err != nil {
		return fmt.Errorf("check out the new worktree %s: %w", dir, err)
	}
	if _, err := r.git(ctx, dir, "hook", "run", "--ignore-missing", "post-checkout", "--", strings.Repeat("0", len(head)), head, "1"); err != nil {
		return fmt.Errorf("new worktree %s: post-checkout hook: %w", dir, err)
	}
	return nil
}

// mayHaveHook: the repository may have an executable hook of that name.
// Where hooks live is asked once per Repo (rev-parse --git-path, which
// knows core.hooksPath); a place it cannot name for every worktree (a
// relative core.hooksPath) leaves the answer to git each time: true.
func (r *Repo) mayHaveHook(ctx context.Context, name string) bool {
	r.mu.Lock()
	if r.hooksDir == "" {
		r.hooksDir = "?"
		if out, err := r.line(ctx, "rev-parse", "--git-path", "hooks"); err == nil {
			switch {
			case filepath.IsAbs(out):
				r.hooksDir = out
			case out == ".git/hooks" || strings.HasPrefix(out, ".git/"):
				r.hooksDir = filepath.Join(r.Dir, out)
			}
		}
	}
	dir := r.hooksDir
	r.mu.Unlock()
	if dir == "?" {
		return true
	}
	fi, err := os.Stat(filepath.Join(dir, name))
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// checkedOut: the linked worktree at dir has an index (git writes it
// last when it checks a worktree out). Unreadable is taken as checked out.
func checkedOut(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return true // a directory (not a linked worktree), or unreadable
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return true
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	_, err = os.Stat(filepath.Join(gitdir, "index"))
	return !errors.Is(err, fs.ErrNotExist)
}

// RemoveWorktree removes the worktree at path. It refuses one with
// uncommitted or untracked files (git's own check: work is never thrown
// away); a path that is not a worktree, or whose directory is gone, is nil.
func (r *Repo) RemoveWorktree(ctx context.Context, path string) error {
	want := canonical(path)
	list, err := r.worktrees(ctx)
	if err != nil {
		return err
	}
	for _, w := range list {
		if canonical(w.Path) != want {
			continue
		}
		if !exists(w.Path) {
			_, err := r.git(ctx, r.Dir, "worktree", "prune")
			return err
		}
		if _, err := r.git(ctx, r.Dir, "worktree", "remove", want); err != nil {
			return fmt.Errorf("remove worktree %s: %w", want, err)
		}
		return nil
	}
	return nil
}

// scratchWorktree checks commit out, detached, in a new temporary
// directory and returns it with the function that removes it.
func (r *Repo) scratchWorktree(ctx context.Context, commit string) (string, func(), error) {
	parent, err := os.MkdirTemp(r.scratchDir, scratchPattern())
	if err != nil {
		return "", nil, fmt.Errorf("scratch worktree: %w", err)
	}
	dir := filepath.Join(parent, "tree")
	cleanup := func() {
		// The caller's context may be the reason we are cleaning up.
		cctx := context.WithoutCancel(ctx)
		_, rmErr := r.git(cctx, r.Dir, "worktree", "remove", "--force", "--force", dir)
		if err := os.RemoveAll(parent); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.log.Warn("scratch worktree: delete failed", "dir", parent, "err", err)
		}
		if rmErr != nil {
			r.log.Warn("scratch worktree: remove failed, deleted and pruned", "dir", dir, "err", rmErr)
			_, _ = r.git(cctx, r.Dir, "worktree", "prune")
		}
	}
	if _, err := r.git(ctx, r.Dir, "worktree", "add", "--quiet", "--detach", dir, commit); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("scratch worktree at %s: %w", short(commit), err)
	}
	return dir, cleanup, nil
}
