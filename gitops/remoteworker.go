package gitops

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Supervisor-side operations on a worker whose checkout lives elsewhere
// (a pod's clone on kubernetes): its runner pushes the worker branch, its
// snapshots and its result to origin, and the supervisor brings them into
// its own clone to count, merge and salvage them, then deletes what the
// run left on origin.

// FetchWorker fetches refs/heads/<branch> from the remote into the local
// branch of the same name, forcibly (the runner may have rewritten it
// under its lease; the local branch is only ever a copy of the remote's).
// ok is false when the remote has no such branch: nothing is changed.
// What a pod pushed is checked as a local worker's clone is
// (fetchWorkerRef): an object git's checks refuse is ErrRefusedObject, a
// branch sharing no history with base (the wave branch's ref)
// ErrNoCommonHistory.
func (r *Repo) FetchWorker(ctx context.Context, branch, base string) (sha string, ok bool, err error) {
	if err := r.checkBranch(ctx, branch); err != nil {
		return "", false, err
	}
	ref := "refs/heads/" + branch
	return r.fetchWorkerRef(ctx, ref, ref, base)
}

// FetchCandidate fetches the candidate ref a pod pushed (CandidateRef)
// into the local branch, forcibly, checked, as FetchWorker does for a
// branch; ok is false when origin has no such candidate (nothing is
// changed).
func (r *Repo) FetchCandidate(ctx context.Context, candidate, branch, base string) (sha string, ok bool, err error) {
	if err := r.checkBranch(ctx, branch); err != nil {
		return "", false, err
	}
	if err := r.checkCandidate(ctx, candidate); err != nil {
		return "", false, err
	}
	return r.fetchWorkerRef(ctx, candidate, "refs/heads/"+branch, base)
}

// fetchWorkerRef fetches the remote's ref, a worker's work its pod
// pushed, into the local ref local, forcibly, with the checks of a fetch
// from a local worker's clone: every object it brings checked
// (fsckStrict; a refusal fetches nothing), and its tip sharing history
// with base ("": not looked at).
func (r *Repo) fetchWorkerRef(ctx context.Context, ref, local, base string) (string, bool, error) {
	if base != "" && strings.HasPrefix(base, "-") {
		return "", false, fmt.Errorf("fetch %s: invalid base %q", sanitize(ref), base)
	}
	if ferr := r.fetchChecked(ctx, "+"+ref+":"+local); ferr != nil {
		if rerr := refusal(ferr); errors.Is(rerr, ErrRefusedObject) {
			return "", false, fmt.Errorf("fetch %s: %w", sanitize(ref), rerr)
		}
		_, there, err := r.lsRemote(ctx, ref)
		switch {
		case err != nil:
			return "", false, fmt.Errorf("fetch %s: %w", sanitize(ref), err)
		case there:
			return "", false, fmt.Errorf("fetch %s: %w", sanitize(ref), ferr)
		}
		return "", false, nil
	}
	sha, ok, err := r.localRef(ctx, local)
	if err != nil || !ok {
		return "", false, fmt.Errorf("fetch %s: not in the clone after the fetch: %v", sanitize(ref), err)
	}
	if base != "" && r.noCommonHistory(ctx, base, sha, nil) {
		return "", false, fmt.Errorf("fetch %s: its tip %s: %w", sanitize(ref), short(sha), ErrNoCommonHistory)
	}
	return sha, true, nil
}

// RemoteRef is the sha of one full ref on the remote; ok is false when
// the remote has none.
func (r *Repo) RemoteRef(ctx context.Context, ref string) (string, bool, error) {
	if err := r.checkFullRef(ctx, ref); err != nil {
		return "", false, err
	}
	return r.lsRemote(ctx, ref)
}

// FetchRef fetches one full ref (refs/wave/salvage/3/a1, a run's result
// ref) from the remote into the local ref of the same name, forcibly.
// ok is false when the remote has no such ref.
// A pod pushes them: their objects are checked as FetchWorker's are.
func (r *Repo) FetchRef(ctx context.Context, ref string) (sha string, ok bool, err error) {
	if err := r.checkFullRef(ctx, ref); err != nil {
		return "", false, err
	}
	return r.fetchWorkerRef(ctx, ref, ref, "")
}

// RemoteRefs lists the remote's refs under each prefix (a full ref name
// ending in "/", e.g. "refs/wave/salvage/3/"): name → sha.
func (r *Repo) RemoteRefs(ctx context.Context, prefixes ...string) (map[string]string, error) {
	args := []string{"ls-remote", "--refs", r.Remote}
	for _, p := range prefixes {
		if !strings.HasPrefix(p, "refs/") || !strings.HasSuffix(p, "/") || strings.ContainsAny(p, "*?[\\") {
			return nil, fmt.Errorf("remote refs: invalid prefix %q", p)
		}
		args = append(args, p+"*")
	}
	out, err := r.git(ctx, r.Dir, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s on %s: %w", strings.Join(prefixes, " "), r.Remote, err)
	}
	refs := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		sha, name, ok := strings.Cut(strings.TrimSpace(l), "\t")
		if !ok {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				refs[name] = sha
				break
			}
		}
	}
	return refs, nil
}

// DeleteRemoteRefs deletes refs (name → the sha just listed) on the
// remote, each only while it still points at that sha (a lease: a ref a
// runner moved meanwhile stays, as does one already gone). Copies in the
// clone stay (a local worktree's snapshots live there too). List, then
// delete: run again after a crash it deletes what is left. It returns how
// many it deleted.
func (r *Repo) DeleteRemoteRefs(ctx context.Context, refs map[string]string) (int, error) {
	if len(refs) == 0 {
		return 0, nil
	}
	names := make([]string, 0, len(refs))
	for name := range refs {
		if err := r.checkFullRef(ctx, name); err != nil {
			return 0, err
		}
		if strings.HasPrefix(name, "refs/heads/") {
			return 0, fmt.Errorf("delete %s: a branch; use SafeDelete", sanitize(name))
		}
		names = append(names, name)
	}
	sort.Strings(names)
	args := []string{"push", "--porcelain", r.Remote}
	for _, name := range names {
		args = append(args, "--force-with-lease="+name+":"+refs[name])
	}
	for _, name := range names {
		args = append(args, ":"+name)
	}
	out, err := r.git(ctx, r.Dir, args...)
	var deleted []string
	answered := 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.SplitN(l, "\t", 3)
		if len(f) < 2 || len(f[0]) != 1 || !strings.Contains(f[1], ":") {
			continue
		}
		answered++
		if f[0] == "-" {
			_, name, _ := strings.Cut(f[1], ":")
			deleted = append(deleted, name)
		}
		// "!" (stale info): the ref moved or went since it was listed;
		// a moved one is someone's newer work and stays.
	}
	if err != nil && answered == 0 {
		return 0, fmt.Errorf("delete %d ref(s) on %s: %w", len(names), r.Remote, err)
	}
	return len(deleted), nil
}

// ReadFile is the content of path in the tree of rev (a commit in the
// clone); ok is false when the tree has no such file.
func (r *Repo) ReadFile(ctx context.Context, rev, path string) (data []byte, ok bool, err error) {
	if rev == "" || strings.HasPrefix(rev, "-") || strings.Contains(rev, ":") {
		return nil, false, fmt.Errorf("read file: invalid revision %q", rev)
	}
	if path == "" || strings.HasPrefix(path, "/") || strings.HasPrefix(path, "-") {
		return nil, false, fmt.Errorf("read file: invalid path %q", path)
	}
	spec := rev + ":" + path
	if _, err := r.git(ctx, r.Dir, "cat-file", "-e", spec); err != nil {
		if exitCode(err) == 128 || exitCode(err) == 1 {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("read %s: %w", sanitize(spec), err)
	}
	out, err := r.git(ctx, r.Dir, "cat-file", "blob", spec)
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", sanitize(spec), err)
	}
	return []byte(out), true, nil
}
