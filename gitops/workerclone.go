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

// A local backlog worker works in a clone of its own, never in a
// worktree of this clone (docs/security-model.md, "What a worker can
// reach"): a worktree shares the clone's common git directory — its
// hooks, its config, its refs — so whatever a worker wrote there ran
// later in the supervisor's own git calls and stayed in the user's
// clone. A worker's clone borrows this clone's objects read-only (the
// standard alternates file, as `git clone --shared` writes it), so it
// costs a checkout and no copy; everything it writes (commits, refs,
// config, hooks) stays in its own .git.
//
// The supervisor never runs git in a worker's clone once the worker had
// it: it reads the clone the way git treats an untrusted repository as
// safe to read (gitsecurityboundary(7)): through upload-pack (fetch,
// ls-remote), which runs none of the clone's hooks or programs, and by
// looking at its files from a git directory of its own (the "lens":
// this clone's git directory, the worker's files as the work tree, a
// copy of its index, its objects as an extra store), where only our
// configuration names programs. The refs it gives the worker (the wave
// branch) are written as files, inside the clone's directory only.

// workerPushURL is a worker clone's origin push URL: no repository can be
// there (/dev/null is not a directory), so a push through origin fails
// saying so. origin itself (fetch) is this clone: tools and agents expect
// an origin, and fetching from it reads without writing.
const workerPushURL = "/dev/null/workers-do-not-push-the-supervisor-merges-the-branch"

// ObjectsDir is this clone's object directory, as a worker's clone (and a
// verify checkout) borrows it: the path their alternates name.
func (r *Repo) ObjectsDir() string { return filepath.Join(r.common, "objects") }

// WorkerCheckout is a worker's clone as EnsureWorkerClone makes it.
type WorkerCheckout struct {
	Dir    string // where it is (absolute)
	Branch string // the worker branch, checked out there
	Start  string // where a branch this clone lacks starts (a commit)
	// Refs are set in the worker's clone at every Ensure, full ref name
	// to sha (the wave branch as the run last pushed it, so the worker's
	// `git merge <wave>` takes that and nothing else). Failing to set one
	// is logged, not an error: it is the worker's convenience.
	Refs map[string]string
}

// checkoutKind is what a worker checkout's directory holds.
type checkoutKind int

const (
	kindNone     checkoutKind = iota // nothing, or an empty directory
	kindClone                        // a worker clone
	kindHalf                         // a clone made but never checked out (only .git in it)
	kindWorktree                     // a linked worktree of this clone (made by an older version)
	kindOther                        // something that is not ours
)

// inspectCheckout says what dir holds; gitdir is a linked worktree's.
func inspectCheckout(dir string) (kind checkoutKind, gitdir string) {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return kindNone, ""
	}
	if err != nil || !fi.IsDir() {
		return kindOther, ""
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return kindOther, ""
	}
	if len(entries) == 0 {
		return kindNone, ""
	}
	gfi, err := os.Lstat(filepath.Join(dir, ".git"))
	switch {
	case err != nil:
		return kindOther, ""
	case gfi.Mode().IsRegular():
		b, err := os.ReadFile(filepath.Join(dir, ".git"))
		gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if err != nil || !ok {
			return kindOther, ""
		}
		if !filepath.IsAbs(gd) {
			gd = filepath.Join(dir, gd)
		}
		gd = filepath.Clean(gd)
		// git's back-link: a worktree's git dir names the .git file of its
		// checkout. A .git file naming another checkout's git dir (a
		// worker's forgery naming one of the user's worktrees) is not a
		// worktree of this directory, and nothing of it is ever touched.
		back, err := os.ReadFile(filepath.Join(gd, "gitdir"))
		if err != nil || !SamePath(strings.TrimSpace(string(back)), filepath.Join(dir, ".git")) {
			return kindOther, ""
		}
		return kindWorktree, gd
	case !gfi.IsDir():
		return kindOther, ""
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "index")); err != nil && len(entries) == 1 {
		return kindHalf, ""
	}
	return kindClone, ""
}

// EnsureWorkerClone makes wc.Dir the worker's clone on wc.Branch. A
// branch this clone has is checked out as it is (its commits kept); a
// missing one is created here from wc.Start first, so this clone always
// holds the branch the worker starts from. A clone already there is
// taken as it is (a salvage or a rework goes on in the same files); a
// worktree an older version made there becomes a clone, its files and
// index kept; a clone cut off before its checkout is made again; any
// other content is refused. resumed reports that the branch existed.
func (r *Repo) EnsureWorkerClone(ctx context.Context, wc WorkerCheckout) (bool, error) {
	if err := r.checkBranch(ctx, wc.Branch); err != nil {
		return false, err
	}
	if !filepath.IsAbs(wc.Dir) {
		return false, fmt.Errorf("worker clone %q: want an absolute path", wc.Dir)
	}
	kind, gitdir := inspectCheckout(wc.Dir)
	switch kind {
	case kindClone:
		r.setWorkerRefs(wc)
		return true, nil
	case kindWorktree:
		if err := r.convertWorktree(ctx, wc, gitdir); err != nil {
			return false, err
		}
		r.setWorkerRefs(wc)
		return true, nil
	case kindHalf:
		if err := os.RemoveAll(wc.Dir); err != nil {
			return false, fmt.Errorf("worker clone %s: remove the clone cut off before its checkout: %w", wc.Dir, err)
		}
	case kindOther:
		return false, fmt.Errorf("worker clone for %s: %s exists and is not a worker checkout of this repository; not touching it", sanitize(wc.Branch), wc.Dir)
	}
	resumed, err := r.ensureLocalBranch(ctx, wc.Branch, wc.Start)
	if err != nil {
		return false, err
	}
	// Made beside and renamed into place: a kill halfway leaves no half
	// checkout where a worker would work (the clone names this clone's
	// objects by absolute path, so it moves as it is). It is checked out
	// as it is cloned: no hook runs (core.hooksPath), and it has none.
	beside := wc.Dir + ".wave-new"
	if err := os.RemoveAll(beside); err != nil {
		return false, fmt.Errorf("worker clone %s: %w", wc.Dir, err)
	}
	if err := r.cloneFor(ctx, wc.Branch, beside, true); err != nil {
		return false, err
	}
	if err := os.Remove(wc.Dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("worker clone %s: %w", wc.Dir, err)
	}
	if err := os.Rename(beside, wc.Dir); err != nil {
		return false, fmt.Errorf("worker clone %s: %w", wc.Dir, err)
	}
	r.setWorkerRefs(wc)
	return resumed, nil
}

// ensureLocalBranch creates refs/heads/<branch> at start unless it
// exists; existed reports that it did. start is a commit (a sha spares a
// look-up).
func (r *Repo) ensureLocalBranch(ctx context.Context, branch, start string) (bool, error) {
	ref := "refs/heads/" + branch
	if start == "" || strings.HasPrefix(start, "-") {
		if _, ok, err := r.localRef(ctx, ref); err != nil || ok {
			return ok, err
		}
		return false, fmt.Errorf("worker branch %s: invalid start %q", sanitize(branch), start)
	}
	sha := start
	if !isHex(start) {
		var err error
		if sha, err = r.revParse(ctx, r.Dir, start+"^{commit}"); err != nil {
			if _, ok, lerr := r.localRef(ctx, ref); lerr == nil && ok {
				return true, nil
			}
			return false, fmt.Errorf("worker branch %s: %w", sanitize(branch), err)
		}
	}
	// Created only if absent; an existing branch (an earlier run's, or
	// another start's) fails the update and is taken as it is.
	if _, err := r.git(ctx, r.Dir, "update-ref", "-m", "wave-orchestrator: worker branch", ref, sha, ""); err != nil {
		if _, ok, lerr := r.localRef(ctx, ref); lerr == nil && ok {
			return true, nil
		}
		return false, fmt.Errorf("worker branch %s: %w", sanitize(branch), err)
	}
	return false, nil
}

// cloneFor makes dir (empty or missing) a clone of this clone's branch
// as `git clone --shared --single-branch --no-tags` would, without its
// transport (a shell and upload-pack per clone): an empty repository with
// no template (no sample hooks), this clone's objects as its alternates,
// origin this clone with a push URL that cannot be pushed to, the branch
// at this clone's tip of it; checked out or not.
func (r *Repo) cloneFor(ctx context.Context, branch, dir string, checkout bool) error {
	sha, ok, err := r.localRef(ctx, "refs/heads/"+branch)
	if err != nil || !ok {
		return fmt.Errorf("worker clone of %s: the branch is not in this clone: %v", sanitize(branch), err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("worker clone %s: %w", dir, err)
	}
	if _, err := r.git(ctx, filepath.Dir(dir), "init", "--quiet", "--template=", "--initial-branch="+branch, "--", dir); err != nil {
		return fmt.Errorf("worker clone of %s at %s: %w", sanitize(branch), dir, err)
	}
	g := filepath.Join(dir, ".git")
	alt := filepath.Join(g, "objects", "info", "alternates")
	entries := append([]configEntry{
		{"remote.origin.url", r.common}, {"remote.origin.pushurl", workerPushURL},
		{"remote.origin.fetch", "+refs/heads/" + branch + ":refs/remotes/origin/" + branch},
		{"remote.origin.tagopt", "--no-tags"},
		{"branch." + branch + ".remote", "origin"}, {"branch." + branch + ".merge", "refs/heads/" + branch},
	}, r.userIdentity(ctx)...)
	cfg, err := os.OpenFile(filepath.Join(g, "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = cfg.Write(formatEntries(entries))
		err = errors.Join(err, cfg.Close())
	}
	if err == nil {
		err = os.MkdirAll(filepath.Dir(alt), 0o755)
	}
	if err == nil {
		err = os.WriteFile(alt, []byte(filepath.Join(r.common, "objects")+"\n"), 0o644)
	}
	if err == nil {
		err = writeLooseRefs(dir, map[string]string{"refs/heads/" + branch: sha, "refs/remotes/origin/" + branch: sha})
	}
	if err != nil {
		return fmt.Errorf("worker clone of %s at %s: %w", sanitize(branch), dir, err)
	}
	if !checkout {
		return nil
	}
	if _, err := r.git(ctx, dir, "reset", "--hard", "--quiet", "--no-recurse-submodules"); err != nil {
		return fmt.Errorf("check out the worker clone %s: %w", dir, err)
	}
	return nil
}

// setWorkerRefs writes wc.Refs into the worker's clone as loose ref
// files (a loose ref wins over a packed one), each through a temporary
// file and a rename, and only inside wc.Dir: a symbolic link the worker
// made that leads out of its directory is refused (os.Root).
func (r *Repo) setWorkerRefs(wc WorkerCheckout) {
	if len(wc.Refs) == 0 {
		return
	}
	if err := writeLooseRefs(wc.Dir, wc.Refs); err != nil {
		r.log.Warn("worker clone: refs not set", "dir", wc.Dir, "err", err)
	}
}

func writeLooseRefs(dir string, refs map[string]string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	var errs []error
	for ref, sha := range refs {
		if err := preCheckName(ref); err != nil || !strings.HasPrefix(ref, "refs/") || !isHex(sha) {
			errs = append(errs, fmt.Errorf("%s %s: not a ref and a commit", sanitize(ref), sanitize(sha)))
			continue
		}
		name := filepath.Join(".git", filepath.FromSlash(ref))
		tmp := name + ".wave-new"
		err := root.MkdirAll(filepath.Dir(name), 0o755)
		if err == nil {
			err = root.WriteFile(tmp, []byte(sha+"\n"), 0o644)
		}
		if err == nil {
			err = root.Rename(tmp, name)
		}
		if err != nil {
			_ = root.Remove(tmp)
			errs = append(errs, fmt.Errorf("%s: %w", ref, err))
		}
	}
	return errors.Join(errs...)
}

func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// convertWorktree turns the linked worktree an older version made at
// wc.Dir into a worker clone in place: its files stay as they are, its
// index is kept (staged work stays staged), and this clone forgets the
// worktree. Each step is safe to redo after a crash: a clone beside it is
// made again, a worktree record already gone is no loss (the index is
// then rebuilt from HEAD, the files untouched).
func (r *Repo) convertWorktree(ctx context.Context, wc WorkerCheckout, gitdir string) error {
	if filepath.Dir(gitdir) != filepath.Join(r.common, "worktrees") {
		return fmt.Errorf("worker clone for %s: %s is a worktree of another repository; not touching it", sanitize(wc.Branch), wc.Dir)
	}
	beside := wc.Dir + ".wave-new"
	if err := os.RemoveAll(beside); err != nil {
		return fmt.Errorf("convert the worktree %s: %w", wc.Dir, err)
	}
	if _, err := r.ensureLocalBranch(ctx, wc.Branch, wc.Start); err != nil {
		return err
	}
	if err := r.cloneFor(ctx, wc.Branch, beside, false); err != nil {
		return err
	}
	indexed := false
	if b, err := os.ReadFile(filepath.Join(gitdir, "index")); err == nil {
		indexed = os.WriteFile(filepath.Join(beside, ".git", "index"), b, 0o644) == nil
	}
	r.wtMu.Lock()
	err := os.RemoveAll(gitdir)
	r.wtMu.Unlock()
	if err != nil {
		return fmt.Errorf("convert the worktree %s: forget it: %w", wc.Dir, err)
	}
	if err := os.Remove(filepath.Join(wc.Dir, ".git")); err != nil {
		return fmt.Errorf("convert the worktree %s: %w", wc.Dir, err)
	}
	if err := os.Rename(filepath.Join(beside, ".git"), filepath.Join(wc.Dir, ".git")); err != nil {
		return fmt.Errorf("convert the worktree %s: %w", wc.Dir, err)
	}
	_ = os.RemoveAll(beside)
	if !indexed {
		// The index from HEAD, the files untouched: their changes show
		// as unstaged, none is lost.
		if _, err := r.git(ctx, wc.Dir, "reset", "--quiet", "--no-recurse-submodules"); err != nil {
			return fmt.Errorf("convert the worktree %s: index: %w", wc.Dir, err)
		}
	}
	r.log.Info("worker worktree became a clone of its own", "dir", wc.Dir, "branch", wc.Branch)
	return nil
}

// MoveCheckout moves a worker's checkout, its uncommitted work with it,
// to to (which must not exist yet): a clone by renaming its directory (it
// names this clone's objects by absolute path), a worktree of an older
// version with git's own move.
func (r *Repo) MoveCheckout(ctx context.Context, from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return fmt.Errorf("move %s: %w", from, err)
	}
	switch kind, _ := inspectCheckout(from); kind {
	case kindWorktree:
		if _, err := r.git(ctx, r.Dir, "worktree", "move", from, to); err != nil {
			return fmt.Errorf("move worktree %s to %s: %w", from, to, err)
		}
		return nil
	case kindClone:
		if err := os.Rename(from, to); err != nil {
			return fmt.Errorf("move %s: %w", from, err)
		}
		return nil
	}
	return fmt.Errorf("move %s: not a worker checkout", from)
}

// SamePath: a and b name the same place once symlinks are resolved.
func SamePath(a, b string) bool { return canonical(a) == canonical(b) }
