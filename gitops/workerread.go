package gitops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/wave-orchestrator/wave-orchestrator/internal/fanout"
)

// Reading a worker's checkout without running git in it (workerclone.go
// says why): upload-pack for its refs and commits, and the lens for its
// files.

// ErrNotSafe: a checkout holds work no ref of this clone has, so it was
// not removed.
var ErrNotSafe = errors.New("work would be lost")

// lens is how this clone looks at a worker checkout's files: this
// clone's git directory and configuration, the checkout as the work
// tree, a copy of its index, its own objects as an extra store to read.
type lens struct {
	dir     string // the checkout
	objects string // its object store; "" for a worktree of this clone (shared)
	index   string // its index file
}

// lensOf is the lens of the checkout at dir.
func (r *Repo) lensOf(dir string) (lens, error) {
	switch kind, gitdir := inspectCheckout(dir); kind {
	case kindClone:
		g := filepath.Join(dir, ".git")
		return lens{dir: dir, objects: filepath.Join(g, "objects"), index: filepath.Join(g, "index")}, nil
	case kindWorktree:
		if filepath.Dir(gitdir) != filepath.Join(r.common, "worktrees") {
			return lens{}, &CheckoutError{Dir: dir, Err: fmt.Errorf("its .git names %s, no worktree of this clone", gitdir)}
		}
		return lens{dir: dir, index: filepath.Join(gitdir, "index")}, nil
	case kindNone:
		return lens{}, fmt.Errorf("worker checkout %s: %w", dir, os.ErrNotExist)
	}
	return lens{}, &CheckoutError{Dir: dir, Err: errors.New("not a checkout of a worker")}
}

// readEnv lets a call read the checkout's objects; never given to a call
// that writes objects (git would then freshen the worker's copy instead
// of writing its own, and this clone would lack it).
func (l lens) readEnv() []string {
	if l.objects == "" {
		return nil
	}
	return []string{"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + l.objects}
}

// tree is the global options that make a call look at the checkout's
// files from this clone's git directory.
func (r *Repo) treeArgs(l lens, args ...string) []string {
	return append([]string{"--git-dir=" + r.common, "--work-tree=" + l.dir}, args...)
}

// CheckoutAhead counts the commits of head (the checkout's HEAD, as
// CheckoutHead read it) not in base, a ref or commit of this clone.
func (r *Repo) CheckoutAhead(ctx context.Context, dir, head, base string) (int, error) {
	l, err := r.lensOf(dir)
	if err != nil {
		return 0, err
	}
	if !isHex(head) || base == "" || strings.HasPrefix(base, "-") {
		return 0, fmt.Errorf("commits ahead in %s: invalid %q..%q", dir, base, head)
	}
	out, err := r.do(ctx, call{dir: r.Dir, args: []string{"rev-list", "--count", base + ".." + head}, env: l.readEnv()})
	if err != nil {
		return 0, checkoutErr(dir, fmt.Errorf("commits ahead of %s: %w", sanitize(base), err))
	}
	n, err := strconv.Atoi(firstLine(out))
	if err != nil {
		return 0, fmt.Errorf("commits ahead in %s: %q is not a count", dir, firstLine(out))
	}
	if n > 0 && r.noCommonHistory(ctx, base, head, l.readEnv()) {
		return 0, &CheckoutError{Dir: dir, Err: fmt.Errorf("its HEAD %s: %w", short(head), ErrNoCommonHistory)}
	}
	return n, nil
}

// CheckoutState is a worker checkout's HEAD and its uncommitted files
// (changed, staged or untracked and not ignored), read through the lens.
func (r *Repo) CheckoutState(ctx context.Context, dir string) (head string, dirty int, err error) {
	l, err := r.lensOf(dir)
	if err != nil {
		return "", 0, err
	}
	if head, err = r.CheckoutHead(ctx, dir); err != nil {
		return "", 0, err
	}
	for _, fromHead := range []bool{false, true} {
		index, done, ierr := r.lensIndex(ctx, l, head, fromHead, true)
		if ierr != nil {
			return head, 0, checkoutErr(dir, ierr)
		}
		dirty, err = r.lensDirty(ctx, l, head, index)
		done()
		if err == nil {
			return head, dirty, nil
		}
	}
	return head, 0, checkoutErr(dir, fmt.Errorf("dirty files: %w", err))
}

// lensDirty counts the files of the checkout that differ from head or
// are untracked, with index as its index.
func (r *Repo) lensDirty(ctx context.Context, l lens, head, index string) (int, error) {
	env := append(l.readEnv(), "GIT_INDEX_FILE="+index)
	changed, err := r.do(ctx, call{dir: r.Dir, args: r.treeArgs(l, "diff-index", "--name-only", "-z", head, "--"), env: env})
	if err != nil {
		return 0, err
	}
	untracked, err := r.do(ctx, call{dir: r.Dir, args: r.treeArgs(l, "ls-files", "-z", "--others", "--exclude-standard"), env: env})
	if err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	for _, p := range append(splitNUL(changed), splitNUL(untracked)...) {
		seen[p] = true
	}
	return len(seen), nil
}

// lensIndex is a private index for looking at the checkout: a copy of
// its own (its stat data spares hashing unchanged files), or, fromHead
// or when that cannot be read, one made from head's tree (objects: head
// may be in the worker's store only). done removes it. A copy git cannot
// read (a split index, a newer format) fails the call that uses it; the
// caller then asks again fromHead.
func (r *Repo) lensIndex(ctx context.Context, l lens, head string, fromHead, objects bool) (string, func(), error) {
	tmp, err := os.MkdirTemp("", "wave-lens-")
	if err != nil {
		return "", nil, fmt.Errorf("look at %s: %w", l.dir, err)
	}
	done := func() { os.RemoveAll(tmp) }
	index := filepath.Join(tmp, "index")
	if !fromHead && r.copyIndex(ctx, l, index) {
		return index, done, nil
	}
	var env []string
	if objects {
		env = l.readEnv()
	}
	if _, err := r.do(ctx, call{dir: r.Dir, args: []string{"read-tree", head}, env: append(env, "GIT_INDEX_FILE="+index)}); err != nil {
		done()
		return "", nil, fmt.Errorf("look at %s: index from %s: %w", l.dir, short(head), err)
	}
	return index, done, nil
}

// maxIndex bounds the index file copied from a worker's checkout.
const maxIndex = 1 << 30

// copyIndex copies the checkout's index to index, read inside the
// checkout only, and keeps it only when every path it lists is one git
// would write (safeIndexPath): a forged entry naming a file out of the
// work tree would be hashed into this clone by the next `git add`.
func (r *Repo) copyIndex(ctx context.Context, l lens, index string) bool {
	var b []byte
	if l.objects != "" {
		root, err := os.OpenRoot(l.dir)
		if err != nil {
			return false
		}
		b, err = readSmall(root, filepath.Join(".git", "index"), maxIndex)
		root.Close()
		if err != nil {
			return false
		}
	} else if b, _ = os.ReadFile(l.index); b == nil { // a worktree of this clone: its index is in this clone
		return false
	}
	if os.WriteFile(index, b, 0o600) != nil {
		return false
	}
	out, err := r.do(ctx, call{dir: r.Dir, args: []string{"ls-files", "-z", "--cached"}, env: []string{"GIT_INDEX_FILE=" + index}})
	if err != nil {
		return false
	}
	for _, p := range splitNUL(out) {
		if !safeIndexPath(p) {
			r.log.Warn("worker checkout: its index lists a path out of its work tree; looked at from its HEAD instead", "dir", l.dir, "path", sanitize(p))
			return false
		}
	}
	return true
}

// FetchFromCheckout brings the checkout's refs/heads/<branch> into this
// clone's refs/heads/<branch>, forcibly (the worker may have rewritten
// it; this clone's copy is only ever the worker's): read from its files
// and sent from a copy of its objects (fetchFromView), so nothing its git
// names outside it is read.
// ok is false when the checkout has no such branch (nothing changes). A
// worktree of this clone (an older version's) shares the branch already.
func (r *Repo) FetchFromCheckout(ctx context.Context, dir, branch string) (sha string, ok bool, err error) {
	if err := r.checkBranch(ctx, branch); err != nil {
		return "", false, err
	}
	l, err := r.lensOf(dir)
	if err != nil {
		return "", false, err
	}
	ref := "refs/heads/" + branch
	if l.objects != "" {
		sha, ok, err := readRef(dir, ref)
		if err != nil {
			return "", false, checkoutErr(dir, fmt.Errorf("branch %s: %w", sanitize(branch), err))
		}
		if !ok {
			return "", false, nil
		}
		if err := r.fetchFromView(ctx, dir, sha, ref); err != nil {
			return "", false, fmt.Errorf("fetch %s: %w", sanitize(branch), err)
		}
	}
	return r.localRef(ctx, ref)
}

// SnapshotCheckout is Snapshot for a worker's checkout: the commit (on
// its HEAD, fetched into this clone first) of its whole state, staged,
// unstaged and untracked files, at ref. The checkout is not touched, and
// every object of the commit is in this clone.
func (r *Repo) SnapshotCheckout(ctx context.Context, dir, ref, message string) (string, error) {
	if err := r.checkFullRef(ctx, ref); err != nil {
		return "", err
	}
	l, err := r.lensOf(dir)
	if err != nil {
		return "", err
	}
	head, err := r.CheckoutHead(ctx, dir)
	if err != nil {
		return "", err
	}
	if l.objects != "" {
		// HEAD's commits into this clone, held by ref until the snapshot
		// replaces it there.
		if err := r.fetchFromView(ctx, dir, head, ref); err != nil {
			return "", fmt.Errorf("snapshot %s: fetch its HEAD: %w", dir, err)
		}
	}
	tree, err := r.lensTree(ctx, l, head)
	if err != nil {
		return "", checkoutErr(dir, err)
	}
	if message == "" {
		message = "wave-orchestrator snapshot"
	}
	out, err := r.do(ctx, call{dir: r.Dir, args: []string{"commit-tree", "--no-gpg-sign", tree, "-p", head}, stdin: message, env: toolIdentity()})
	if err != nil {
		return "", fmt.Errorf("snapshot %s: commit-tree: %w", dir, err)
	}
	commit := firstLine(out)
	if _, err := r.git(ctx, r.Dir, "update-ref", "-m", "wave-orchestrator snapshot", ref, commit); err != nil {
		return "", fmt.Errorf("snapshot %s: update %s: %w", dir, ref, err)
	}
	return commit, nil
}

// lensTree writes the tree of the checkout's whole state into this
// clone: its files added over a copy of its index. An entry whose object
// only the worker's store has (staged, never committed) fails
// write-tree: those files are hashed again here from the checkout, and
// the tree written again.
func (r *Repo) lensTree(ctx context.Context, l lens, head string) (string, error) {
	index, done, err := r.lensIndex(ctx, l, head, false, false)
	if err != nil {
		return "", err
	}
	defer done()
	env := []string{"GIT_INDEX_FILE=" + index, "GIT_LITERAL_PATHSPECS=1"}
	if _, err := r.do(ctx, call{dir: r.Dir, args: r.treeArgs(l, "add", "-A"), env: env}); err != nil {
		return "", fmt.Errorf("snapshot %s: add: %w", l.dir, err)
	}
	tree, err := r.do(ctx, call{dir: r.Dir, args: r.treeArgs(l, "write-tree"), env: env})
	if err == nil {
		return firstLine(tree), nil
	}
	missing, merr := r.missingBlobs(ctx, env)
	if merr != nil || len(missing) == 0 {
		return "", fmt.Errorf("snapshot %s: write-tree: %w", l.dir, errors.Join(err, merr))
	}
	stdin := strings.Join(missing, "\x00") + "\x00"
	if _, err := r.do(ctx, call{dir: r.Dir, args: r.treeArgs(l, "add", "--renormalize", "-f", "--pathspec-from-file=-", "--pathspec-file-nul"),
		env: env, stdin: stdin}); err != nil {
		return "", fmt.Errorf("snapshot %s: add what only the worker's store has: %w", l.dir, err)
	}
	if tree, err = r.do(ctx, call{dir: r.Dir, args: r.treeArgs(l, "write-tree"), env: env}); err != nil {
		return "", fmt.Errorf("snapshot %s: write-tree: %w", l.dir, err)
	}
	return firstLine(tree), nil
}

// missingBlobs are the paths of the index env names whose blobs this
// clone lacks.
func (r *Repo) missingBlobs(ctx context.Context, env []string) ([]string, error) {
	out, err := r.do(ctx, call{dir: r.Dir, args: []string{"ls-files", "--stage", "-z"}, env: env})
	if err != nil {
		return nil, err
	}
	var ids, paths []string
	for _, e := range splitNUL(out) {
		meta, p, ok := strings.Cut(e, "\t")
		f := strings.Fields(meta)
		if ok && len(f) == 3 && f[0] != "160000" {
			ids, paths = append(ids, f[1]), append(paths, p)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	check, err := r.do(ctx, call{dir: r.Dir, args: []string{"cat-file", "--batch-check"}, stdin: strings.Join(ids, "\n") + "\n"})
	if err != nil {
		return nil, err
	}
	var missing []string
	for i, l := range strings.Split(strings.TrimSuffix(check, "\n"), "\n") {
		if i < len(paths) && strings.HasSuffix(l, " missing") {
			missing = append(missing, paths[i])
		}
	}
	return missing, nil
}

// CheckoutRemoval is one checkout RemoveCheckouts may remove: only when
// nothing is uncommitted in it and its HEAD is in one of Keep (refs or
// commits of this clone). Branch, when set: a HEAD at this clone's copy
// of it is safe, and one elsewhere has Branch fetched from the checkout
// first (FetchFromCheckout), so commits made there since are kept.
type CheckoutRemoval struct {
	Dir    string
	Keep   []string
	Branch string
}

// RemoveCheckouts removes worker checkouts whose work is safe in this
// clone, up to width at once; errs holds why each one that stayed
// stayed (ErrNotSafe: work only it has). A checkout already gone is
// removed. A worktree an older version made goes with git's own remove.
func (r *Repo) RemoveCheckouts(ctx context.Context, list []CheckoutRemoval, width int) map[string]error {
	errs := map[string]error{}
	var mu sync.Mutex
	fanout.Each(len(list), width, func(i int) {
		if err := r.removeCheckout(ctx, list[i]); err != nil {
			mu.Lock()
			errs[list[i].Dir] = err
			mu.Unlock()
		}
	})
	return errs
}

// RemoveCheckout is RemoveCheckouts for one, keep its Keep.
func (r *Repo) RemoveCheckout(ctx context.Context, dir string, keep ...string) error {
	return r.removeCheckout(ctx, CheckoutRemoval{Dir: dir, Keep: keep})
}

func (r *Repo) removeCheckout(ctx context.Context, c CheckoutRemoval) error {
	kind, _ := inspectCheckout(c.Dir)
	switch kind {
	case kindNone:
		return nil
	case kindWorktree:
		return r.RemoveWorktree(ctx, c.Dir)
	case kindOther:
		return fmt.Errorf("remove %s: not a worker checkout", c.Dir)
	case kindClone:
		if err := r.safeToRemove(ctx, c); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(c.Dir); err != nil {
		return fmt.Errorf("remove %s: %w", c.Dir, err)
	}
	return nil
}

// safeToRemove: nothing uncommitted in the checkout, and its HEAD in one
// of c.Keep — after its branch, when it moved, is fetched.
func (r *Repo) safeToRemove(ctx context.Context, c CheckoutRemoval) error {
	head, dirty, err := r.CheckoutState(ctx, c.Dir)
	if err != nil {
		return fmt.Errorf("remove %s: %w", c.Dir, err)
	}
	if dirty > 0 {
		return fmt.Errorf("remove %s: %w: %d uncommitted file(s)", c.Dir, ErrNotSafe, dirty)
	}
	if c.Branch != "" {
		mine, _, err := r.localRef(ctx, "refs/heads/"+c.Branch)
		if err == nil && mine == head {
			return nil // its HEAD is the branch this clone has
		}
		if _, _, err := r.FetchFromCheckout(ctx, c.Dir, c.Branch); err != nil {
			return fmt.Errorf("remove %s: %w", c.Dir, err)
		}
	}
	for _, k := range c.Keep {
		if _, ok, err := r.localRef(ctx, k); err != nil || !ok {
			continue
		}
		if n, err := r.CheckoutAhead(ctx, c.Dir, head, k); err == nil && n == 0 {
			return nil
		}
	}
	return fmt.Errorf("remove %s: %w: its HEAD %s is in none of %s", c.Dir, ErrNotSafe, short(head), sanitize(strings.Join(c.Keep, ", ")))
}

// DiffCheckout is DiffText from base to the checkout's branch as the
// checkout has it now (its own objects read, not copied).
func (r *Repo) DiffCheckout(ctx context.Context, dir, branch, base string, max int) (string, error) {
	if err := r.checkBranch(ctx, branch); err != nil {
		return "", err
	}
	l, err := r.lensOf(dir)
	if err != nil {
		return "", err
	}
	ref := "refs/heads/" + branch
	var tip string
	var ok bool
	if l.objects != "" {
		tip, ok, err = readRef(dir, ref)
	} else {
		tip, ok, err = r.localRef(ctx, ref) // a worktree of this clone shares its branches
	}
	if err != nil {
		return "", checkoutErr(dir, fmt.Errorf("branch %s: %w", sanitize(branch), err))
	}
	if !ok {
		return "", fmt.Errorf("branch %s: not in %s", sanitize(branch), dir)
	}
	diff, err := r.do(ctx, call{dir: r.Dir, args: []string{"diff", "--stat", "--patch", "--no-color", "--no-ext-diff", base + "..." + tip},
		env: l.readEnv()})
	if err != nil {
		return "", checkoutErr(dir, fmt.Errorf("diff %s...%s: %w", sanitize(base), short(tip), err))
	}
	if len(diff) > max {
		diff = diff[:max] + fmt.Sprintf("\n[diff cut at %d bytes of %d]\n", max, len(diff))
	}
	return diff, nil
}

// CheckoutMark names a worker checkout's whole state in one string: its
// HEAD and the tree of its files (staged, unstaged and untracked, not
// ignored), read through the lens with its objects as an extra store.
// Equal marks, no commit and no changed file in between. The tree's new
// blobs are written into this clone (or freshened in the worker's
// store); nothing of the checkout is touched. head is its HEAD.
func (r *Repo) CheckoutMark(ctx context.Context, dir string) (head, mark string, err error) {
	l, err := r.lensOf(dir)
	if err != nil {
		return "", "", err
	}
	if head, err = r.CheckoutHead(ctx, dir); err != nil {
		return "", "", err
	}
	for _, fromHead := range []bool{false, true} {
		index, done, ierr := r.lensIndex(ctx, l, head, fromHead, true)
		if ierr != nil {
			return head, "", checkoutErr(dir, ierr)
		}
		env := append(l.readEnv(), "GIT_INDEX_FILE="+index)
		var tree string
		if _, err = r.do(ctx, call{dir: r.Dir, args: r.treeArgs(l, "add", "-A"), env: env}); err == nil {
			tree, err = r.do(ctx, call{dir: r.Dir, args: r.treeArgs(l, "write-tree"), env: env})
		}
		done()
		if err == nil {
			return head, head + " " + firstLine(tree), nil
		}
	}
	return head, "", checkoutErr(dir, fmt.Errorf("state: %w", err))
}
