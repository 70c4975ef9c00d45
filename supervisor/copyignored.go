package supervisor

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// The files backlog.copyIgnored names go from the repository into a
// checkout through os.Root on both sides: a path is resolved inside its
// root or not at all, so neither a symlink in the repository (a .env
// linked to a file in the user's home) nor one a worker left in its
// checkout (a .env linked to the user's shell profile) can take a read
// or a write outside. Each file keeps its permission bits (a 0600 file
// stays private); directories made for it take the repository's
// directory's.

// checkCopyable reports the first of files (relative to the repository
// at root) that cannot be copied: one outside the repository through a
// symlink, or not a regular file.
func checkCopyable(root string, files []string) error {
	src, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer src.Close()
	for _, rel := range files {
		if _, err := regularIn(src, rel); err != nil {
			return err
		}
	}
	return nil
}

// regularIn is rel's mode in root: a regular file reached without
// leaving root.
func regularIn(root *os.Root, rel string) (fs.FileMode, error) {
	fi, err := root.Stat(rel)
	if err != nil {
		if strings.Contains(err.Error(), "path escapes from parent") {
			return 0, fmt.Errorf("%s is a symlink out of the repository: not copied (copy the file itself into the repository, or leave it out of the globs)", rel)
		}
		return 0, fmt.Errorf("%s: %w", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("%s is not a regular file: not copied", rel)
	}
	return fi.Mode().Perm(), nil
}

// copyIgnored copies files (relative paths) from the repository at
// from into the checkout at to, replacing what the checkout has there.
func copyIgnored(from, to string, files []string) error {
	src, err := os.OpenRoot(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenRoot(to)
	if err != nil {
		return err
	}
	defer dst.Close()
	for _, rel := range files {
		if err := copyOne(src, dst, rel); err != nil {
			return fmt.Errorf("copy %s into the checkout: %w", rel, err)
		}
	}
	return nil
}

func copyOne(src, dst *os.Root, rel string) error {
	mode, err := regularIn(src, rel)
	if err != nil {
		return err
	}
	in, err := src.Open(rel)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := makeParents(src, dst, rel); err != nil {
		return err
	}
	// Whatever is there goes first, unfollowed: a symlink is removed,
	// not written through.
	if err := dst.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, err := dst.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	// The umask may have taken bits off at create.
	if err := out.Chmod(mode); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// makeParents makes rel's missing parent directories in dst, each with
// the permissions of the same directory in src.
func makeParents(src, dst *os.Root, rel string) error {
	dir := path.Dir(rel)
	if dir == "." {
		return nil
	}
	at := ""
	for _, seg := range strings.Split(dir, "/") {
		at = path.Join(at, seg)
		if _, err := dst.Lstat(at); err == nil {
			continue
		}
		mode := fs.FileMode(0o755)
		if fi, err := src.Stat(at); err == nil {
			mode = fi.Mode().Perm() | 0o700 // ours to write the file into
		}
		if err := dst.Mkdir(at, mode); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err := dst.Chmod(at, mode); err != nil {
			return err
		}
	}
	return nil
}
