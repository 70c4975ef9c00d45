package gitops

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// The claim pushes of concurrent callers in one Repo (a supervisor claims
// the issues of a refill side by side) are coalesced: while one push
// runs, the claims asked for meanwhile wait and then go together in the
// next one (internal/coalesce). That push is not atomic: each ref goes
// under its own --force-with-lease and the remote applies each as its
// own compare-and-swap, so every claim is won or lost alone, exactly as
// when pushed by itself; only the processes (push, receive-pack, the
// remote's gc check) are shared. One ref appears once per push (git
// refuses two updates of one ref): a second claim of the same issue
// waits for the next batch.

// claimPush is one caller's claim ref update.
type claimPush struct{ ref, expect, sha string }

func (op claimPush) key() string { return op.ref }

// claimAnswer is the remote's answer for one claimPush.
type claimAnswer struct {
	res pushResult
	err error
}

// pushClaim pushes sha to the claim ref under --force-with-lease=ref:expect
// ("" = must not exist), in the next batch, and returns the remote's
// answer for that ref as push does. The leader's push is bounded by the
// git timeout.
func (r *Repo) pushClaim(ctx context.Context, ref, expect, sha string) (pushResult, error) {
	a := r.claimPushes.Do(ctx, claimPush{ref: ref, expect: expect, sha: sha})
	return a.res, a.err
}

// pushClaimBatch runs one push of every op's ref and answers each op
// with its ref's status line.
func (r *Repo) pushClaimBatch(ctx context.Context, batch []claimPush) []claimAnswer {
	args := []string{"push", "--porcelain", "--no-verify"}
	for _, op := range batch {
		args = append(args, "--force-with-lease="+op.ref+":"+op.expect)
	}
	args = append(args, r.Remote)
	for _, op := range batch {
		args = append(args, op.sha+":"+op.ref)
	}
	// Claim refs live under refs/heads/: the push moves our tracking refs
	// of them, never while a fetch writes tracking refs.
	r.fetchMu.Lock()
	out, err := r.git(ctx, r.Dir, args...)
	r.fetchMu.Unlock()
	status := parsePushAll(out)
	answers := make([]claimAnswer, len(batch))
	for i, op := range batch {
		a := &answers[i]
		res, ok := status[op.ref]
		switch {
		case ok && res.flag == '!' && hookRefusal(res.summary) != "":
			// Not an answer about the ref: the remote takes no update now.
			ge := &Error{Dir: r.Dir, Args: args, ExitCode: exitCode(err), Stderr: sanitize(res.summary), Transient: hookRefusal(res.summary)}
			var orig *Error
			if errors.As(err, &orig) {
				ge.Stderr, ge.Err = ge.Stderr+": "+orig.Stderr, orig.Err
			}
			a.err = ge
		case ok && res.flag == '!':
			a.res = res
		case ok:
			a.res = res // taken; another ref's refusal fails the whole command
		case err != nil:
			a.err = err
		default:
			a.err = fmt.Errorf("push %s: no status line in output", sanitize(op.ref))
		}
	}
	return answers
}

// parsePushAll reads every status line ("<flag>\t<from>:<to>\t<summary>")
// of git push --porcelain output, by destination ref.
func parsePushAll(out string) map[string]pushResult {
	m := map[string]pushResult{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.SplitN(l, "\t", 3)
		if len(f) < 2 || len(f[0]) != 1 {
			continue
		}
		_, dst, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		res := pushResult{flag: f[0][0]}
		if len(f) == 3 {
			res.summary = strings.TrimSpace(f[2])
		}
		m[dst] = res
	}
	return m
}
