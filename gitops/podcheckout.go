package gitops

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// The pod side of a backlog worker on kubernetes: the runner owns a clone
// (Clone) and everything the worker did goes back to origin through its
// refs — the worker branch under a lease, snapshots of uncommitted work,
// and a result commit with the run's final record. Each push is
// idempotent: pushing what origin already has is a no-op.

// StartBranch checks out branch in the clone: from origin's copy when
// origin has one, else from origin's base. It returns origin's sha of
// branch ("" when absent): the lease the final push holds.
func (r *Repo) StartBranch(ctx context.Context, branch, base string) (string, error) {
	for _, b := range []string{branch, base} {
		if err := r.checkBranch(ctx, b); err != nil {
			return "", err
		}
	}
	sha, ok, err := r.RemoteHead(ctx, branch)
	if err != nil {
		return "", err
	}
	from := r.tracking(base)
	if ok {
		if err := r.Fetch(ctx, "+refs/heads/"+branch+":"+r.tracking(branch)); err != nil {
			return "", err
		}
		from = r.tracking(branch)
	} else if err := r.Fetch(ctx, "+refs/heads/"+base+":"+r.tracking(base)); err != nil {
		return "", err
	}
	if _, err := r.git(ctx, r.Dir, "checkout", "-q", "-B", branch, from); err != nil {
		return "", fmt.Errorf("start branch %s from %s: %w", sanitize(branch), sanitize(from), err)
	}
	return sha, r.ensureIdentity(ctx)
}

// ensureIdentity gives the clone the tool's identity when it has none: an
// agent's commits must not fail for want of a name (an image without a
// git identity).
func (r *Repo) ensureIdentity(ctx context.Context) error {
	if identity(ctx, r.rn, r.Dir) == nil {
		return nil
	}
	for _, kv := range [][2]string{{"user.name", "wave-orchestrator"}, {"user.email", "wave-orchestrator@localhost"}} {
		if _, err := r.git(ctx, r.Dir, "config", kv[0], kv[1]); err != nil {
			return fmt.Errorf("set %s in %s: %w", kv[0], r.Dir, err)
		}
	}
	return nil
}

// Restore continues from snapshot ref on origin (a commit whose parent is
// the branch tip it was taken on and whose tree is the worktree then, as
// Snapshot and PushSnapshot make): the parent becomes the checked-out
// branch's tip and the tree the working tree, left uncommitted (changed
// files unstaged, new files untracked). It returns the snapshot's sha.
func (r *Repo) Restore(ctx context.Context, ref string) (string, error) {
	if err := r.checkFullRef(ctx, ref); err != nil {
		return "", err
	}
	local := "refs/wave/restore"
	if err := r.Fetch(ctx, "+"+ref+":"+local); err != nil {
		return "", fmt.Errorf("restore %s: %w", ref, err)
	}
	snap, err := r.RevParse(ctx, local)
	if err != nil {
		return "", fmt.Errorf("restore %s: %w", ref, err)
	}
	if parent, err := r.RevParse(ctx, local+"^1"); err == nil {
		if _, err := r.git(ctx, r.Dir, "reset", "-q", "--hard", parent); err != nil {
			return "", fmt.Errorf("restore %s: reset to its parent: %w", ref, err)
		}
	}
	if _, err := r.git(ctx, r.Dir, "read-tree", "-u", "--reset", snap); err != nil {
		return "", fmt.Errorf("restore %s: read its tree: %w", ref, err)
	}
	// The index back to HEAD: the snapshot's changes stay in the files.
	if _, err := r.git(ctx, r.Dir, "reset", "-q"); err != nil {
		return "", fmt.Errorf("restore %s: unstage: %w", ref, err)
	}
	return snap, nil
}

// PushSnapshot commits the clone's whole state (as Snapshot) and pushes
// it to ref on origin, replacing what is there. last is the snapshot
// pushed before: when HEAD and the files are what it holds, nothing is
// made or pushed and last comes back.
func (r *Repo) PushSnapshot(ctx context.Context, ref, last, message string) (string, error) {
	if err := r.checkFullRef(ctx, ref); err != nil {
		return "", err
	}
	if last != "" {
		tree, err := r.worktreeTree(ctx, r.Dir)
		if err != nil {
			return "", err
		}
		head, _ := r.RevParse(ctx, "HEAD")
		lastTree, _ := r.RevParse(ctx, last+"^{tree}")
		lastParent, _ := r.RevParse(ctx, last+"^1")
		if tree == lastTree && head == lastParent {
			return last, nil
		}
	}
	sha, err := r.Snapshot(ctx, r.Dir, ref, message)
	if err != nil {
		return "", err
	}
	if err := r.pushReplacing(ctx, sha, ref); err != nil {
		return "", fmt.Errorf("push snapshot to %s: %w", ref, err)
	}
	return sha, nil
}

// pushReplacing force-pushes sha to ref on origin.
func (r *Repo) pushReplacing(ctx context.Context, sha, ref string) error {
	res, err := r.push(ctx, false, "", "+"+sha+":"+ref)
	if err != nil {
		return err
	}
	if why := res.rejected(); why != "" {
		return fmt.Errorf("%w: %s", ErrRejected, why)
	}
	return nil
}

// PushBranchLeased pushes the clone's HEAD to branch on origin only while
// origin's branch is still expected ("" = absent): nobody else's work on
// it is overwritten. Origin already at HEAD is success. It returns HEAD.
func (r *Repo) PushBranchLeased(ctx context.Context, branch, expected string) (string, error) {
	if err := r.checkBranch(ctx, branch); err != nil {
		return "", err
	}
	head, err := r.RevParse(ctx, "HEAD")
	if err != nil {
		return "", err
	}
	ref := "refs/heads/" + branch
	res, err := r.push(ctx, true, ref+":"+expected, head+":"+ref)
	if err != nil {
		return "", fmt.Errorf("push %s: %w", sanitize(branch), err)
	}
	if why := res.rejected(); why != "" {
		if sha, ok, lerr := r.RemoteHead(ctx, branch); lerr == nil && ok && sha == head {
			return head, nil // an earlier push of ours got there
		}
		return "", fmt.Errorf("push %s: %w: %s", sanitize(branch), ErrRejected, why)
	}
	return head, nil
}

// PushResult writes a commit with no parent holding files (name →
// content; contents travel on stdin) dated at, and force-pushes it to
// ref on origin. The same files and time make the same commit, so a
// retry pushes nothing new. It returns the commit.
func (r *Repo) PushResult(ctx context.Context, ref string, files map[string][]byte, at time.Time, message string) (string, error) {
	if err := r.checkFullRef(ctx, ref); err != nil {
		return "", err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if name == "" || strings.ContainsAny(name, "/\x00\n") {
			return "", fmt.Errorf("result %s: invalid file name %q", ref, name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var tree strings.Builder
	for _, name := range names {
		blob, err := r.do(ctx, call{dir: r.Dir, args: []string{"hash-object", "-w", "--stdin"}, stdin: string(files[name])})
		if err != nil {
			return "", fmt.Errorf("result %s: store %s: %w", ref, name, err)
		}
		fmt.Fprintf(&tree, "100644 blob %s\t%s\n", firstLine(blob), name)
	}
	treeID, err := r.do(ctx, call{dir: r.Dir, args: []string{"mktree"}, stdin: tree.String()})
	if err != nil {
		return "", fmt.Errorf("result %s: mktree: %w", ref, err)
	}
	date := at.UTC().Format(time.RFC3339)
	env := append(toolIdentity(), "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	if message == "" {
		message = "wave-orchestrator run result"
	}
	out, err := r.do(ctx, call{dir: r.Dir, args: []string{"commit-tree", "--no-gpg-sign", firstLine(treeID)}, stdin: message, env: env})
	if err != nil {
		return "", fmt.Errorf("result %s: commit-tree: %w", ref, err)
	}
	sha := firstLine(out)
	if err := r.pushReplacing(ctx, sha, ref); err != nil {
		return "", fmt.Errorf("push result to %s: %w", ref, err)
	}
	return sha, nil
}

// CloneState is what the clone holds now, for a runner's reports.
type CloneState struct {
	Head  string
	Ahead int // commits of HEAD not in base
	Dirty int // changed, staged and untracked files
	// Status is git status's raw answer: equal answers mean an unchanged
	// dirty set.
	Status string
}

// State reads the clone's HEAD, its commits ahead of base (a commit or
// ref) and its dirty files, without taking the index lock.
func (r *Repo) State(ctx context.Context, base string) (CloneState, error) {
	head, err := r.RevParse(ctx, "HEAD")
	if err != nil {
		return CloneState{}, err
	}
	ahead, err := r.CommitsAhead(ctx, r.Dir, base)
	if err != nil {
		return CloneState{}, err
	}
	out, err := r.git(ctx, r.Dir, "--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=all")
	if err != nil {
		return CloneState{}, fmt.Errorf("dirty files in %s: %w", r.Dir, err)
	}
	return CloneState{Head: head, Ahead: ahead, Dirty: countStatus(out), Status: out}, nil
}

// CandidateRef is where a worker running elsewhere (a pod) pushes the
// commits of its branch: a candidate under refs/wave/, never a branch,
// so the credential a pod holds needs no right to any branch (the wave
// branch included), and what it pushes reaches a branch only through the
// supervisor's gate.
func CandidateRef(branch string) string { return "refs/wave/candidates/" + branch }

// StartCandidate is StartBranch for a worker that pushes to the
// candidate ref: it continues from origin's candidate when there is one
// (an earlier run's pushes), else from origin's branch (pushed by an
// older version), else from base. It returns origin's sha of the
// candidate ("" when absent): the lease PushCandidate holds.
func (r *Repo) StartCandidate(ctx context.Context, branch, candidate, base string) (string, error) {
	for _, b := range []string{branch, base} {
		if err := r.checkBranch(ctx, b); err != nil {
			return "", err
		}
	}
	if err := r.checkCandidate(ctx, candidate); err != nil {
		return "", err
	}
	sha, ok, err := r.lsRemote(ctx, candidate)
	if err != nil {
		return "", fmt.Errorf("start %s: %w", sanitize(branch), err)
	}
	if !ok {
		if _, err := r.StartBranch(ctx, branch, base); err != nil {
			return "", err
		}
		return "", nil
	}
	local := "refs/wave/candidate"
	if err := r.Fetch(ctx, "+"+candidate+":"+local); err != nil {
		return "", err
	}
	if _, err := r.git(ctx, r.Dir, "checkout", "-q", "-B", branch, local); err != nil {
		return "", fmt.Errorf("start branch %s from %s: %w", sanitize(branch), candidate, err)
	}
	return sha, r.ensureIdentity(ctx)
}

// PushCandidate pushes the clone's HEAD to the candidate ref on origin
// only while origin's candidate is still expected ("" = absent). Origin
// already at HEAD is success. It returns HEAD.
func (r *Repo) PushCandidate(ctx context.Context, candidate, expected string) (string, error) {
	if err := r.checkCandidate(ctx, candidate); err != nil {
		return "", err
	}
	head, err := r.RevParse(ctx, "HEAD")
	if err != nil {
		return "", err
	}
	res, err := r.push(ctx, true, candidate+":"+expected, head+":"+candidate)
	if err != nil {
		return "", fmt.Errorf("push %s: %w", candidate, err)
	}
	if why := res.rejected(); why != "" {
		if sha, ok, lerr := r.lsRemote(ctx, candidate); lerr == nil && ok && sha == head {
			return head, nil // an earlier push of ours got there
		}
		return "", fmt.Errorf("push %s: %w: %s", candidate, ErrRejected, why)
	}
	return head, nil
}

// checkCandidate: a full ref under refs/wave/candidates/, never a branch.
func (r *Repo) checkCandidate(ctx context.Context, ref string) error {
	if !strings.HasPrefix(ref, "refs/wave/candidates/") {
		return fmt.Errorf("candidate %q: want a ref under refs/wave/candidates/", ref)
	}
	return r.checkFullRef(ctx, ref)
}
