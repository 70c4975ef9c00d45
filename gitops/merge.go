package gitops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MergeRequest is one entry of the merge queue.
type MergeRequest struct {
	Wave    string // branch name on the remote
	Worker  string // worker branch (local or remote-tracking ref, or sha)
	Message string // merge commit message (include "Merge #<n>")
	// Verify runs in a scratch worktree checked out at the would-be merge
	// commit (removed after); nil = no verify. An error = failed verify:
	// the wave ref does not move.
	Verify         func(ctx context.Context, dir, commit string) error
	MaxPushRetries int // default 3
	// Prepared is a merge commit PrepareMerge made and the caller
	// verified (Verify is then not run): it is pushed as it is when its
	// parents are the remote's wave tip and the worker tip, and is
	// ErrStalePrepared, nothing merged, otherwise.
	Prepared string
	// Expect is the wave tip the caller last recorded: the remote's wave
	// branch anywhere else (but at this clone's own prepared merge on
	// top of it) is a ForeignCommitError, and nothing is merged. "" checks
	// nothing.
	Expect string
}

// MergeResult is what a merge did. Commit is the merge commit of this
// worker now in the remote wave branch ("" when the worker tip got there
// without one: no commits, or a fast-forward made elsewhere).
type MergeResult struct {
	Already               bool     // worker tip was already an ancestor of the remote wave branch
	Conflicts             []string // non-empty: conflict, nothing moved
	Commit                string
	WaveBefore, WaveAfter string
	Files                 []string // files the worker changed since its merge base with the wave
}

// mergeState is the remote and local view a merge attempt starts from.
type mergeState struct {
	origin         string   // remote wave tip, just fetched
	worker         string   // worker tip
	pending        string   // the merge intent ref (pendingRef), "" when absent
	pendingParents []string // parents of pending
	local          string   // the user's refs/heads/<wave>, "" when absent
}

// pendingRef is where a merge commit waits between verify and push: the
// supervisor's own ref, outside refs/heads, so no worktree can have it
// checked out. It used to be refs/heads/<wave>, which moved the branch
// under a user who had switched to it (git update-ref does not check
// worktrees): their working tree went stale and their next commit there
// reverted the merges. refs/heads/<wave> is now the user's; syncLocalWave
// only fast-forwards it when that strands no working tree and drops no commit.
func pendingRef(wave string) string { return "refs/wave/merge/" + wave }

// Merge merges req.Worker into the remote wave branch:
// fetch; the remote's tip not req.Expect (nor this clone's own prepared
// merge on it) → ForeignCommitError, nothing merged; worker already in
// it → Already; merge-tree precheck (conflict →
// Conflicts, nothing moved, no worktree touched); commit-tree with parents
// (wave, worker); Verify in a scratch checkout; update-ref the intent ref
// (pendingRef) from its old value; push under --force-with-lease=<wave>:<old>;
// a rejection fetches and starts over (up to MaxPushRetries); success only
// after a fresh fetch shows the worker tip in the remote wave branch. Then
// the local branch refs/heads/<wave> catches up when it safely can
// (syncLocalWave); it is never moved while checked out, and never decides
// the merge: a user's commit there does not stop the run.
//
// It resumes from what the remote and intent refs say: after a crash
// between update-ref and push, the prepared merge commit is pushed if the
// remote is still at its first parent and recomputed otherwise; after a
// crash past the push the worker is already in — never two merges of one tip.
func (r *Repo) Merge(ctx context.Context, req MergeRequest) (MergeResult, error) {
	if err := r.checkMergeRequest(ctx, req); err != nil {
		return MergeResult{}, err
	}
	retries := req.MaxPushRetries
	if retries <= 0 {
		retries = 3
	}
	var res MergeResult
	for attempt := 0; attempt <= retries; attempt++ {
		st, err := r.mergeState(ctx, req)
		if err != nil {
			return res, err
		}
		if attempt == 0 {
			res.WaveBefore = st.origin
		}
		res.WaveAfter = st.origin
		if ok, err := r.IsAncestor(ctx, st.worker, st.origin); err != nil || ok {
			if err != nil {
				return res, fmt.Errorf("merge %s: %w", sanitize(req.Worker), err)
			}
			return r.already(ctx, req.Wave, st, res)
		}
		commit, conflicts, files, err := r.prepare(ctx, req, st)
		res.Files, res.Conflicts = files, conflicts
		if err != nil || len(conflicts) > 0 {
			return res, err
		}
		pushed, err := r.push(ctx, false, "refs/heads/"+req.Wave+":"+st.origin, commit+":refs/heads/"+req.Wave)
		rejected := pushed.rejected()
		if err != nil {
			return res, fmt.Errorf("merge %s: push %s: %w", sanitize(req.Worker), sanitize(req.Wave), err)
		}
		if rejected != "" {
			r.log.Info("merge push rejected; fetching and redoing", "wave", req.Wave, "worker", req.Worker, "attempt", attempt+1, "reason", rejected)
			continue
		}
		return r.confirm(ctx, req, st, commit, res)
	}
	return res, fmt.Errorf("merge %s into %s: %w %d times (the wave branch kept moving)", sanitize(req.Worker), sanitize(req.Wave), ErrRejected, retries+1)
}

func (r *Repo) checkMergeRequest(ctx context.Context, req MergeRequest) error {
	if err := r.checkBranch(ctx, req.Wave); err != nil {
		return fmt.Errorf("merge: wave: %w", err)
	}
	if req.Worker == "" || strings.HasPrefix(req.Worker, "-") {
		return fmt.Errorf("merge: invalid worker %q", req.Worker)
	}
	return nil
}

// mergeState fetches the wave branch and reads the remote tip, the local
// wave branch (with parents) and the worker tip.
func (r *Repo) mergeState(ctx context.Context, req MergeRequest) (mergeState, error) {
	var st mergeState
	if err := r.fetchBranches(ctx, req.Wave); err != nil {
		return st, fmt.Errorf("merge into %s: %w", sanitize(req.Wave), err)
	}
	intentRef, trackRef, localRef := pendingRef(req.Wave), r.tracking(req.Wave), "refs/heads/"+req.Wave
	out, err := r.git(ctx, r.Dir, "for-each-ref", "--format=%(refname) %(objectname) %(parent)", intentRef, trackRef, localRef)
	if err != nil {
		return st, fmt.Errorf("merge into %s: read refs: %w", sanitize(req.Wave), err)
	}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 2 && f[0] == trackRef:
			st.origin = f[1]
		case len(f) >= 2 && f[0] == intentRef:
			st.pending, st.pendingParents = f[1], f[2:]
		case len(f) >= 2 && f[0] == localRef:
			st.local = f[1]
		}
	}
	if st.origin == "" {
		if req.Expect != "" {
			return st, &ForeignCommitError{Branch: req.Wave, Expected: req.Expect}
		}
		return st, fmt.Errorf("merge into %s: %s has no such branch", sanitize(req.Wave), r.Remote)
	}
	if !ours(req.Expect, st.origin, st.pending, st.pendingParents) {
		return st, &ForeignCommitError{Branch: req.Wave, Expected: req.Expect, Found: st.origin}
	}
	w, err := r.revParse(ctx, r.Dir, req.Worker+"^{commit}")
	if err != nil {
		return st, fmt.Errorf("merge: worker: %w", err)
	}
	st.worker = w
	return st, nil
}

// prepare produces the merge commit to push and records it in the intent
// ref. An unpushed merge of exactly (remote tip, worker) left there by an
// interrupted attempt is reused: it passed verify before update-ref wrote it.
func (r *Repo) prepare(ctx context.Context, req MergeRequest, st mergeState) (commit string, conflicts, files []string, err error) {
	files, err = r.DiffNames(ctx, st.origin, st.worker)
	if err != nil {
		return "", nil, nil, err
	}
	if req.Prepared != "" {
		commit, err = r.usePrepared(ctx, req, st)
		return commit, nil, files, err
	}
	if st.pending != "" && slices.Equal(st.pendingParents, []string{st.origin, st.worker}) {
		r.log.Info("merge: resuming the unpushed merge commit", "wave", req.Wave, "commit", short(st.pending))
		return st.pending, nil, files, nil
	}
	tree, conflicts, err := r.mergeTree(ctx, st.origin, st.worker)
	if err != nil || len(conflicts) > 0 {
		return "", conflicts, files, err
	}
	commit, err = r.commitMerge(ctx, tree, st.origin, st.worker, req.Message, req.Worker, req.Wave)
	if err != nil {
		return "", nil, files, err
	}
	if req.Verify != nil {
		if err := r.VerifyAt(ctx, commit, req.Verify); err != nil {
			return "", nil, files, fmt.Errorf("merge %s at %s: %w", sanitize(req.Worker), short(commit), err)
		}
	}
	if err := r.recordPending(ctx, req.Wave, st, commit); err != nil {
		return "", nil, files, err
	}
	return commit, nil, files, nil
}

// mergeTree is the read-only precheck: git merge-tree --write-tree writes
// the merged tree as objects only (no index, no worktree). Exit 1 is a
// conflict, with the conflicted paths listed after the tree id.
func (r *Repo) mergeTree(ctx context.Context, wave, worker string) (string, []string, error) {
	out, err := r.git(ctx, r.Dir, "merge-tree", "--write-tree", "-z", "--name-only", "--no-messages", wave, worker)
	f := splitNUL(out)
	switch {
	case err == nil && len(f) > 0:
		return f[0], nil, nil
	case exitCode(err) == 1 && len(f) > 0:
		return "", dedupe(f[1:]), nil
	case err == nil:
		err = errors.New("no tree in output")
	}
	return "", nil, fmt.Errorf("merge precheck of %s into %s: %w", short(worker), short(wave), err)
}

func dedupe(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if out == nil {
		out = []string{"(unknown)"} // exit 1 always means a conflict
	}
	return out
}

// recordPending points the intent ref at commit, conditional on its
// current value (a concurrent merge in this clone loses the race instead of
// being overwritten). Whatever it held before is ours and already on the
// remote or superseded: a pushed merge, or a stale candidate whose worker
// tip is still on the worker branch.
func (r *Repo) recordPending(ctx context.Context, wave string, st mergeState, commit string) error {
	if _, err := r.git(ctx, r.Dir, "update-ref", "-m", "wave-orchestrator merge", pendingRef(wave), commit, st.pending); err != nil {
		return fmt.Errorf("merge: record the merge of %s: %w", sanitize(wave), err)
	}
	return nil
}

// confirm fetches and proves the worker tip is in the remote wave branch.
func (r *Repo) confirm(ctx context.Context, req MergeRequest, st mergeState, commit string, res MergeResult) (MergeResult, error) {
	if err := r.fetchBranches(ctx, req.Wave); err != nil {
		return res, fmt.Errorf("merge %s: pushed %s, confirming: %w", sanitize(req.Worker), short(commit), err)
	}
	after, _, err := r.localRef(ctx, r.tracking(req.Wave))
	if err != nil {
		return res, err
	}
	ok, err := r.IsAncestor(ctx, st.worker, after)
	if err != nil {
		return res, fmt.Errorf("merge %s: pushed %s, confirming: %w", sanitize(req.Worker), short(commit), err)
	}
	if !ok {
		return res, fmt.Errorf("merge %s: pushed %s but %s on %s (now %s) does not contain the worker tip", sanitize(req.Worker), short(commit), sanitize(req.Wave), r.Remote, short(after))
	}
	res.Commit, res.WaveAfter = commit, after
	// The merge was built on st.origin: a local branch still there is a
	// fast-forward away from after.
	r.syncLocalWave(ctx, req.Wave, st.local, after, st.origin)
	return res, nil
}

// already reports a worker tip the remote wave branch contains, finding
// the merge commit that brought it in (the oldest merge on the ancestry
// path with the tip as a later parent) for the caller's record.
func (r *Repo) already(ctx context.Context, wave string, st mergeState, res MergeResult) (MergeResult, error) {
	res.Already = true
	r.syncLocalWave(ctx, wave, st.local, st.origin, "")
	if st.worker == st.origin {
		return res, nil
	}
	out, err := r.git(ctx, r.Dir, "rev-list", "--ancestry-path", "--merges", "--reverse", "--parents", st.worker+".."+st.origin)
	if err != nil {
		return res, fmt.Errorf("find the merge of %s: %w", short(st.worker), err)
	}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && slices.Contains(f[2:], st.worker) {
			res.Commit = f[0]
			res.Files, err = r.DiffNames(ctx, f[1], st.worker)
			return res, err
		}
	}
	return res, nil
}

// MergeBase merges the remote's base branch into the wave branch (base
// moved mid-wave) with Merge's guarantees; once it is in, calling again is
// Already.
func (r *Repo) MergeBase(ctx context.Context, wave, base, expect string, verify func(ctx context.Context, dir, commit string) error) (MergeResult, error) {
	if err := r.checkBranch(ctx, base); err != nil {
		return MergeResult{}, err
	}
	if err := r.fetchBranches(ctx, base); err != nil {
		return MergeResult{}, fmt.Errorf("merge base %s into %s: %w", sanitize(base), sanitize(wave), err)
	}
	return r.Merge(ctx, MergeRequest{
		Wave:    wave,
		Worker:  r.tracking(base),
		Message: fmt.Sprintf("Merge %s into %s", base, wave),
		Verify:  verify,
		Expect:  expect,
	})
}
