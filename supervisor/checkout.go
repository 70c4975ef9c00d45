package supervisor

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

// checkout is where one worker's files live, and the only way the
// supervisor touches them: a clone of the worker's own on this machine
// (localCheckout), or, for workers running as Kubernetes
// pods, the clone each pod makes of origin (a remote checkout: the pod's
// runner clones, snapshots and pushes; the supervisor reads what it
// reports and fetches what it pushed). The supervisor chooses one per run
// (newCheckout); everything else about a worker (its claim, its record,
// the merge train on the wave branch in the clone) is the same for both.
//
// What the supervisor does with a worker's files, and when:
//   - Prepare, before each run of the worker (a job's, off the loop):
//     make the branch and its files ready to work on at dir.
//   - Payload, right after the run's payload is built: add what the run
//     needs of its checkout (a remote one: where to clone, which snapshot
//     to restore, where to push).
//   - Progress, from the silence timer while the run is quiet (on the
//     loop, so it must be cheap or rare): commits not on the wave branch
//     and uncommitted files, each compared with the last look.
//   - Lost, Fetch and Ahead when the run ended (on the loop): whether the
//     files are gone, then the branch brought into the clone's
//     refs/heads/<branch> and its commits counted. Fetch also comes before
//     a merge, which reads the branch in the clone.
//   - Snapshot, for a salvage relaunch: the work, uncommitted files
//     included, kept under ref on origin.
//   - Remove, at the run's end for a merged worker: its files go.
//
// Every method may be called again after a crash at any point: each
// looks before it acts.
type checkout interface {
	// Prepare makes issue w.n's branch and its files ready for a run at
	// dir; resumed says the branch existed already (earlier work on it).
	Prepare(ctx context.Context, w *worker, branch, dir string) (resumed bool, err error)
	// Payload adds to p what the run needs of its checkout; why is what
	// the run starts for (a salvage restores its snapshot).
	Payload(w *worker, p *runtime.Payload, why workerStart) error
	// Progress is the worker's commits not on the wave branch and its
	// uncommitted files now (what obs reports, or what is looked at).
	Progress(ctx context.Context, w *worker, obs runtime.Observation) (commits, dirty int, err error)
	// Lost: the worker's files are gone (its checkout deleted by a
	// person or a tool); what is left of its work is its branch.
	Lost(w *worker) bool
	// Fetch brings the worker's branch, as its run left it, into the
	// clone's refs/heads/<branch>.
	Fetch(ctx context.Context, w *worker) error
	// Ahead counts the worker's commits not on the wave branch.
	Ahead(ctx context.Context, w *worker) (int, error)
	// Snapshot keeps the worker's work (its commits and its uncommitted
	// files) as a commit under ref on origin, and returns its sha.
	Snapshot(ctx context.Context, w *worker, ref, msg string) (sha string, err error)
	// Remove deletes the worker's files once its work is on the wave
	// branch (its branch is deleted by the caller).
	Remove(ctx context.Context, w *worker) error
	// RemoveAll is Remove for many workers at once (the run's end), up
	// to width at once; the failures by issue.
	RemoveAll(ctx context.Context, ws []*worker, width int) map[int]error
}

// newCheckout is the one place a run's checkout is chosen. The wave
// branch is named once the run opened, hence the functions.
func (s *Supervisor) newCheckout() checkout {
	if s.o.Lane.Runtime.UsesKubernetes() {
		return s.newRemoteCheckout()
	}
	return &localCheckout{
		git:     s.o.Git,
		wave:    func() string { return s.run().Info.WaveBranch },
		tip:     func() string { return s.run().WaveTip },
		kept:    s.keptCheckout,
		say:     s.printf,
		fetched: map[int]int{},
	}
}

// localCheckout is a worker's own clone on this machine
// (gitops.EnsureWorkerClone): it borrows the supervisor's clone's
// objects read-only and shares nothing writable with it, so no hook or
// config a worker writes is run by anyone else. The worker's run works
// in it; the supervisor reads it without running git in it (upload-pack
// and the lens, see gitops) and fetches the worker branch from it.
type localCheckout struct {
	git  *gitops.Repo
	wave func() string // the run's wave branch
	// tip is the wave branch's tip as the run last pushed it ("" for a
	// run whose log predates the record: origin's as the clone has it).
	tip func() string
	// kept is the checkout a finished run of this lane kept of issue n
	// on branch, "" when none (kept.go).
	kept func(n int, branch string) string
	say  func(format string, args ...any)

	mu sync.Mutex
	// fetched is, per issue, the attempt whose ended run's branch was
	// fetched (Fetch): a merge retried fetches no more.
	fetched map[int]int
}

// waveRef is the wave branch as the clone last fetched it from origin.
func (c *localCheckout) waveRef() string { return "refs/remotes/origin/" + c.wave() }

// base is what worker branches start from and are counted against: the
// wave tip the run pushed last, never a commit someone else put on
// origin's wave branch since.
func (c *localCheckout) base() string {
	if t := c.tip(); t != "" {
		return t
	}
	return c.waveRef()
}

// Prepare implements checkout: the worker's clone is made or taken up,
// a new branch from the wave tip the run pushed last, and the worker is
// given that tip as its refs/heads/<wave> (the branch its prompt says to
// merge on a conflict). A start that fails for want of the wave branch (a
// clone that never fetched it) fetches and tries again.
func (c *localCheckout) Prepare(ctx context.Context, w *worker, branch, dir string) (bool, error) {
	if err := c.takeOverKept(ctx, w.n, branch, dir); err != nil {
		return false, err
	}
	resumed, err := c.ensure(ctx, branch, dir)
	if err == nil {
		return resumed, nil
	}
	if ferr := c.git.FetchBranch(ctx, c.wave()); ferr != nil {
		if ferr := c.git.Fetch(ctx); ferr != nil { // the whole of origin says why
			return false, fmt.Errorf("fetch: %w", ferr)
		}
	}
	resumed, err = c.ensure(ctx, branch, dir)
	if err != nil {
		return false, fmt.Errorf("#%d: checkout %s: %w", w.n, dir, err)
	}
	return resumed, nil
}

func (c *localCheckout) ensure(ctx context.Context, branch, dir string) (bool, error) {
	tip := c.tip()
	if tip == "" { // a run whose log predates the record
		var err error
		if tip, err = c.git.RevParse(ctx, c.waveRef()+"^{commit}"); err != nil {
			return false, err
		}
	}
	return c.git.EnsureWorkerClone(ctx, gitops.WorkerCheckout{Dir: dir, Branch: branch, Start: tip,
		Refs: map[string]string{"refs/heads/" + c.wave(): tip, c.waveRef(): tip}})
}

// Payload implements checkout: the run works in its clone (p.Cwd).
func (c *localCheckout) Payload(*worker, *runtime.Payload, workerStart) error { return nil }

// Progress implements checkout by looking at the clone (gitops'
// CheckoutState and CheckoutAhead); a count git could not give is 0,
// with the error.
func (c *localCheckout) Progress(ctx context.Context, w *worker, _ runtime.Observation) (int, int, error) {
	commits, dirty, err := checkoutFacts(ctx, c.git, w.is.Worktree, c.base())
	return deref(commits), deref(dirty), err
}

// Lost implements checkout: the clone's directory is gone.
func (c *localCheckout) Lost(w *worker) bool {
	if w.is.Worktree == "" {
		return false
	}
	_, err := os.Stat(w.is.Worktree)
	return errors.Is(err, fs.ErrNotExist)
}

// Fetch implements checkout: the worker branch, as the clone has it,
// becomes this clone's refs/heads/<branch> (upload-pack in the worker's
// clone sends it), once per ended run: when a merge (or anything after
// the run) needs it. While the run is still recorded running (its end
// being read) nothing is fetched: Ahead counts in the clone itself. A
// lost clone leaves the branch as it was.
func (c *localCheckout) Fetch(ctx context.Context, w *worker) error {
	if w.is.State == backlog.StateRunning {
		return nil
	}
	c.mu.Lock()
	done := c.fetched[w.n] == w.is.Attempts
	c.mu.Unlock()
	if done {
		return nil
	}
	if err := c.fetch(ctx, w); err != nil {
		return err
	}
	c.mu.Lock()
	c.fetched[w.n] = w.is.Attempts
	c.mu.Unlock()
	return nil
}

// fetch brings the worker branch from its clone now.
func (c *localCheckout) fetch(ctx context.Context, w *worker) error {
	if w.is.Worktree == "" || c.Lost(w) {
		return nil
	}
	_, _, err := c.git.FetchFromCheckout(ctx, w.is.Worktree, w.is.Branch)
	return err
}

// Ahead implements checkout: the commits of the clone's HEAD not on the
// wave tip, counted without fetching them; of a lost clone, those of the
// branch as last fetched.
func (c *localCheckout) Ahead(ctx context.Context, w *worker) (int, error) {
	if w.is.Worktree == "" || c.Lost(w) {
		n, _, err := c.git.BranchAhead(ctx, w.is.Branch, c.base())
		return n, err
	}
	head, err := c.git.CheckoutHead(ctx, w.is.Worktree)
	if err != nil {
		return 0, err
	}
	return c.git.CheckoutAhead(ctx, w.is.Worktree, head, c.base())
}

// Snapshot implements checkout: the clone's state, or, when that is
// lost, its branch (that gone too, where a new clone starts).
func (c *localCheckout) Snapshot(ctx context.Context, w *worker, ref, msg string) (string, error) {
	if c.Lost(w) {
		return c.git.SnapshotRef(ctx, w.is.Branch, c.base(), ref)
	}
	return c.git.SnapshotCheckout(ctx, w.is.Worktree, ref, msg)
}

// Remove implements checkout: the clone goes once its work is safe in
// this clone (gitops keeps one with uncommitted work, or commits only it
// has).
func (c *localCheckout) Remove(ctx context.Context, w *worker) error {
	return c.git.RemoveCheckout(ctx, w.is.Worktree, c.keep(w)...)
}

// keep are the refs a merged worker's HEAD must be in for its clone to go.
func (c *localCheckout) keep(w *worker) []string {
	return []string{"refs/heads/" + w.is.Branch, c.waveRef()}
}

// RemoveAll implements checkout: the clones go side by side, up to width
// at once, each as Remove, after its branch is fetched once more (a
// commit made there after the merge then keeps the branch, and the clone
// goes: it is on the branch).
func (c *localCheckout) RemoveAll(ctx context.Context, ws []*worker, width int) map[int]error {
	list := make([]gitops.CheckoutRemoval, 0, len(ws))
	for _, w := range ws {
		if w.is.Worktree != "" {
			list = append(list, gitops.CheckoutRemoval{Dir: w.is.Worktree, Keep: c.keep(w), Branch: w.is.Branch})
		}
	}
	errs := c.git.RemoveCheckouts(ctx, list, width)
	out := map[int]error{}
	for _, w := range ws {
		if err := errs[w.is.Worktree]; err != nil && w.is.Worktree != "" {
			out[w.n] = err
		}
	}
	return out
}

// checkoutFacts counts the commits of the worker checkout at dir not on
// base and its uncommitted files; nil where git could not say. Status
// reads live facts with it too.
func checkoutFacts(ctx context.Context, git *gitops.Repo, dir, base string) (commits, dirty *int, err error) {
	head, d, err := git.CheckoutState(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	dirty = &d
	c, err := git.CheckoutAhead(ctx, dir, head, base)
	if err != nil {
		return nil, dirty, err
	}
	return &c, dirty, nil
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
