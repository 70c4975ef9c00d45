package gitops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// A worker checkout's refs, read from its files (a loose ref, a line of
// packed-refs) inside the checkout only (os.Root): no git runs in the
// checkout, nothing is written, and nothing its git names outside it (a
// ref linked into another repository) is read (workerview.go says why).
// A ref that cannot be read so is the worker's doing: a CheckoutError.

// CheckoutHead is the sha of the checkout's HEAD: read from a clone's
// files (HEAD, the loose ref it names, else packed-refs; inside the
// checkout only); for a worktree an older version made, as upload-pack
// tells it (its refs are this clone's). A HEAD that cannot be read so (an
// unborn branch, a link out of the checkout) is a CheckoutError.
func (r *Repo) CheckoutHead(ctx context.Context, dir string) (string, error) {
	l, err := r.lensOf(dir)
	if err != nil {
		return "", err
	}
	if l.objects != "" {
		sha, ok, err := readRef(dir, "HEAD")
		switch {
		case err != nil:
			return "", checkoutErr(dir, fmt.Errorf("HEAD: %w", err))
		case !ok:
			return "", checkoutErr(dir, errors.New("HEAD names a branch it does not have (an unborn branch?)"))
		}
		return sha, nil
	}
	out, err := r.git(ctx, r.Dir, "ls-remote", "--", dir, "HEAD")
	if err != nil {
		return "", checkoutErr(dir, fmt.Errorf("HEAD: %w", err))
	}
	for _, l := range strings.Split(out, "\n") {
		if sha, name, ok := strings.Cut(strings.TrimSpace(l), "\t"); ok && name == "HEAD" && isHex(sha) {
			return sha, nil
		}
	}
	return "", checkoutErr(dir, errors.New("HEAD: none (an unborn branch?)"))
}

// CheckoutBranch is the tip of branch in the worker checkout at dir, as
// FetchFromCheckout would bring it, read without writing anything: from
// the checkout's ref files; for a worktree of this clone, this clone's
// branch. ok is false when the checkout has no such branch.
func (r *Repo) CheckoutBranch(ctx context.Context, dir, branch string) (sha string, ok bool, err error) {
	if err := r.checkBranch(ctx, branch); err != nil {
		return "", false, err
	}
	l, err := r.lensOf(dir)
	if err != nil {
		return "", false, err
	}
	ref := "refs/heads/" + branch
	if l.objects == "" {
		return r.localRef(ctx, ref)
	}
	sha, ok, err = readRef(dir, ref)
	if err != nil {
		return "", false, checkoutErr(dir, fmt.Errorf("branch %s: %w", sanitize(branch), err))
	}
	return sha, ok, nil
}

// maxPackedRefs bounds the packed-refs file read from a worker's clone.
const maxPackedRefs = 64 << 20

// readRef resolves name ("HEAD" or a full ref name) in the clone at dir
// from its files as git's files backend keeps them: a loose file holding
// a sha or "ref: <name>", else a line of packed-refs. Only files inside
// dir are read (os.Root: a symbolic link out of it is an error). ok is
// false when the ref does not exist.
func readRef(dir, name string) (sha string, ok bool, err error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", false, err
	}
	defer root.Close()
	for range 4 { // HEAD → a branch (a symbolic ref to another, rarely)
		if name != "HEAD" && (!strings.HasPrefix(name, "refs/") || preCheckName(name) != nil) {
			return "", false, fmt.Errorf("%q is not a ref name", sanitize(name))
		}
		b, err := readSmall(root, path.Join(".git", name), 4096)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return packedRefOf(root, name)
		case err != nil:
			return "", false, err
		}
		v := strings.TrimSpace(string(b))
		if target, sym := strings.CutPrefix(v, "ref: "); sym {
			name = target
			continue
		}
		if !isHex(v) {
			return "", false, fmt.Errorf("ref %s holds %q, not a sha", sanitize(name), sanitize(v))
		}
		return v, true, nil
	}
	return "", false, fmt.Errorf("ref %s: symbolic refs nested too deep", sanitize(name))
}

// packedRefOf is name's sha in the clone's packed-refs.
func packedRefOf(root *os.Root, name string) (string, bool, error) {
	b, err := readSmall(root, ".git/packed-refs", maxPackedRefs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if sha, ref, ok := strings.Cut(strings.TrimSpace(l), " "); ok && ref == name && isHex(sha) {
			return sha, true, nil
		}
	}
	return "", false, nil
}

// readSmall reads the regular file name inside root, at most limit bytes.
func readSmall(root *os.Root, name string, limit int64) ([]byte, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, limit)
	}
	return b, err
}
