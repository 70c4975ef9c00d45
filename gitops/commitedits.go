package gitops

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Edit returns a file's new content from its content at the branch tip;
// changed false leaves it as it is.
type Edit func(path string, old []byte) (content []byte, changed bool, err error)

// CommitEdits changes files of the remote branch in one commit whose
// parent is the branch's freshly fetched tip, built in a private index (no
// worktree or user branch is touched) and pushed under a lease on that
// tip. The edits are read from the tip itself, so it is idempotent: once
// the branch holds them nothing is committed and "" is returned. A lost
// lease (someone pushed meanwhile) fetches and starts over, up to three
// times. Paths are repository-relative and must exist at the tip.
func (r *Repo) CommitEdits(ctx context.Context, branch, message string, paths []string, edit Edit) (string, error) {
	if err := r.checkBranch(ctx, branch); err != nil {
		return "", err
	}
	for _, p := range paths {
		if p == "" || strings.HasPrefix(p, "-") || strings.HasPrefix(p, "/") || strings.Contains(p, "..") {
			return "", fmt.Errorf("commit edits on %s: invalid path %q", sanitize(branch), p)
		}
	}
	for attempt := 0; ; attempt++ {
		commit, tip, err := r.editCommit(ctx, branch, message, paths, edit)
		if err != nil || commit == "" {
			return "", err
		}
		res, err := r.push(ctx, false, "refs/heads/"+branch+":"+tip, commit+":refs/heads/"+branch)
		if err != nil {
			return "", fmt.Errorf("commit edits on %s: push: %w", sanitize(branch), err)
		}
		if res.rejected() == "" {
			if err := r.fetchBranches(ctx, branch); err != nil {
				return "", err
			}
			if local, _, err := r.localRef(ctx, "refs/heads/"+branch); err == nil {
				r.syncLocalWave(ctx, branch, local, commit, tip)
			}
			return commit, nil
		}
		if attempt >= 3 {
			return "", fmt.Errorf("commit edits on %s: %w: %s", sanitize(branch), ErrRejected, res.rejected())
		}
	}
}

// editCommit builds the commit of the edits on the fetched tip: "" when
// no edit changes anything.
func (r *Repo) editCommit(ctx context.Context, branch, message string, paths []string, edit Edit) (commit, tip string, err error) {
	if err := r.fetchBranches(ctx, branch); err != nil {
		return "", "", err
	}
	tip, ok, err := r.localRef(ctx, r.tracking(branch))
	if err != nil || !ok {
		return "", "", fmt.Errorf("commit edits: %s is not on %s: %v", sanitize(branch), r.Remote, err)
	}
	tmp, err := os.MkdirTemp("", "wave-edits-")
	if err != nil {
		return "", "", fmt.Errorf("commit edits on %s: %w", sanitize(branch), err)
	}
	defer os.RemoveAll(tmp)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if _, err := r.do(ctx, call{dir: r.Dir, args: []string{"read-tree", tip}, env: env}); err != nil {
		return "", "", fmt.Errorf("commit edits on %s: read-tree: %w", sanitize(branch), err)
	}
	changed := false
	for _, p := range paths {
		mode, old, err := r.blobAt(ctx, tip, p)
		if err != nil {
			return "", "", err
		}
		content, ch, err := edit(p, old)
		if err != nil {
			return "", "", fmt.Errorf("edit %s: %w", sanitize(p), err)
		}
		if !ch || bytes.Equal(content, old) {
			continue
		}
		out, err := r.do(ctx, call{dir: r.Dir, args: []string{"hash-object", "-w", "--stdin"}, stdin: string(content)})
		if err != nil {
			return "", "", fmt.Errorf("commit edits: hash %s: %w", sanitize(p), err)
		}
		if _, err := r.do(ctx, call{dir: r.Dir, args: []string{"update-index", "--cacheinfo", mode + "," + firstLine(out) + "," + p}, env: env}); err != nil {
			return "", "", fmt.Errorf("commit edits: stage %s: %w", sanitize(p), err)
		}
		changed = true
	}
	if !changed {
		return "", tip, nil
	}
	tree, err := r.do(ctx, call{dir: r.Dir, args: []string{"write-tree"}, env: env})
	if err != nil {
		return "", "", fmt.Errorf("commit edits on %s: write-tree: %w", sanitize(branch), err)
	}
	out, err := r.do(ctx, call{dir: r.Dir, args: []string{"commit-tree", "--no-gpg-sign", firstLine(tree), "-p", tip},
		stdin: message, env: r.mergeIdentity(ctx)})
	if err != nil {
		return "", "", fmt.Errorf("commit edits on %s: commit-tree: %w", sanitize(branch), err)
	}
	return firstLine(out), tip, nil
}

// blobAt is a file's mode and content at rev.
func (r *Repo) blobAt(ctx context.Context, rev, path string) (string, []byte, error) {
	out, err := r.git(ctx, r.Dir, "ls-tree", "-z", rev, "--", path)
	f := strings.Fields(strings.TrimRight(out, "\x00"))
	if err != nil || len(f) < 3 || f[1] != "blob" {
		return "", nil, fmt.Errorf("commit edits: %s is not a file at %s: %v", sanitize(path), short(rev), err)
	}
	data, err := r.git(ctx, r.Dir, "cat-file", "blob", f[2])
	if err != nil {
		return "", nil, fmt.Errorf("commit edits: read %s: %w", sanitize(path), err)
	}
	return f[0], []byte(data), nil
}

// FilesAt lists the files at rev directly in dir (repository-relative,
// "" = the root), for a caller that edits them with CommitEdits.
func (r *Repo) FilesAt(ctx context.Context, rev, dir string) ([]string, error) {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return nil, fmt.Errorf("files at: invalid revision %q", rev)
	}
	dir = strings.Trim(filepath.ToSlash(dir), "/")
	args := []string{"ls-tree", "-z", "--name-only", rev, "--"}
	if dir != "" {
		args = append(args, dir+"/")
	}
	out, err := r.git(ctx, r.Dir, args...)
	if err != nil {
		return nil, fmt.Errorf("files of %s at %s: %w", sanitize(dir), sanitize(rev), err)
	}
	return splitNUL(out), nil
}
