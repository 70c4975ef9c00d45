// Package checkout owns where a backlog worker's files live, and is the
// only way the supervisor touches them: a clone of the worker's own on
// this machine (Local), or, for workers running as Kubernetes pods, the
// clone each pod makes of origin (Remote: the pod's runner clones,
// snapshots and pushes; the supervisor reads what it reports and fetches
// what it pushed). The supervisor chooses one per run; everything else
// about a worker (its claim, its record, the merge train on the wave
// branch in the supervisor's clone) is the same for both.
//
// # Goroutines
//
// The supervisor calls a Checkout from its loop goroutine and from its
// jobs (one goroutine per issue being started or merged) at once, but
// never about one issue from two goroutines at once: an issue with a job
// is that job's alone. So each method is safe for concurrent calls about
// different issues (what a Checkout keeps across issues is under its own
// lock) and needs no lock for one issue's state. Every method reads the
// issue's record it is handed and never writes it.
//
//   - In the issue's job, off the loop; these may block on git and the
//     network for as long as they take: Prepare, before each run of the
//     worker, then Payload; Fetch, before a merge (which reads the
//     branch in the clone) and once a ready worker's run ended.
//   - On the loop, which waits for them, so each is cheap or rare: Mark,
//     from the silence timer while a run is quiet (at its pace, not
//     every sweep); Lost, Fetch and Ahead when a run ended; Snapshot for
//     a salvage relaunch; RemoveAll at the run's end.
//   - Progress reads the same facts as Mark, as counts, for a caller
//     that shows them.
//
// Every method may be called again after a crash at any point: each
// looks before it acts.
package checkout

import (
	"context"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// Checkout is where the workers' files live. Each method is about one
// issue's worker, given as its record in the run (is.Number, its branch,
// its worktree, its attempts, its run directory).
type Checkout interface {
	// Prepare makes the worker's branch and its files ready for a run at
	// dir; resumed says the branch existed already (earlier work on it).
	Prepare(ctx context.Context, is *backlog.IssueRun, branch, dir string) (resumed bool, err error)
	// Payload adds to p what the run needs of its checkout (a remote one:
	// where to clone, which snapshot to restore, where to push).
	Payload(is *backlog.IssueRun, p *runtime.Payload) error
	// Progress is the worker's commits not on the wave branch and its
	// uncommitted files now (what obs reports, or what is looked at).
	Progress(ctx context.Context, is *backlog.IssueRun, obs runtime.Observation) (commits, dirty int, err error)
	// Mark names the state of the worker's checkout (its head and its
	// files) in one string: equal strings, no progress in between; ""
	// when nothing is known.
	Mark(ctx context.Context, is *backlog.IssueRun, obs runtime.Observation) (string, error)
	// Lost: the worker's files are gone (its checkout deleted by a
	// person or a tool); what is left of its work is its branch.
	Lost(is *backlog.IssueRun) bool
	// Fetch brings the worker's branch, as its run left it, into the
	// clone's refs/heads/<branch>.
	Fetch(ctx context.Context, is *backlog.IssueRun) error
	// Ahead counts the worker's commits not on the wave branch.
	Ahead(ctx context.Context, is *backlog.IssueRun) (int, error)
	// Snapshot keeps the worker's work (its commits and its uncommitted
	// files) as a commit under ref on origin, and returns its sha.
	Snapshot(ctx context.Context, is *backlog.IssueRun, ref, msg string) (sha string, err error)
	// Remove deletes the worker's files once its work is on the wave
	// branch (its branch is deleted by the caller).
	Remove(ctx context.Context, is *backlog.IssueRun) error
	// RemoveAll is Remove for many workers at once (the run's end), up
	// to width at once; the failures by issue.
	RemoveAll(ctx context.Context, iss []*backlog.IssueRun, width int) map[int]error
}

// Facts counts the commits of the worker checkout at dir not on base and
// its uncommitted files; nil where git could not say. Status reads live
// facts with it too.
func Facts(ctx context.Context, git *gitops.Repo, dir, base string) (commits, dirty *int, err error) {
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
