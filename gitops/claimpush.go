package gitops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// claimPusher coalesces the claim pushes of concurrent callers in one
// Repo (a supervisor claims the issues of a refill side by side): while
// one push runs, the claims asked for meanwhile wait and then go together
// in the next one. That push is not atomic: each ref goes under its own
// --force-with-lease and the remote applies each as its own
// compare-and-swap, so every claim is won or lost alone, exactly as when
// pushed by itself; only the processes (push, receive-pack, the remote's
// gc check) are shared. No caller waits for a batch to fill: a claim
// asked for while nothing is pushed goes at once.
type claimPusher struct {
	mu      sync.Mutex
	queue   []*claimPush
	running bool
}

// claimPush is one caller's claim ref update and, once done, its answer.
type claimPush struct {
	ref, expect, sha string
	res              pushResult
	err              error
	done             chan struct{}
}

// pushClaim pushes sha to the claim ref under --force-with-lease=ref:expect
// ("" = must not exist), in the next batch, and returns the remote's
// answer for that ref as push does.
func (r *Repo) pushClaim(ctx context.Context, ref, expect, sha string) (pushResult, error) {
	op := &claimPush{ref: ref, expect: expect, sha: sha, done: make(chan struct{})}
	p := &r.claimPushes
	p.mu.Lock()
	p.queue = append(p.queue, op)
	lead := !p.running
	p.running = true
	p.mu.Unlock()
	if lead {
		r.serveClaimPushes(ctx)
	}
	<-op.done // the leader's push is bounded by the git timeout
	return op.res, op.err
}

// serveClaimPushes pushes batches until no claim waits. One ref appears
// once per push (git refuses two updates of one ref): a second claim of
// the same issue waits for the next batch.
func (r *Repo) serveClaimPushes(ctx context.Context) {
	p := &r.claimPushes
	for {
		p.mu.Lock()
		var batch, rest []*claimPush
		seen := map[string]bool{}
		for _, op := range p.queue {
			if seen[op.ref] {
				rest = append(rest, op)
				continue
			}
			seen[op.ref] = true
			batch = append(batch, op)
		}
		p.queue = rest
		if len(batch) == 0 {
			p.running = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		r.pushClaimBatch(ctx, batch)
	}
}

// pushClaimBatch runs one push of every op's ref and hands each op its
// ref's status line.
func (r *Repo) pushClaimBatch(ctx context.Context, batch []*claimPush) {
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
	for _, op := range batch {
		res, ok := status[op.ref]
		switch {
		case ok && res.flag == '!' && hookRefusal(res.summary) != "":
			// Not an answer about the ref: the remote takes no update now.
			ge := &Error{Dir: r.Dir, Args: args, ExitCode: exitCode(err), Stderr: sanitize(res.summary), Transient: hookRefusal(res.summary)}
			var orig *Error
			if errors.As(err, &orig) {
				ge.Stderr, ge.Err = ge.Stderr+": "+orig.Stderr, orig.Err
			}
			op.err = ge
		case ok && res.flag == '!':
			op.res = res
		case ok:
			op.res = res // taken; another ref's refusal fails the whole command
		case err != nil:
			op.err = err
		default:
			op.err = fmt.Errorf("push %s: no status line in output", sanitize(op.ref))
		}
		close(op.done)
	}
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
