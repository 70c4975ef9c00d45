package checkout

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// Local is a worker's own clone on this machine
// (gitops.EnsureWorkerClone): it borrows the supervisor's clone's
// objects read-only and shares nothing writable with it, so no hook or
// config a worker writes is run by anyone else. The worker's run works
// in it; the supervisor reads it without running git in it (upload-pack
// and the lens, see gitops) and fetches the worker branch from it.
type Local struct {
	o LocalOptions

	mu sync.Mutex
	// fetched is, per issue, the attempt whose ended run's branch was
	// fetched (Fetch): a merge retried fetches no more.
	fetched map[int]int
}

// LocalOptions are what a Local reads of the run it serves; the
// functions are asked at each call (the run names its wave branch once
// it opened).
type LocalOptions struct {
	// Git is the supervisor's clone.
	Git *gitops.Repo
	// Wave is the run's wave branch.
	Wave func() string
	// Tip is the wave branch's tip as the run last pushed it ("" for a
	// run whose log predates the record: origin's as the clone has it).
	Tip func() string
	// Kept is the checkout a finished run of this lane kept of issue n
	// on branch, "" when none.
	Kept func(n int, branch string) string
	// Say prints a line for the user.
	Say func(format string, args ...any)
}

// NewLocal is a Local for a run.
func NewLocal(o LocalOptions) *Local {
	if o.Kept == nil {
		o.Kept = func(int, string) string { return "" }
	}
	if o.Say == nil {
		o.Say = func(string, ...any) {}
	}
	return &Local{o: o, fetched: map[int]int{}}
}

// waveRef is the wave branch as the clone last fetched it from origin.
func (c *Local) waveRef() string { return "refs/remotes/origin/" + c.o.Wave() }

// base is what worker branches start from and are counted against: the
// wave tip the run pushed last, never a commit someone else put on
// origin's wave branch since.
func (c *Local) base() string {
	if t := c.o.Tip(); t != "" {
		return t
	}
	return c.waveRef()
}

// Prepare implements Checkout: the worker's clone is made or taken up,
// a new branch from the wave tip the run pushed last, and the worker is
// given that tip as its refs/heads/<wave> (the branch its prompt says to
// merge on a conflict). A start that fails for want of the wave branch (a
// clone that never fetched it) fetches and tries again.
func (c *Local) Prepare(ctx context.Context, is *backlog.IssueRun, branch, dir string) (bool, error) {
	if err := c.takeOverKept(ctx, is.Number, branch, dir); err != nil {
		return false, err
	}
	resumed, err := c.ensure(ctx, branch, dir)
	if err == nil {
		return resumed, nil
	}
	if ferr := c.o.Git.FetchBranch(ctx, c.o.Wave()); ferr != nil {
		if ferr := c.o.Git.Fetch(ctx); ferr != nil { // the whole of origin says why
			return false, fmt.Errorf("fetch: %w", ferr)
		}
	}
	resumed, err = c.ensure(ctx, branch, dir)
	if err != nil {
		return false, fmt.Errorf("#%d: checkout %s: %w", is.Number, dir, err)
	}
	return resumed, nil
}

func (c *Local) ensure(ctx context.Context, branch, dir string) (bool, error) {
	tip := c.o.Tip()
	if tip == "" { // a run whose log predates the record
		var err error
		if tip, err = c.o.Git.RevParse(ctx, c.waveRef()+"^{commit}"); err != nil {
			return false, err
		}
	}
	return c.o.Git.EnsureWorkerClone(ctx, gitops.WorkerCheckout{Dir: dir, Branch: branch, Start: tip,
		Refs: map[string]string{"refs/heads/" + c.o.Wave(): tip, c.waveRef(): tip}})
}

// takeOverKept moves the checkout a finished run kept of issue n on
// branch to dir, where this run's worker works. A finished run keeps the
// checkout of an issue it did not merge (a question, a park: the work
// lives there), and a later run whose wave branch has the same name (the
// first merged nothing, so its empty wave branch was deleted) wants the
// same worker branch: it goes on in those files, uncommitted work
// included, instead of a fresh clone of the branch beside them.
func (c *Local) takeOverKept(ctx context.Context, n int, branch, dir string) error {
	if _, err := os.Lstat(dir); err == nil {
		return nil // this run's own checkout is there already
	}
	from := c.o.Kept(n, branch)
	if from == "" || gitops.SamePath(from, dir) {
		return nil
	}
	if err := c.o.Git.MoveCheckout(ctx, from, dir); err != nil {
		return fmt.Errorf("take over the checkout an earlier run kept: %w", err)
	}
	c.o.Say("#%d: took over the worktree an earlier run kept (%s), with any uncommitted work in it", n, from)
	return nil
}

// Payload implements Checkout: the run works in its clone (p.Cwd).
func (c *Local) Payload(*backlog.IssueRun, *runtime.Payload) error { return nil }

// Progress implements Checkout by looking at the clone (gitops'
// CheckoutState and CheckoutAhead); a count git could not give is 0,
// with the error.
func (c *Local) Progress(ctx context.Context, is *backlog.IssueRun, _ runtime.Observation) (int, int, error) {
	commits, dirty, err := Facts(ctx, c.o.Git, is.Worktree, c.base())
	return deref(commits), deref(dirty), err
}

// Mark implements Checkout for a worker's clone on this machine, read
// without running git in it (gitops.CheckoutMark). A HEAD the clone's
// copy of the worker branch lacks is fetched then: what a clone holds
// alone is lost with it.
func (c *Local) Mark(ctx context.Context, is *backlog.IssueRun, _ runtime.Observation) (string, error) {
	head, mark, err := c.o.Git.CheckoutMark(ctx, is.Worktree)
	if err != nil {
		return "", err
	}
	if mine, err := c.o.Git.RevParse(ctx, "refs/heads/"+is.Branch); err != nil || mine != head {
		_ = c.fetch(ctx, is) // a try: a merge fetches anyway
	}
	return mark, nil
}

// Lost implements Checkout: the clone's directory is gone.
func (c *Local) Lost(is *backlog.IssueRun) bool {
	if is.Worktree == "" {
		return false
	}
	_, err := os.Stat(is.Worktree)
	return errors.Is(err, fs.ErrNotExist)
}

// Fetch implements Checkout: the worker branch, as the clone has it,
// becomes this clone's refs/heads/<branch> (upload-pack in the worker's
// clone sends it), once per ended run: when a merge (or anything after
// the run) needs it. While the run is still recorded running (its end
// being read) nothing is fetched: Ahead counts in the clone itself. A
// lost clone leaves the branch as it was.
func (c *Local) Fetch(ctx context.Context, is *backlog.IssueRun) error {
	if is.State == backlog.StateRunning {
		return nil
	}
	c.mu.Lock()
	done := c.fetched[is.Number] == is.Attempts
	c.mu.Unlock()
	if done {
		return nil
	}
	if err := c.fetch(ctx, is); err != nil {
		return err
	}
	c.mu.Lock()
	c.fetched[is.Number] = is.Attempts
	c.mu.Unlock()
	return nil
}

// fetch brings the worker branch from its clone now.
func (c *Local) fetch(ctx context.Context, is *backlog.IssueRun) error {
	if is.Worktree == "" || c.Lost(is) {
		return nil
	}
	_, _, err := c.o.Git.FetchFromCheckout(ctx, is.Worktree, is.Branch)
	return err
}

// Ahead implements Checkout: the commits of the clone's HEAD not on the
// wave tip, counted without fetching them; of a lost clone, those of the
// branch as last fetched.
func (c *Local) Ahead(ctx context.Context, is *backlog.IssueRun) (int, error) {
	if is.Worktree == "" || c.Lost(is) {
		n, _, err := c.o.Git.BranchAhead(ctx, is.Branch, c.base())
		return n, err
	}
	head, err := c.o.Git.CheckoutHead(ctx, is.Worktree)
	if err != nil {
		return 0, err
	}
	return c.o.Git.CheckoutAhead(ctx, is.Worktree, head, c.base())
}

// Snapshot implements Checkout: the clone's state, or, when that is
// lost, its branch (that gone too, where a new clone starts).
func (c *Local) Snapshot(ctx context.Context, is *backlog.IssueRun, ref, msg string) (string, error) {
	if c.Lost(is) {
		return c.o.Git.SnapshotRef(ctx, is.Branch, c.base(), ref)
	}
	return c.o.Git.SnapshotCheckout(ctx, is.Worktree, ref, msg)
}

// Remove implements Checkout: the clone goes once its work is safe in
// this clone (gitops keeps one with uncommitted work, or commits only it
// has).
func (c *Local) Remove(ctx context.Context, is *backlog.IssueRun) error {
	return c.o.Git.RemoveCheckout(ctx, is.Worktree, c.keep(is)...)
}

// keep are the refs a merged worker's HEAD must be in for its clone to go.
func (c *Local) keep(is *backlog.IssueRun) []string {
	return []string{"refs/heads/" + is.Branch, c.waveRef()}
}

// RemoveAll implements Checkout: the clones go side by side, up to width
// at once, each as Remove, after its branch is fetched once more (a
// commit made there after the merge then keeps the branch, and the clone
// goes: it is on the branch).
func (c *Local) RemoveAll(ctx context.Context, iss []*backlog.IssueRun, width int) map[int]error {
	list := make([]gitops.CheckoutRemoval, 0, len(iss))
	for _, is := range iss {
		if is.Worktree != "" {
			list = append(list, gitops.CheckoutRemoval{Dir: is.Worktree, Keep: c.keep(is), Branch: is.Branch})
		}
	}
	errs := c.o.Git.RemoveCheckouts(ctx, list, width)
	out := map[int]error{}
	for _, is := range iss {
		if err := errs[is.Worktree]; err != nil && is.Worktree != "" {
			out[is.Number] = err
		}
	}
	return out
}
