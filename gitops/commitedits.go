package gitops

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
	blobs, err := r.blobsAt(ctx, tip, paths)
	if err != nil {
		return "", "", err
	}
	var edited []string
	contents := map[string][]byte{}
	for _, p := range paths {
		content, ch, err := edit(p, blobs[p].data)
		if err != nil {
			return "", "", fmt.Errorf("edit %s: %w", sanitize(p), err)
		}
		if ch && !bytes.Equal(content, blobs[p].data) {
			edited = append(edited, p)
			contents[p] = content
		}
	}
	changed := len(edited) > 0
	if changed {
		if err := r.stageEdits(ctx, tmp, env, edited, contents, blobs); err != nil {
			return "", "", err
		}
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

// blob is a file's mode and content at a revision.
type blob struct {
	mode string
	data []byte
}

// blobsAt is every path's mode and content at rev: one ls-tree and one
// cat-file --batch for all of them.
func (r *Repo) blobsAt(ctx context.Context, rev string, paths []string) (map[string]blob, error) {
	out, err := r.git(ctx, r.Dir, append([]string{"ls-tree", "-z", rev, "--"}, paths...)...)
	if err != nil {
		return nil, fmt.Errorf("commit edits: list %d file(s) at %s: %w", len(paths), short(rev), err)
	}
	ids := map[string][2]string{} // path → mode, blob id
	for _, e := range splitNUL(out) {
		meta, p, ok := strings.Cut(e, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 && f[1] == "blob" {
			ids[p] = [2]string{f[0], f[2]}
		}
	}
	var req strings.Builder
	for _, p := range paths {
		id, ok := ids[p]
		if !ok {
			return nil, fmt.Errorf("commit edits: %s is not a file at %s", sanitize(p), short(rev))
		}
		req.WriteString(id[1] + "\n")
	}
	data, err := r.do(ctx, call{dir: r.Dir, args: []string{"cat-file", "--batch"}, stdin: req.String()})
	if err != nil {
		return nil, fmt.Errorf("commit edits: read %d file(s): %w", len(paths), err)
	}
	got := map[string]blob{}
	for _, p := range paths {
		head, rest, ok := strings.Cut(data, "\n")
		f := strings.Fields(head)
		var size int
		if ok && len(f) == 3 && f[0] == ids[p][1] {
			size, err = strconv.Atoi(f[2])
		}
		if !ok || len(f) != 3 || f[0] != ids[p][1] || err != nil || len(rest) < size {
			return nil, fmt.Errorf("commit edits: read %s: unexpected cat-file output", sanitize(p))
		}
		got[p] = blob{mode: ids[p][0], data: []byte(rest[:size])}
		data = strings.TrimPrefix(rest[size:], "\n")
	}
	return got, nil
}

// stageEdits writes the edited contents as blobs (one hash-object over
// files in tmp) and stages them in the private index env names (one
// update-index).
func (r *Repo) stageEdits(ctx context.Context, tmp string, env, edited []string, contents map[string][]byte, blobs map[string]blob) error {
	var files strings.Builder
	for i, p := range edited {
		f := filepath.Join(tmp, "blob-"+strconv.Itoa(i))
		if err := os.WriteFile(f, contents[p], 0o600); err != nil {
			return fmt.Errorf("commit edits: %s: %w", sanitize(p), err)
		}
		files.WriteString(f + "\n")
	}
	out, err := r.do(ctx, call{dir: r.Dir, args: []string{"hash-object", "-w", "--no-filters", "--stdin-paths"}, stdin: files.String()})
	if err != nil {
		return fmt.Errorf("commit edits: hash %d file(s): %w", len(edited), err)
	}
	ids := strings.Fields(out)
	if len(ids) != len(edited) {
		return fmt.Errorf("commit edits: hash %d file(s): %d ids back", len(edited), len(ids))
	}
	var info strings.Builder
	for i, p := range edited {
		fmt.Fprintf(&info, "%s %s\t%s\x00", blobs[p].mode, ids[i], p)
	}
	if _, err := r.do(ctx, call{dir: r.Dir, args: []string{"update-index", "-z", "--index-info"}, stdin: info.String(), env: env}); err != nil {
		return fmt.Errorf("commit edits: stage %d file(s): %w", len(edited), err)
	}
	return nil
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
