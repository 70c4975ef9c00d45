package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// maxAlternates bounds how deep alternates of alternates are followed.
const maxAlternates = 5

// gitMounts are the mounts a checkout's git metadata needs besides the
// checkout itself: a clone of its own (.git a directory) needs the
// object directories it borrows, read-only; a worktree (.git a file
// naming its git dir in another clone) needs that clone's git
// directory. writable says whether the process commits (a reviewer or
// verify does not: only its worktree's own directory, where the index
// is, is writable then).
//
// What the checkout's own .git says — its objects/info/alternates, its
// gitdir file — is the sandboxed process's to write, and would name any
// directory of the user's for its next sandbox to mount. So it only
// selects among borrow, the object directories its caller vouches for
// (Borrowed of the repository the checkout belongs to): a clone gets
// those, whatever its alternates say, and a worktree must be one of the
// repository whose objects borrow names.
//
// The worktree is the weaker, legacy case: to commit, the process must
// write that clone's objects and refs; so must a wave agent, whose
// checkout is the user's repository itself. There the hooks, config,
// info, objects/info and other worktrees stay read-only (guarded), so
// nothing the process plants is run by anyone else; a worktree's own
// directory is writable.
func gitMounts(checkout string, writable bool, borrow []string) (ms []Mount, legacy bool, err error) {
	dotgit := filepath.Join(checkout, ".git")
	fi, err := os.Lstat(dotgit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if fi.IsDir() {
		switch {
		case !writable:
			ms = append(ms, Mount{Kind: MountReadOnly, Src: dotgit, Dest: dotgit})
		case slices.Contains(borrow, filepath.Join(dotgit, "objects")):
			// The checkout is the user's repository itself (a wave
			// agent's): the user's own git runs what lands here.
			ms = append(ms, guarded(dotgit)...)
		}
		return append(ms, borrowMounts(checkout, borrow)...), false, nil
	}
	gitdir, common, err := worktreeDirs(checkout, dotgit)
	if err != nil {
		return nil, true, err
	}
	if !slices.Contains(borrow, filepath.Join(common, "objects")) {
		return nil, true, fmt.Errorf("%s names the git directory %s, not one of the repository it belongs to", dotgit, gitdir)
	}
	if !writable {
		// The worktree's own directory (its index, HEAD) stays writable:
		// `git status` and `git diff` refresh the index there.
		ms = append(ms, Mount{Kind: MountReadOnly, Src: common, Dest: common},
			Mount{Kind: MountWritable, Src: gitdir, Dest: gitdir})
		return append(ms, borrowMounts(checkout, borrow)...), true, nil
	}
	ms = append(ms, Mount{Kind: MountWritable, Src: common, Dest: common})
	ms = append(ms, guarded(common)...)
	ms = append(ms, Mount{Kind: MountWritable, Src: gitdir, Dest: gitdir})
	return append(ms, borrowMounts(common, borrow)...), true, nil
}

// guarded are the mounts that keep the parts of a user's git directory
// (common) whose content git runs or follows read-only while the rest
// (objects, refs) is writable for commits: hooks, config, info (its
// attributes name filters), worktrees and objects/info (its alternates).
// A missing directory is a private, empty one, so nothing created there
// outlives the sandbox.
func guarded(common string) []Mount {
	var ms []Mount
	for _, sub := range []string{"hooks", "config", "info", "worktrees", filepath.Join("objects", "info")} {
		p := filepath.Join(common, sub)
		switch _, err := os.Lstat(p); {
		case err == nil:
			ms = append(ms, Mount{Kind: MountReadOnly, Src: p, Dest: p})
		case sub != "config" && errors.Is(err, fs.ErrNotExist):
			ms = append(ms, Mount{Kind: MountTmpfs, Dest: p})
		}
	}
	return ms
}

// borrowMounts binds borrow read-only, but what lies inside inside
// (mounted already, writable).
func borrowMounts(inside string, borrow []string) []Mount {
	var ms []Mount
	for _, dir := range borrow {
		if !within(dir, inside) {
			ms = append(ms, Mount{Kind: MountOptional, Src: dir, Dest: dir})
		}
	}
	return ms
}

// Borrowed is the object directories a checkout of the repository whose
// object directory is objects may borrow: objects and those its
// objects/info/alternates borrows (and theirs, up to maxAlternates
// deep). Call it on a repository no sandboxed process writes (the
// supervisor's clone), or before any runs in it.
func Borrowed(objects string) []string {
	if objects == "" {
		return nil
	}
	objects = filepath.Clean(objects)
	return append([]string{objects}, alternatesOf(objects, 0)...)
}

// worktreeDirs reads a worktree's .git file and its git dir's commondir.
func worktreeDirs(checkout, dotgit string) (gitdir, common string, err error) {
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return "", "", err
	}
	gitdir, ok := parseGitFile(string(b))
	if !ok {
		return "", "", fmt.Errorf("%s: not a git file (want \"gitdir: <path>\")", dotgit)
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(checkout, gitdir)
	}
	gitdir = filepath.Clean(gitdir)
	common = gitdir
	if b, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitdir, c)
		}
		common = filepath.Clean(c)
	}
	return gitdir, common, nil
}

// parseGitFile reads the git dir a .git file names.
func parseGitFile(s string) (string, bool) {
	line, _, _ := strings.Cut(s, "\n")
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if dir = strings.TrimSpace(dir); !ok || dir == "" {
		return "", false
	}
	return dir, true
}

// RepositoryBorrowed is Borrowed of the repository whose checkout (its
// work tree: a clone, or a worktree of one) is dir, as its .git says
// now: for a caller that sandboxes processes in the repository itself
// (wave agents), read before any of them runs.
func RepositoryBorrowed(dir string) []string {
	dotgit := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return nil
	case fi.IsDir():
		return Borrowed(filepath.Join(dotgit, "objects"))
	}
	if _, common, err := worktreeDirs(dir, dotgit); err == nil {
		return Borrowed(filepath.Join(common, "objects"))
	}
	return nil
}

// alternatesOf is the object directories objects borrows from (and
// theirs, up to maxAlternates deep).
func alternatesOf(objects string, depth int) []string {
	if depth >= maxAlternates {
		return nil
	}
	f, err := os.Open(filepath.Join(objects, "info", "alternates"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	for _, dir := range parseAlternates(f, objects) {
		if !slices.Contains(out, dir) {
			out = append(out, dir)
			out = append(out, alternatesOf(dir, depth+1)...)
		}
	}
	return out
}

// parseAlternates reads an objects/info/alternates file: one directory
// a line, relative to objects unless absolute, C-quoted when it starts
// with a double quote; # starts a comment.
func parseAlternates(r interface{ Read([]byte) (int, error) }, objects string) []string {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, `"`) {
			u, err := strconv.Unquote(line)
			if err != nil {
				continue
			}
			line = u
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(objects, line)
		}
		out = append(out, filepath.Clean(line))
	}
	return out
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
