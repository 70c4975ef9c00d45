package gitops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// renewIntents is where RenewClaims records, before its push, the claim
// commit it means to put on origin for each issue: a supervisor killed
// between the push and its own record of it finds its renewal there
// (already on origin: nothing is pushed again) instead of writing another.
const renewIntents = "refs/wave/claim-renew/"

func renewIntentRef(n int) string { return renewIntents + strconv.Itoa(n) }

// RenewRequest is one claim of a batch renewal: Old is the commit this
// run last recorded for the issue ("" when unknown), Claim the new claim
// (a fresh lease).
type RenewRequest struct {
	Old   string
	Claim ClaimInfo
}

// RenewOutcome is what a batch renewal found and did for one issue: Err
// is set when its claim could not be judged (ErrBadClaim: the ref holds
// no claim).
type RenewOutcome struct {
	Renewal
	Err error
}

// RenewClaims renews many claims of one run in one atomic push (git push
// --atomic, each ref under its own --force-with-lease), following Merge's
// pattern: a read-only look at origin first (one ls-remote), the intended
// commits recorded in the clone (renewIntents) before the push, success
// only once a fresh look at origin shows them.
//
// Per issue, as Renew: a claim at Old is moved to the new commit; a gone
// ref is created again; a claim at another commit is never replaced
// unless it is this run's own (same run id: a renewal whose record was
// lost), which is renewed from there. A claim another run took stays
// theirs (Won false, Holder theirs).
//
// The push is all or nothing: when a lease fails (a claim changed between
// the look and the push) origin takes none of the batch, and the batch is
// looked at and pushed again, that claim now judged as it is. One atomic
// update keeps "what did the batch do" a single yes or no, so a crash
// leaves either all of the batch on origin or none of it.
//
// Idempotent across a kill at any point: an intent already on origin is
// reported won without a push; one recorded but not pushed is pushed as
// it is (its lease kept, when at least half of the asked-for lease is
// left). An origin that refuses atomic pushes ("does not support
// --atomic") gets one push per claim, each still under its lease.
func (r *Repo) RenewClaims(ctx context.Context, reqs []RenewRequest) (map[int]RenewOutcome, error) {
	out := make(map[int]RenewOutcome, len(reqs))
	todo := slices.Clone(reqs)
	for attempt := 0; attempt < 3 && len(todo) > 0; attempt++ {
		plan, err := r.planRenewals(ctx, todo, out)
		if err != nil {
			return out, err
		}
		if len(plan) == 0 {
			return out, nil
		}
		if err := r.recordRenewIntents(ctx, plan); err != nil {
			return out, err
		}
		pushed, err := r.pushRenewals(ctx, plan)
		if err != nil {
			return out, err
		}
		if !pushed {
			r.log.Info("claim renewal: a lease no longer held; looking again", "claims", len(plan), "attempt", attempt+1)
		}
		// Proof, whatever the push said: what origin holds now.
		heads, err := r.ClaimHeads(ctx)
		if err != nil {
			return out, fmt.Errorf("renew claims: pushed, confirming: %w", err)
		}
		todo = todo[:0]
		for _, p := range plan {
			if heads[p.claim.Issue] == p.claim.SHA {
				out[p.claim.Issue] = RenewOutcome{Renewal: Renewal{Won: true, Holder: p.claim, Recreated: p.expect == "" && p.old != ""}}
				continue
			}
			todo = append(todo, RenewRequest{Old: p.old, Claim: p.req})
		}
	}
	if len(todo) > 0 {
		return out, fmt.Errorf("renew claims: %w: the claims of %d issue(s) kept changing on %s", ErrRejected, len(todo), r.Remote)
	}
	return out, nil
}

// renewal is one planned update of a batch: the claim ref from expect
// ("" = absent) to claim.SHA.
type renewal struct {
	req    ClaimInfo // as asked (no SHA)
	old    string    // as asked
	expect string
	claim  ClaimInfo // the commit to push, SHA set
	reused bool      // claim is a recorded intent, not a new commit
}

// planRenewals is the read-only precheck: it settles in out the issues
// needing no push (already renewed by an intent on origin, held by
// another run, not a claim) and plans the others.
func (r *Repo) planRenewals(ctx context.Context, reqs []RenewRequest, out map[int]RenewOutcome) ([]renewal, error) {
	heads, err := r.ClaimHeads(ctx)
	if err != nil {
		return nil, fmt.Errorf("renew claims: %w", err)
	}
	intents, err := r.renewIntentsFor(ctx, reqs)
	if err != nil {
		return nil, err
	}
	var plan []renewal
	for _, q := range reqs {
		n := q.Claim.Issue
		head := heads[n]
		intent, ok := intents[n]
		if ok && head == intent.SHA {
			out[n] = RenewOutcome{Renewal: Renewal{Won: true, Holder: intent}} // pushed before a kill
			continue
		}
		p := renewal{req: q.Claim, old: q.Old, expect: head}
		if head != "" && head != q.Old {
			holder, found, err := r.ReadClaim(ctx, n)
			switch {
			case err != nil && errors.Is(err, ErrBadClaim):
				out[n] = RenewOutcome{Err: err}
				continue
			case err != nil:
				return nil, fmt.Errorf("renew claim #%d: %w", n, err)
			case !found:
				p.expect = "" // released since the look
			case holder.RunID != q.Claim.RunID:
				out[n] = RenewOutcome{Renewal: Renewal{Holder: holder}}
				continue
			default:
				p.expect = holder.SHA // ours, from a renewal whose record was lost
			}
		}
		if ok && intent.SHA != p.expect {
			p.claim, p.reused = intent, true
		} else if p.claim, err = r.newClaimCommit(ctx, q.Claim); err != nil {
			return nil, err
		}
		plan = append(plan, p)
	}
	return plan, nil
}

// renewIntentsFor reads the recorded intents (one for-each-ref) and
// keeps those still good for reqs: the same run's claim of the issue
// with at least half of the asked-for lease left.
func (r *Repo) renewIntentsFor(ctx context.Context, reqs []RenewRequest) (map[int]ClaimInfo, error) {
	out, err := r.git(ctx, r.Dir, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(contents)%00", renewIntents)
	if err != nil {
		return nil, fmt.Errorf("renew claims: read intents: %w", err)
	}
	found := map[int]ClaimInfo{}
	f := strings.Split(out, "\x00")
	for i := 0; i+2 < len(f); i += 3 {
		n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(f[i], "\n"), renewIntents))
		if err != nil {
			continue
		}
		if c, err := parseClaim(claimRef(n), n, f[i+1], f[i+2]); err == nil {
			found[n] = c
		}
	}
	good := map[int]ClaimInfo{}
	now := time.Now()
	for _, q := range reqs {
		c, ok := found[q.Claim.Issue]
		if !ok || c.RunID != q.Claim.RunID || c.Host != q.Claim.Host {
			continue
		}
		if half := q.Claim.Lease.Sub(now) / 2; c.Lease.Sub(now) >= half {
			good[q.Claim.Issue] = c
		}
	}
	return good, nil
}

// newClaimCommit writes the commit carrying c and returns c with its SHA.
func (r *Repo) newClaimCommit(ctx context.Context, c ClaimInfo) (ClaimInfo, error) {
	msg, err := claimMessage(c)
	if err != nil {
		return ClaimInfo{}, err
	}
	sha, err := r.claimCommit(ctx, msg)
	if err != nil {
		return ClaimInfo{}, fmt.Errorf("renew claim #%d: %w", c.Issue, err)
	}
	c.SHA = sha
	return c, nil
}

// recordRenewIntents points every planned issue's intent ref at the
// commit about to be pushed, in one transaction.
func (r *Repo) recordRenewIntents(ctx context.Context, plan []renewal) error {
	var b strings.Builder
	for _, p := range plan {
		if !p.reused {
			fmt.Fprintf(&b, "update %s %s\n", renewIntentRef(p.claim.Issue), p.claim.SHA)
		}
	}
	if b.Len() == 0 {
		return nil
	}
	if _, err := r.do(ctx, call{dir: r.Dir, args: []string{"update-ref", "-m", "wave-orchestrator claim renewal", "--stdin"}, stdin: b.String()}); err != nil {
		return fmt.Errorf("renew claims: record the renewals: %w", err)
	}
	return nil
}

// pushRenewals pushes the plan in one atomic push; false when origin
// refused it (a lease no longer held). An origin that does not do atomic
// pushes is given one push per claim.
func (r *Repo) pushRenewals(ctx context.Context, plan []renewal) (bool, error) {
	args := []string{"push", "--porcelain", "--no-verify", "--atomic"}
	for _, p := range plan {
		args = append(args, "--force-with-lease="+claimRef(p.claim.Issue)+":"+p.expect)
	}
	args = append(args, r.Remote)
	for _, p := range plan {
		args = append(args, p.claim.SHA+":"+claimRef(p.claim.Issue))
	}
	// Claim refs are pushed under refs/heads/: our tracking refs of them
	// move too, never while a fetch writes tracking refs.
	r.fetchMu.Lock()
	res, err := r.git(ctx, r.Dir, args...)
	r.fetchMu.Unlock()
	if err != nil && atomicRefused(err) {
		r.log.Info("claim renewal: origin does not take atomic pushes; one push per claim", "remote", r.Remote, "claims", len(plan))
		return r.pushRenewalsEach(ctx, plan)
	}
	refused := false
	for _, l := range strings.Split(res, "\n") {
		f := strings.SplitN(l, "\t", 3)
		if len(f) < 3 || f[0] != "!" {
			continue
		}
		if cause := hookRefusal(strings.TrimSpace(f[2])); cause != "" {
			// Not about a lease: origin takes no update now.
			return false, &Error{Dir: r.Dir, Args: args, ExitCode: exitCode(err), Stderr: sanitize(f[2]), Transient: cause}
		}
		refused = true
	}
	if refused {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("renew claims: push: %w", err)
	}
	return true, nil
}

// atomicRefused: git push --atomic failed because the remote does not
// advertise the atomic capability (receive.advertiseAtomic false, or a
// server that never had it); git says so before sending anything.
func atomicRefused(err error) bool {
	var ge *Error
	return errors.As(err, &ge) && strings.Contains(ge.Stderr, "does not support --atomic")
}

// pushRenewalsEach is the fallback: one push per claim, each under its
// lease; a refused one is judged again by the caller's next look.
func (r *Repo) pushRenewalsEach(ctx context.Context, plan []renewal) (bool, error) {
	all := true
	for _, p := range plan {
		ref := claimRef(p.claim.Issue)
		res, err := r.push(ctx, true, ref+":"+p.expect, p.claim.SHA+":"+ref)
		if err != nil {
			return false, fmt.Errorf("renew claim #%d: push %s: %w", p.claim.Issue, ref, err)
		}
		all = all && res.rejected() == ""
	}
	return all, nil
}
