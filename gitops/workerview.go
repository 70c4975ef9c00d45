package gitops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// What git follows in a repository — symbolic links anywhere in .git,
// objects/info/alternates, a .git file — leads wherever its writer
// wants. Git holds a repository safe to fetch from as far as running
// programs goes (gitsecurityboundary(7)), not as far as reading the
// user's other files goes, and the sandbox keeps those from a worker:
// a worker whose clone named another repository of the user's (its
// alternates, a ref linked to one of its branches) had upload-pack copy
// that repository into this clone, where the next worker's borrowed
// objects reach it. So the supervisor reads a worker's refs and object
// files itself, only inside its clone (os.Root), and fetches from a bare
// repository of its own holding copies of them (the view).

// ErrNoCommonHistory: a worker's branch shares no commit with the wave
// branch (an orphan branch): there is nothing to merge it on.
var ErrNoCommonHistory = errors.New("it shares no history with the wave branch")

// noCommonHistory says whether head shares no commit with base (env: the
// lens's, for a head only the worker's store has).
func (r *Repo) noCommonHistory(ctx context.Context, base, head string, env []string) bool {
	_, err := r.do(ctx, call{dir: r.Dir, args: []string{"merge-base", base, head}, env: env})
	return exitCode(err) == 1
}

// ErrRefusedObject: what a worker made holds an object git's checks of
// a fetch refuse (fsckStrict): a tree entry ".git", "..", "." (a
// .git/hooks/post-checkout made with mktree), a malformed commit. Nothing
// of it was fetched.
var ErrRefusedObject = errors.New("it holds an object git's checks refuse")

// refusal is err, a failed fetch from a worker (its clone's view, or
// origin where its pod pushed), as ErrRefusedObject when git's checks of
// the objects it brought are why: the worker's failure, never an outage
// to wait out (no transient cause). Any other err is returned as it is.
func refusal(err error) error {
	var ge *Error
	if !errors.As(err, &ge) || !strings.Contains(strings.ToLower(ge.Stderr), "fsck error") {
		return err
	}
	c := *ge
	c.Transient = ""
	return fmt.Errorf("%w: %w", ErrRefusedObject, &c)
}

// CheckoutError is a worker checkout this clone cannot read as a worker's
// clone: its HEAD, a ref, its index or its objects are not what git made
// of them (a worker that broke or forged its .git). It is the worker's
// failure, never the run's.
type CheckoutError struct {
	Dir string
	Err error
}

func (e *CheckoutError) Error() string {
	return fmt.Sprintf("the worker checkout %s cannot be read: %v", e.Dir, e.Err)
}

func (e *CheckoutError) Unwrap() error { return e.Err }

// IsCheckoutError reports whether err is (or wraps) a CheckoutError.
func IsCheckoutError(err error) (*CheckoutError, bool) {
	var ce *CheckoutError
	return ce, errors.As(err, &ce)
}

// checkoutErr wraps err, a failure to read the checkout at dir, as a
// CheckoutError. A git failure keeps its transient cause only when it is
// this machine's (a full disk, a lock, a timeout): the "remote" of a
// call that reads a checkout is the checkout, and a checkout that is no
// repository is no outage to wait out.
func checkoutErr(dir string, err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if _, ok := IsCheckoutError(err); ok {
		return err
	}
	var ge *Error
	if errors.As(err, &ge) {
		switch ge.Transient {
		case CauseUnreachable, CauseDropped, CauseServer, CauseHook:
			c := *ge
			c.Transient = ""
			err = &c
		}
	}
	return &CheckoutError{Dir: dir, Err: err}
}

// objectFile matches the files of an object directory the view copies:
// loose objects and packs with their indexes.
var objectFile = regexp.MustCompile(`^(?:[0-9a-f]{2}/(?:[0-9a-f]{38}|[0-9a-f]{62})|pack/pack-[0-9a-f]+\.(?:pack|idx|rev))$`)

// fetchFromView fetches sha, a commit of the worker's clone at dir, into
// this clone's ref dest (forced): the clone's object files are copied
// (from inside its .git/objects only, never through a link) into a bare
// repository of ours that borrows this clone's objects and nothing else,
// and upload-pack there sends what dest needs, each object checked
// (fsckStrict).
func (r *Repo) fetchFromView(ctx context.Context, dir, sha, dest string) error {
	if !isHex(sha) {
		return fmt.Errorf("fetch %s from %s: %q is not a sha", sanitize(dest), dir, sanitize(sha))
	}
	parent := filepath.Join(r.common, homeDir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return fmt.Errorf("fetch from %s: %w", dir, err)
	}
	view, err := os.MkdirTemp(parent, "worker-view-")
	if err != nil {
		return fmt.Errorf("fetch from %s: %w", dir, err)
	}
	defer os.RemoveAll(view)
	if _, err := r.git(ctx, parent, "init", "--quiet", "--bare", "--template=", "--", view); err != nil {
		return fmt.Errorf("fetch from %s: %w", dir, err)
	}
	if err := copyObjects(dir, filepath.Join(view, "objects")); err != nil {
		return checkoutErr(dir, fmt.Errorf("copy its objects: %w", err))
	}
	err = os.WriteFile(filepath.Join(view, "objects", "info", "alternates"), []byte(filepath.Join(r.common, "objects")+"\n"), 0o600)
	if err == nil {
		err = os.WriteFile(filepath.Join(view, "refs", "heads", "wave-view"), []byte(sha+"\n"), 0o600)
	}
	if err != nil {
		return fmt.Errorf("fetch from %s: %w", dir, err)
	}
	args := append(fsckStrict(), "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
		"--no-show-forced-updates", "--", view, "+refs/heads/wave-view:"+dest)
	if _, err := r.git(ctx, r.Dir, args...); err != nil {
		return checkoutErr(dir, fmt.Errorf("fetch %s: %w", short(sha), refusal(err)))
	}
	return nil
}

// fsckStrict is the configuration of a fetch from a worker: every object
// it brings is checked (git fsck's rules), and a tree entry git never
// writes — ".git", "..", ".", an empty name or one with a slash, which a
// worker can make with mktree — is an error, not fsck's warning: git
// refuses to check such a tree out (every verify of its merge would fail
// to start) and origins that check pushes refuse it.
func fsckStrict() []string {
	cfg := []string{"fetch.fsckObjects=true"}
	for _, id := range []string{"hasDot", "hasDotdot", "hasDotgit", "emptyName", "fullPathname"} {
		cfg = append(cfg, "fetch.fsck."+id+"=error")
	}
	var args []string
	for _, c := range cfg {
		args = append(args, "-c", c)
	}
	return args
}

// copyObjects copies the object files of the clone at dir into to (an
// object directory): read inside dir's .git/objects only.
func copyObjects(dir, to string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	objects, err := root.OpenRoot(filepath.Join(".git", "objects"))
	if err != nil {
		return err
	}
	defer objects.Close()
	return fs.WalkDir(objects.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == "." || p == "pack" || len(p) == 2 {
				return nil
			}
			return fs.SkipDir
		}
		if !d.Type().IsRegular() || !objectFile.MatchString(p) {
			return nil
		}
		return copyObject(objects, p, filepath.Join(to, filepath.FromSlash(p)))
	})
}

func copyObject(objects *os.Root, p, to string) error {
	in, err := objects.Open(p)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o400)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}

// safeIndexPath reports whether p, a path an index lists, names a file
// inside the work tree as git itself would write one (verify_path): no
// empty, ".", ".." or ".git" component. git reads an index without that
// check, and a worker's forged one (an entry "../../.ssh/id_ed25519")
// would have the supervisor's `git add` hash that file into this clone.
func safeIndexPath(p string) bool {
	if p == "" {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") {
			return false
		}
	}
	return true
}
