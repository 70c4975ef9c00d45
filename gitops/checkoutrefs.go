package gitops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A worker checkout's refs, read from its files where they are plain
// (a loose ref, a line of packed-refs; inside the checkout only), else
// as upload-pack there tells them: no git runs in the checkout and
// nothing is written.

// CheckoutHead is the sha of the checkout's HEAD: read from its files
// (HEAD, the loose ref it names, else packed-refs; inside the checkout
// only), else as upload-pack there tells it.
func (r *Repo) CheckoutHead(ctx context.Context, dir string) (string, error) {
	l, err := r.lensOf(dir)
	if err != nil {
		return "", err
	}
	if l.objects != "" {
		if sha, ok := readHead(dir); ok {
			return sha, nil
		}
	}
	out, err := r.git(ctx, r.Dir, "ls-remote", "--", dir, "HEAD")
	if err != nil {
		return "", fmt.Errorf("HEAD of %s: %w", dir, err)
	}
	for _, l := range strings.Split(out, "\n") {
		if sha, name, ok := strings.Cut(strings.TrimSpace(l), "\t"); ok && name == "HEAD" && isHex(sha) {
			return sha, nil
		}
	}
	return "", fmt.Errorf("HEAD of %s: none (an unborn branch?)", dir)
}

// readHead resolves a clone's HEAD from its files as git's files
// backend keeps them: HEAD holds a sha or "ref: <name>"; the name is a
// loose ref file, else a line of packed-refs. Only files inside dir are
// read (os.Root); anything unexpected is not ok (the caller asks git).
func readHead(dir string) (string, bool) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", false
	}
	defer root.Close()
	read := rootReader(root)
	return resolveRef(read, read(".git/HEAD"))
}

// readRef resolves branch ref name (refs/heads/…) of a clone from its
// files, as readHead does HEAD.
func readRef(dir, name string) (string, bool) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", false
	}
	defer root.Close()
	return resolveRef(rootReader(root), "ref: "+name)
}

// rootReader reads the start of a file of a clone (its first 512
// bytes), "" when it cannot.
func rootReader(root *os.Root) func(string) string {
	return func(name string) string {
		f, err := root.Open(name)
		if err != nil {
			return ""
		}
		defer f.Close()
		b := make([]byte, 512)
		n, _ := f.Read(b)
		return strings.TrimSpace(string(b[:n]))
	}
}

// resolveRef follows head, a ref file's content ("ref: <name>" or a
// sha), through loose refs and packed-refs.
func resolveRef(read func(string) string, head string) (string, bool) {
	for range 3 { // HEAD → a branch (a symbolic ref to another, rarely)
		name, sym := strings.CutPrefix(head, "ref: ")
		if !sym {
			return head, isHex(head)
		}
		if !strings.HasPrefix(name, "refs/") || preCheckName(name) != nil {
			return "", false
		}
		if head = read(filepath.Join(".git", filepath.FromSlash(name))); head != "" {
			continue
		}
		return packedRef(read, name)
	}
	return "", false
}

// packedRef is name's sha in the clone's packed-refs.
func packedRef(read func(string) string, name string) (string, bool) {
	f := read(".git/packed-refs")
	if len(f) >= 511 { // more than read takes: let git say
		return "", false
	}
	for _, l := range strings.Split(f, "\n") {
		if sha, ref, ok := strings.Cut(l, " "); ok && ref == name && isHex(sha) {
			return sha, true
		}
	}
	return "", false
}

// CheckoutBranch is the tip of branch in the worker checkout at dir, as
// FetchFromCheckout would bring it, read without writing anything: from
// the checkout's ref files, else as upload-pack there tells it; for a
// worktree of this clone, this clone's branch. ok is false when the
// checkout has no such branch.
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
	if sha, ok := readRef(dir, ref); ok {
		return sha, true, nil
	}
	out, err := r.git(ctx, r.Dir, "ls-remote", "--", dir, ref)
	if err != nil {
		return "", false, fmt.Errorf("%s in %s: %w", sanitize(branch), dir, err)
	}
	for _, line := range strings.Split(out, "\n") {
		if sha, name, ok := strings.Cut(strings.TrimSpace(line), "\t"); ok && name == ref && isHex(sha) {
			return sha, true, nil
		}
	}
	return "", false, nil
}
