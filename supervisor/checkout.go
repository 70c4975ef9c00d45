package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// checkout is where one worker's files live, and the only way the
// supervisor touches them: a git worktree of the supervisor's clone on
// this machine (localCheckout), or, for workers running as Kubernetes
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
	// Lost: the worker's files are gone (its worktree deleted by a person
	// or a tool); what is left of its work is its branch.
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
		git:    s.o.Git,
		wave:   func() string { return s.run().Info.WaveBranch },
		keptBy: s.keptByFinishedRun,
		say:    s.printf,
	}
}

// localCheckout is a worker's git worktree of the supervisor's clone,
// on this machine: the worker's run works in it, and the supervisor looks
// at it directly.
type localCheckout struct {
	git  *gitops.Repo
	wave func() string // the run's wave branch
	// keptBy: path is issue n's worktree, kept by a finished run of this
	// lane (kept.go).
	keptBy func(n int, path string) bool
	say    func(format string, args ...any)
}

// waveRef is the wave branch as origin has it: worker branches start from
// it and are counted against it.
func (c *localCheckout) waveRef() string { return "refs/remotes/origin/" + c.wave() }

// Prepare implements checkout: the worktree is made or taken up, a new
// one from origin's wave branch as this clone's tracking ref has it. No
// fetch first: the run's own merges are the only writes to the wave
// branch, and each moves that ref (its push, then its proof's fetch), so
// the ref is origin's tip already; a start that fails for want of it
// (a clone that never fetched it) fetches and tries again.
func (c *localCheckout) Prepare(ctx context.Context, w *worker, branch, dir string) (bool, error) {
	resumed, err := c.ensureWorktree(ctx, w.n, dir, branch)
	if err == nil {
		return resumed, nil
	}
	if ferr := c.git.FetchBranch(ctx, c.wave()); ferr != nil {
		if ferr := c.git.Fetch(ctx); ferr != nil { // the whole of origin says why
			return false, fmt.Errorf("fetch: %w", ferr)
		}
	}
	resumed, err = c.ensureWorktree(ctx, w.n, dir, branch)
	if err != nil {
		return false, fmt.Errorf("#%d: worktree %s: %w", w.n, dir, err)
	}
	return resumed, nil
}

// Payload implements checkout: the run works in the worktree (p.Cwd).
func (c *localCheckout) Payload(*worker, *runtime.Payload, workerStart) error { return nil }

// Progress implements checkout by looking at the worktree (two git
// commands); a count git could not give is 0, with the error.
func (c *localCheckout) Progress(ctx context.Context, w *worker, _ runtime.Observation) (int, int, error) {
	commits, dirty, err := worktreeFacts(ctx, c.git, w.is.Worktree, c.waveRef())
	return deref(commits), deref(dirty), err
}

// Lost implements checkout: the worktree directory is gone.
func (c *localCheckout) Lost(w *worker) bool {
	if w.is.Worktree == "" {
		return false
	}
	_, err := os.Stat(w.is.Worktree)
	return errors.Is(err, fs.ErrNotExist)
}

// Fetch implements checkout: the worktree commits on the clone's branch
// itself.
func (c *localCheckout) Fetch(context.Context, *worker) error { return nil }

// Ahead implements checkout: counted in the worktree, or, when that is
// lost, on its branch in the clone.
func (c *localCheckout) Ahead(ctx context.Context, w *worker) (int, error) {
	if !c.Lost(w) {
		return c.git.CommitsAhead(ctx, w.is.Worktree, c.waveRef())
	}
	n, _, err := c.git.BranchAhead(ctx, w.is.Branch, c.waveRef())
	return n, err
}

// Snapshot implements checkout: the worktree's state, or, when that is
// lost, its branch (that gone too, where a new worktree starts).
func (c *localCheckout) Snapshot(ctx context.Context, w *worker, ref, msg string) (string, error) {
	if c.Lost(w) {
		return c.git.SnapshotRef(ctx, w.is.Branch, c.waveRef(), ref)
	}
	return c.git.Snapshot(ctx, w.is.Worktree, ref, msg)
}

// Remove implements checkout: the worktree goes (gitops keeps one with
// uncommitted work).
func (c *localCheckout) Remove(ctx context.Context, w *worker) error {
	return c.git.RemoveWorktree(ctx, w.is.Worktree)
}

// RemoveAll implements checkout: the worktrees go in one batch (gitops
// keeps one with uncommitted work).
func (c *localCheckout) RemoveAll(ctx context.Context, ws []*worker, width int) map[int]error {
	paths := make([]string, 0, len(ws))
	for _, w := range ws {
		if w.is.Worktree != "" {
			paths = append(paths, w.is.Worktree)
		}
	}
	errs := c.git.RemoveWorktrees(ctx, paths, width)
	out := map[int]error{}
	for _, w := range ws {
		if err := errs[w.is.Worktree]; err != nil && w.is.Worktree != "" {
			out[w.n] = err
		}
	}
	return out
}

// worktreeFacts counts the commits of the worktree at dir not on waveRef
// and its uncommitted files; nil where git could not say (the errors
// joined). Status reads live facts with it too.
func worktreeFacts(ctx context.Context, git *gitops.Repo, dir, waveRef string) (commits, dirty *int, err error) {
	c, cerr := git.CommitsAhead(ctx, dir, waveRef)
	if cerr == nil {
		commits = &c
	}
	d, derr := git.DirtyFiles(ctx, dir)
	if derr == nil {
		dirty = &d
	}
	return commits, dirty, errors.Join(cerr, derr)
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
