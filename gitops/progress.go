package gitops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CommitsAhead counts the commits of the worktree's HEAD not in base.
func (r *Repo) CommitsAhead(ctx context.Context, worktree, base string) (int, error) {
	if base == "" || strings.HasPrefix(base, "-") {
		return 0, fmt.Errorf("commits ahead: invalid base %q", base)
	}
	out, err := r.git(ctx, worktree, "rev-list", "--count", base+"..HEAD")
	if err != nil {
		return 0, fmt.Errorf("commits ahead of %s in %s: %w", sanitize(base), worktree, err)
	}
	n, err := strconv.Atoi(firstLine(out))
	if err != nil {
		return 0, fmt.Errorf("commits ahead in %s: %q is not a count", worktree, firstLine(out))
	}
	return n, nil
}

// DirtyFiles counts changed, staged and untracked (not ignored) files in
// the worktree. --no-optional-locks: reading status must not rewrite the
// index under an agent that is using it.
func (r *Repo) DirtyFiles(ctx context.Context, worktree string) (int, error) {
	out, err := r.git(ctx, worktree, "--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=all")
	if err != nil {
		return 0, fmt.Errorf("dirty files in %s: %w", worktree, err)
	}
	return countStatus(out), nil
}

// countStatus counts entries of status --porcelain -z; a rename or copy
// carries its source path as an extra field.
func countStatus(out string) int {
	n := 0
	f := strings.Split(out, "\x00")
	for i := 0; i < len(f); i++ {
		if len(f[i]) < 3 {
			continue
		}
		n++
		if f[i][0] == 'R' || f[i][0] == 'C' {
			i++
		}
	}
	return n
}

// DiffNames lists the files changed on to since its merge base with from
// (git diff from...to), renames split into both paths.
func (r *Repo) DiffNames(ctx context.Context, from, to string) ([]string, error) {
	for _, rev := range []string{from, to} {
		if rev == "" || strings.HasPrefix(rev, "-") {
			return nil, fmt.Errorf("diff names: invalid revision %q", rev)
		}
	}
	out, err := r.git(ctx, r.Dir, "diff", "--name-only", "--no-renames", "-z", from+"..."+to)
	if err != nil {
		return nil, fmt.Errorf("files changed from %s to %s: %w", sanitize(from), sanitize(to), err)
	}
	return splitNUL(out), nil
}

func splitNUL(s string) []string {
	var out []string
	for _, f := range strings.Split(s, "\x00") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Snapshot commits the worktree's whole state — staged, unstaged and
// untracked files, not ignored ones — to ref (parent: HEAD) and returns the
// commit. The worktree's index, HEAD and files are not touched: the commit
// is built in a private copy of the index (GIT_INDEX_FILE). Copying the
// index rather than reading HEAD keeps files the agent force-added and
// spares re-hashing unchanged files.
func (r *Repo) Snapshot(ctx context.Context, worktree, ref, message string) (string, error) {
	if err := r.checkFullRef(ctx, ref); err != nil {
		return "", err
	}
	tree, err := r.worktreeTree(ctx, worktree)
	if err != nil {
		return "", err
	}
	if message == "" {
		message = "wave-orchestrator snapshot"
	}
	out, err := r.do(ctx, call{dir: worktree, args: []string{"commit-tree", "--no-gpg-sign", tree, "-p", "HEAD"}, stdin: message, env: toolIdentity()})
	if err != nil {
		return "", fmt.Errorf("snapshot %s: commit-tree: %w", worktree, err)
	}
	commit := firstLine(out)
	if _, err := r.git(ctx, r.Dir, "update-ref", "-m", "wave-orchestrator snapshot", ref, commit); err != nil {
		return "", fmt.Errorf("snapshot %s: update %s: %w", worktree, ref, err)
	}
	return commit, nil
}

// worktreeTree writes the tree of the worktree's whole state in a private
// copy of its index and returns it.
func (r *Repo) worktreeTree(ctx context.Context, worktree string) (string, error) {
	tmp, err := os.MkdirTemp("", "wave-snapshot-")
	if err != nil {
		return "", fmt.Errorf("snapshot %s: %w", worktree, err)
	}
	defer os.RemoveAll(tmp)
	index := filepath.Join(tmp, "index")
	env := []string{"GIT_INDEX_FILE=" + index}
	if err := r.seedIndex(ctx, worktree, index); err != nil {
		return "", err
	}
	if _, err := r.do(ctx, call{dir: worktree, args: []string{"add", "-A"}, env: env}); err != nil {
		return "", fmt.Errorf("snapshot %s: add: %w", worktree, err)
	}
	tree, err := r.do(ctx, call{dir: worktree, args: []string{"write-tree"}, env: env})
	if err != nil {
		return "", fmt.Errorf("snapshot %s: write-tree: %w", worktree, err)
	}
	return firstLine(tree), nil
}

// seedIndex fills the private index: a copy of the worktree's own index,
// or HEAD's tree when that cannot be read.
func (r *Repo) seedIndex(ctx context.Context, worktree, index string) error {
	out, err := r.git(ctx, worktree, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err == nil {
		if data, rerr := os.ReadFile(firstLine(out)); rerr == nil {
			if werr := os.WriteFile(index, data, 0o600); werr == nil {
				return nil
			}
		}
	}
	if _, err := r.do(ctx, call{dir: worktree, args: []string{"read-tree", "HEAD"}, env: []string{"GIT_INDEX_FILE=" + index}}); err != nil {
		return fmt.Errorf("snapshot %s: read-tree HEAD: %w", worktree, err)
	}
	return nil
}

// BranchAhead counts the commits of a local branch not in base, read in
// the clone rather than a worktree: what is left of a worker whose
// worktree was deleted. ok is false when the branch is gone too.
func (r *Repo) BranchAhead(ctx context.Context, branch, base string) (int, bool, error) {
	if err := r.checkBranch(ctx, branch); err != nil {
		return 0, false, err
	}
	if base == "" || strings.HasPrefix(base, "-") {
		return 0, false, fmt.Errorf("commits ahead: invalid base %q", base)
	}
	if _, ok, err := r.localRef(ctx, "refs/heads/"+branch); err != nil || !ok {
		return 0, false, err
	}
	out, err := r.git(ctx, r.Dir, "rev-list", "--count", base+"..refs/heads/"+branch)
	if err != nil {
		return 0, false, fmt.Errorf("commits of %s ahead of %s: %w", sanitize(branch), sanitize(base), err)
	}
	n, err := strconv.Atoi(firstLine(out))
	if err != nil {
		return 0, false, fmt.Errorf("commits of %s: %q is not a count", sanitize(branch), firstLine(out))
	}
	if n > 0 && r.noCommonHistory(ctx, base, "refs/heads/"+branch, nil) {
		return 0, false, fmt.Errorf("branch %s: %w", sanitize(branch), ErrNoCommonHistory)
	}
	return n, true, nil
}

// SnapshotRef points ref at what is left of a worker whose worktree is
// gone: its branch's tip, else (the branch gone too) fallback, the commit
// a recreated worktree starts from. It returns the commit.
func (r *Repo) SnapshotRef(ctx context.Context, branch, fallback, ref string) (string, error) {
	if err := r.checkFullRef(ctx, ref); err != nil {
		return "", err
	}
	sha, ok, err := r.localRef(ctx, "refs/heads/"+branch)
	if err != nil {
		return "", err
	}
	if !ok {
		if sha, ok, err = r.localRef(ctx, fallback); err != nil || !ok {
			return "", fmt.Errorf("snapshot of %s: neither the branch nor %s exists: %v", sanitize(branch), sanitize(fallback), err)
		}
	}
	if _, err := r.git(ctx, r.Dir, "update-ref", "-m", "wave-orchestrator snapshot", ref, sha); err != nil {
		return "", fmt.Errorf("snapshot of %s: update %s: %w", sanitize(branch), ref, err)
	}
	return sha, nil
}
