package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxAlternates bounds how deep alternates of alternates are followed.
const maxAlternates = 5

// gitMounts are the mounts a checkout's git metadata needs besides the
// checkout itself: a clone of its own (.git a directory) needs only the
// object directories its objects/info/alternates borrows, read-only; a
// worktree (.git a file naming its git dir in another clone) needs that
// clone's git directory. writable says whether the process commits (a
// reviewer or verify does not: only its worktree's own directory, where
// the index is, is writable then).
//
// The worktree is the weaker, legacy case: to commit, the process must
// write that clone's objects and refs. Its hooks, config, info and other
// worktrees stay read-only (a missing hooks directory is a private,
// empty one), so nothing the process plants there is run by anyone else;
// its own worktree directory is writable.
func gitMounts(checkout string, writable bool) (ms []Mount, legacy bool, err error) {
	dotgit := filepath.Join(checkout, ".git")
	fi, err := os.Lstat(dotgit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if fi.IsDir() {
		if !writable {
			ms = append(ms, Mount{Kind: MountReadOnly, Src: dotgit, Dest: dotgit})
		}
		return append(ms, alternateMounts(filepath.Join(dotgit, "objects"), 0)...), false, nil
	}
	gitdir, common, err := worktreeDirs(checkout, dotgit)
	if err != nil {
		return nil, true, err
	}
	if !writable {
		// The worktree's own directory (its index, HEAD) stays writable:
		// `git status` and `git diff` refresh the index there.
		ms = append(ms, Mount{Kind: MountReadOnly, Src: common, Dest: common},
			Mount{Kind: MountWritable, Src: gitdir, Dest: gitdir})
		return append(ms, alternateMounts(filepath.Join(common, "objects"), 0)...), true, nil
	}
	ms = append(ms, Mount{Kind: MountWritable, Src: common, Dest: common})
	for _, sub := range []string{"hooks", "config", "info", "worktrees"} {
		p := filepath.Join(common, sub)
		switch _, err := os.Lstat(p); {
		case err == nil:
			ms = append(ms, Mount{Kind: MountReadOnly, Src: p, Dest: p})
		case sub == "hooks" && errors.Is(err, fs.ErrNotExist):
			ms = append(ms, Mount{Kind: MountTmpfs, Dest: p})
		}
	}
	ms = append(ms, Mount{Kind: MountWritable, Src: gitdir, Dest: gitdir})
	return append(ms, alternateMounts(filepath.Join(common, "objects"), 0)...), true, nil
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

// alternateMounts binds, read-only, the object directories objects
// borrows from (and theirs, up to maxAlternates deep).
func alternateMounts(objects string, depth int) []Mount {
	if depth >= maxAlternates {
		return nil
	}
	f, err := os.Open(filepath.Join(objects, "info", "alternates"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var ms []Mount
	for _, dir := range parseAlternates(f, objects) {
		ms = append(ms, Mount{Kind: MountOptional, Src: dir, Dest: dir})
		ms = append(ms, alternateMounts(dir, depth+1)...)
	}
	return ms
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
