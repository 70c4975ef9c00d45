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

// scratchCheckout checks commit out, detached, in a new temporary
// directory and returns it with the function that removes it. It is a
// repository of its own that borrows this clone's objects (alternates),
// never a worktree of this clone: what runs there (backlog.verify runs
// the worker's code) shares no writable git state with the user's clone.
func (r *Repo) scratchCheckout(ctx context.Context, commit string) (string, func(), error) {
	parent, err := os.MkdirTemp(r.scratchDir, scratchPattern())
	if err != nil {
		return "", nil, fmt.Errorf("scratch checkout: %w", err)
	}
	dir := filepath.Join(parent, "tree")
	cleanup := func() {
		if err := os.RemoveAll(parent); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.log.Warn("scratch checkout: delete failed", "dir", parent, "err", err)
		}
	}
	if _, err := r.git(ctx, parent, "init", "--quiet", "--template=", dir); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("scratch checkout at %s: %w", short(commit), err)
	}
	alt := filepath.Join(dir, ".git", "objects", "info", "alternates")
	if err := os.MkdirAll(filepath.Dir(alt), 0o755); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("scratch checkout: %w", err)
	}
	if err := os.WriteFile(alt, []byte(filepath.Join(r.common, "objects")+"\n"), 0o644); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("scratch checkout: %w", err)
	}
	if _, err := r.git(ctx, dir, "checkout", "--quiet", "--detach", commit); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("scratch checkout at %s: %w", short(commit), err)
	}
	if err := r.checkoutComplete(ctx, dir); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("scratch checkout at %s: %w", short(commit), err)
	}
	return dir, cleanup, nil
}

// checkoutComplete fails when a file of the commit is missing from the
// checkout dir: git checkout says "unable to create file" (a name too
// long for the file system, say) and still exits 0, and a verify there
// would pass a tree without the file the merge then lands.
func (r *Repo) checkoutComplete(ctx context.Context, dir string) error {
	out, err := r.git(ctx, dir, "ls-files", "--deleted", "-z")
	if err != nil {
		return fmt.Errorf("reading the checkout back: %w", err)
	}
	if missing := strings.Split(strings.TrimRight(out, "\x00"), "\x00"); missing[0] != "" {
		return fmt.Errorf("%d file(s) of the commit could not be written (first: %s)", len(missing), sanitize(missing[0]))
	}
	return nil
}
