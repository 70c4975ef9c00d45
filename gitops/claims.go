package gitops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Claim refs live on the remote under claimPrefix; local copies (fetched
// to read their messages) under claimCopies, out of the branch namespace.
const (
	claimPrefix = "refs/heads/wave-claims/"
	claimCopies = "refs/wave/claims/"
)

func claimRef(n int) string { return claimPrefix + strconv.Itoa(n) }

// toolIdentity keeps claim commits independent of the user's git identity
// (which may be unset on a CI host).
func toolIdentity() []string {
	return []string{
		"GIT_AUTHOR_NAME=wave-orchestrator", "GIT_AUTHOR_EMAIL=wave-orchestrator@localhost",
		"GIT_COMMITTER_NAME=wave-orchestrator", "GIT_COMMITTER_EMAIL=wave-orchestrator@localhost",
	}
}

// Claim creates the claim ref on the remote only if it does not exist: a
// push without '+' under --force-with-lease=<ref>: (expected: absent), which
// the remote applies as a compare-and-swap. When another holder exists,
// won is false and holder is theirs; when we win, holder is c with its SHA.
func (r *Repo) Claim(ctx context.Context, c ClaimInfo) (bool, ClaimInfo, error) {
	return r.swapClaim(ctx, c, "")
}

// TakeOver replaces the claim only if the remote still holds oldSHA (a
// stale claim, or our own lease being renewed).
func (r *Repo) TakeOver(ctx context.Context, oldSHA string, c ClaimInfo) (bool, ClaimInfo, error) {
	if oldSHA == "" {
		return false, ClaimInfo{}, fmt.Errorf("take over claim #%d: no old sha given", c.Issue)
	}
	return r.swapClaim(ctx, c, oldSHA)
}

// Renewal is what Renew found and did.
type Renewal struct {
	Won       bool      // the claim on origin is ours, as Holder says
	Holder    ClaimInfo // ours (with its SHA) when won, else the other holder's
	Recreated bool      // the ref was gone (deleted by hand or by a tool) and is created again
}

// Renew moves our claim on c.Issue from sha (the commit we last pushed;
// "" when unknown) to a new commit carrying c. A claim ref that is gone is
// created again: it was ours, and the create is the same compare-and-swap
// as a first claim, so if anyone claimed the issue in between theirs
// stands and Won is false. A claim at another commit is never replaced:
// Won is false and Holder says whose it is (possibly ours, from a renewal
// whose record was lost: the caller compares the run).
func (r *Repo) Renew(ctx context.Context, sha string, c ClaimInfo) (Renewal, error) {
	if sha != "" {
		won, holder, err := r.swapClaim(ctx, c, sha)
		if err != nil || won || holder.SHA != "" {
			return Renewal{Won: won, Holder: holder}, err
		}
	}
	won, holder, err := r.swapClaim(ctx, c, "")
	return Renewal{Won: won, Holder: holder, Recreated: won && sha != ""}, err
}

// ClaimHeads is the commit of every claim ref on the remote, by issue, in
// one ls-remote: how a run checks all the claims it holds at once.
func (r *Repo) ClaimHeads(ctx context.Context) (map[int]string, error) {
	out, err := r.git(ctx, r.Dir, "ls-remote", r.Remote, claimPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("list claim refs on %s: %w", r.Remote, err)
	}
	heads := map[int]string{}
	for _, l := range strings.Split(out, "\n") {
		sha, name, ok := strings.Cut(strings.TrimSpace(l), "\t")
		if !ok || !strings.HasPrefix(name, claimPrefix) {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(name, claimPrefix)); err == nil && n > 0 {
			heads[n] = sha
		}
	}
	return heads, nil
}

// swapClaim pushes a new claim commit for c.Issue if the remote ref is at
// expect ("" = absent). A rejection reads the holder back; a ref released
// between our push and that read is retried.
func (r *Repo) swapClaim(ctx context.Context, c ClaimInfo, expect string) (bool, ClaimInfo, error) {
	msg, err := claimMessage(c)
	if err != nil {
		return false, ClaimInfo{}, err
	}
	sha, err := r.claimCommit(ctx, msg)
	if err != nil {
		return false, ClaimInfo{}, fmt.Errorf("claim #%d: %w", c.Issue, err)
	}
	ref := claimRef(c.Issue)
	for attempt := 0; attempt < 3; attempt++ {
		// '=' (already at our commit) is a retry of our own claim: the
		// message carries our run, pid and lease, so nobody else made it.
		res, err := r.pushClaim(ctx, ref, expect, sha)
		if err != nil {
			return false, ClaimInfo{}, fmt.Errorf("claim #%d: push %s: %w", c.Issue, ref, err)
		}
		if res.rejected() == "" {
			c.SHA = sha
			return true, c, nil
		}
		holder, ok, err := r.ReadClaim(ctx, c.Issue)
		if err != nil {
			return false, ClaimInfo{}, fmt.Errorf("claim #%d: lost the race, reading the holder: %w", c.Issue, err)
		}
		switch {
		case ok && holder.SHA == sha:
			return true, holder, nil
		case ok:
			return false, holder, nil
		case expect != "":
			return false, ClaimInfo{}, nil // the claim we meant to take over is gone
		}
	}
	return false, ClaimInfo{}, fmt.Errorf("claim #%d: %s kept changing on %s", c.Issue, ref, r.Remote)
}

// claimCommit writes an orphan commit of the empty tree carrying msg.
func (r *Repo) claimCommit(ctx context.Context, msg string) (string, error) {
	tree, err := r.emptyTreeID(ctx)
	if err != nil {
		return "", err
	}
	out, err := r.do(ctx, call{dir: r.Dir, args: []string{"commit-tree", "--no-gpg-sign", tree}, stdin: msg, env: toolIdentity()})
	if err != nil {
		return "", fmt.Errorf("write claim commit: %w", err)
	}
	return firstLine(out), nil
}

// emptyTreeID writes (once per Repo) and returns the empty tree, whose id
// depends on the repository's hash algorithm.
func (r *Repo) emptyTreeID(ctx context.Context) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.emptyTree != "" {
		return r.emptyTree, nil
	}
	out, err := r.git(ctx, r.Dir, "mktree")
	if err != nil {
		return "", fmt.Errorf("write empty tree: %w", err)
	}
	r.emptyTree = firstLine(out)
	return r.emptyTree, nil
}

// ReadClaim reads the claim on issue from the remote; ok false when none.
func (r *Repo) ReadClaim(ctx context.Context, issue int) (ClaimInfo, bool, error) {
	ref := claimRef(issue)
	for attempt := 0; attempt < 3; attempt++ {
		sha, ok, err := r.lsRemote(ctx, ref)
		if err != nil || !ok {
			if err != nil {
				err = fmt.Errorf("read claim %s: %w", ref, err)
			}
			return ClaimInfo{}, false, err
		}
		msg, err := r.commitMessage(ctx, sha)
		if err != nil {
			// Not here yet: fetch our copy. The ref may move meanwhile, so
			// the outer loop asks the remote again.
			if ferr := r.Fetch(ctx, "+"+ref+":"+claimCopies+strconv.Itoa(issue)); ferr != nil {
				r.log.Debug("claim fetch failed", "ref", ref, "err", ferr)
			}
			if msg, err = r.commitMessage(ctx, sha); err != nil {
				continue
			}
		}
		c, err := parseClaim(ref, issue, sha, msg)
		return c, err == nil, err
	}
	return ClaimInfo{}, false, fmt.Errorf("read claim %s: could not fetch its commit from %s", ref, r.Remote)
}

// commitMessage is the message of a commit present in the clone.
func (r *Repo) commitMessage(ctx context.Context, sha string) (string, error) {
	out, err := r.git(ctx, r.Dir, "cat-file", "commit", sha)
	if err != nil {
		return "", err
	}
	_, msg, _ := strings.Cut(out, "\n\n")
	return msg, nil
}

// ListClaims returns every claim on the remote, by issue. Claims that do
// not parse are left out and reported together in err (each naming its
// ref, wrapping ErrBadClaim), next to the claims that did parse.
func (r *Repo) ListClaims(ctx context.Context) ([]ClaimInfo, error) {
	spec := "+" + claimPrefix + "*:" + claimCopies + "*"
	r.fetchMu.Lock()
	_, err := r.git(ctx, r.Dir, "fetch", "--quiet", "--no-write-fetch-head", "--prune", r.Remote, spec)
	r.fetchMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("list claims: fetch from %s: %w", r.Remote, err)
	}
	out, err := r.git(ctx, r.Dir, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(contents)%00", claimCopies)
	if err != nil {
		return nil, fmt.Errorf("list claims: %w", err)
	}
	var claims []ClaimInfo
	var bad []error
	f := strings.Split(out, "\x00")
	for i := 0; i+2 < len(f); i += 3 {
		local := strings.TrimPrefix(f[i], "\n")
		n, convErr := strconv.Atoi(strings.TrimPrefix(local, claimCopies))
		ref := claimPrefix + strings.TrimPrefix(local, claimCopies)
		if convErr != nil {
			bad = append(bad, fmt.Errorf("%w at %s: not an issue number", ErrBadClaim, sanitize(ref)))
			continue
		}
		c, err := parseClaim(ref, n, f[i+1], f[i+2])
		if err != nil {
			bad = append(bad, err)
			continue
		}
		claims = append(claims, c)
	}
	slices.SortFunc(claims, func(a, b ClaimInfo) int { return a.Issue - b.Issue })
	return claims, errors.Join(bad...)
}

// Release deletes the claim on issue if the remote still holds sha. An
// absent claim is nil; a claim now held by someone else is ErrRejected.
func (r *Repo) Release(ctx context.Context, issue int, sha string) error {
	ref := claimRef(issue)
	if sha == "" {
		return fmt.Errorf("release %s: no sha given", ref)
	}
	res, err := r.push(ctx, true, ref+":"+sha, ":"+ref)
	if err != nil {
		return fmt.Errorf("release %s: %w", ref, err)
	}
	if res.rejected() == "" {
		return nil
	}
	now, ok, err := r.lsRemote(ctx, ref)
	if err != nil {
		return fmt.Errorf("release %s: %w", ref, err)
	}
	if !ok {
		return nil
	}
	return fmt.Errorf("release %s: %w: it is at %s, not %s", ref, ErrRejected, short(now), short(sha))
}
