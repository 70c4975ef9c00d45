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

// EditResult is what CommitEdits did: the commit it pushed ("" when the
// branch held the edits already) and the branch's tip after.
type EditResult struct {
	Commit, Tip string
}

// CommitEdits changes files of the remote branch in one commit whose
// parent is the branch's freshly fetched tip, built in a private index (no
// worktree or user branch is touched), recorded in the intent ref and
// pushed under a lease on that tip. The edits are read from the tip
// itself, so it is idempotent: once the branch holds them nothing is
// committed. The tip must be expect ("" checks nothing) or this clone's
// own prepared push on it, else it is a ForeignCommitError and nothing
// is pushed. Paths are repository-relative and must exist at the tip.
func (r *Repo) CommitEdits(ctx context.Context, branch, expect, message string, paths []string, edit Edit) (EditResult, error) {
	if err := r.checkBranch(ctx, branch); err != nil {
		return EditResult{}, err
	}
	for _, p := range paths {
		if p == "" || strings.HasPrefix(p, "-") || strings.HasPrefix(p, "/") || strings.Contains(p, "..") {
			return EditResult{}, fmt.Errorf("commit edits on %s: invalid path %q", sanitize(branch), p)
		}
	}
	for attempt := 0; ; attempt++ {
		tip, err := r.CheckTip(ctx, branch, expect)
		if err != nil {
			return EditResult{}, err
		}
		commit, err := r.editCommit(ctx, branch, tip, message, paths, edit)
		if err != nil || commit == "" {
			return EditResult{Tip: tip}, err
		}
		pushed, err := r.pushEdits(ctx, branch, tip, commit)
		switch {
		case err != nil:
			return EditResult{}, err
		case pushed:
			return r.editsPushed(ctx, branch, tip, commit)
		case expect != "":
			// The lease on the tip just checked failed: someone else
			// pushed in between.
			found, _, _ := r.RemoteHead(ctx, branch)
			return EditResult{}, &ForeignCommitError{Branch: branch, Expected: tip, Found: found}
		case attempt >= 3:
			return EditResult{}, fmt.Errorf("commit edits on %s: %w 4 times", sanitize(branch), ErrRejected)
		}
	}
}

// pushEdits records commit in the intent ref and pushes it under a lease
// on tip; false is a lost lease.
func (r *Repo) pushEdits(ctx context.Context, branch, tip, commit string) (bool, error) {
	pending, _, err := r.pending(ctx, branch)
	if err != nil {
		return false, err
	}
	if _, err := r.git(ctx, r.Dir, "update-ref", "-m", "wave-orchestrator edits", pendingRef(branch), commit, pending); err != nil {
		return false, fmt.Errorf("commit edits on %s: record: %w", sanitize(branch), err)
	}
	res, err := r.push(ctx, false, "refs/heads/"+branch+":"+tip, commit+":refs/heads/"+branch)
	if err != nil {
		return false, fmt.Errorf("commit edits on %s: push: %w", sanitize(branch), err)
	}
	return res.rejected() == "", nil
}

// editsPushed brings the pushed edits into the clone's tracking ref and
// the user's branch, when it can catch up.
func (r *Repo) editsPushed(ctx context.Context, branch, tip, commit string) (EditResult, error) {
	if err := r.fetchBranches(ctx, branch); err != nil {
		return EditResult{}, err
	}
	if local, _, err := r.localRef(ctx, "refs/heads/"+branch); err == nil {
		r.syncLocalWave(ctx, branch, local, commit, tip)
	}
	return EditResult{Commit: commit, Tip: commit}, nil
}

// editCommit builds the commit of the edits on the fetched tip: "" when
// no edit changes anything.
func (r *Repo) editCommit(ctx context.Context, branch, tip, message string, paths []string, edit Edit) (commit string, err error) {
	if tip == "" {
		return "", fmt.Errorf("commit edits: %s is not on %s", sanitize(branch), r.Remote)
	}
	tmp, err := os.MkdirTemp("", "wave-edits-")
	if err != nil {
		return "", fmt.Errorf("commit edits on %s: %w", sanitize(branch), err)
	}
	defer os.RemoveAll(tmp)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if _, err := r.do(ctx, call{dir: r.Dir, args: []string{"read-tree", tip}, env: env}); err != nil {
		return "", fmt.Errorf("commit edits on %s: read-tree: %w", sanitize(branch), err)
	}
	blobs, err := r.blobsAt(ctx, tip, paths)
	if err != nil {
		return "", err
	}
	var edited []string
	contents := map[string][]byte{}
	for _, p := range paths {
		content, ch, err := edit(p, blobs[p].data)
		if err != nil {
			return "", fmt.Errorf("edit %s: %w", sanitize(p), err)
		}
		if ch && !bytes.Equal(content, blobs[p].data) {
			edited = append(edited, p)
			contents[p] = content
		}
	}
	changed := len(edited) > 0
	if changed {
		if err := r.stageEdits(ctx, tmp, env, edited, contents, blobs); err != nil {
			return "", err
		}
	}
	if !changed {
		return "", nil
	}
	tree, err := r.do(ctx, call{dir: r.Dir, args: []string{"write-tree"}, env: env})
	if err != nil {
		return "", fmt.Errorf("commit edits on %s: write-tree: %w", sanitize(branch), err)
	}
	out, err := r.do(ctx, call{dir: r.Dir, args: []string{"commit-tree", "--no-gpg-sign", firstLine(tree), "-p", tip},
		stdin: message, env: r.mergeIdentity(ctx)})
	if err != nil {
		return "", fmt.Errorf("commit edits on %s: commit-tree: %w", sanitize(branch), err)
	}
	return firstLine(out), nil
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
