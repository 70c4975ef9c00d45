package runtime

import (
	"context"
	"time"
)

// Checkout is a run's own git checkout, made and kept by its runner: a
// backlog worker on kubernetes shares no disk with its supervisor, so the
// pod clones origin, and everything the worker did travels back through
// origin's refs.
//
// The runner clones Base (shallow where it can); starts Branch from
// origin's PushRef when there is one (else origin's Branch, else Base);
// restores RestoreRef when set (its commits become the branch, its
// uncommitted files the working tree, still uncommitted); runs the agent
// in Dir; pushes a snapshot of the uncommitted work to SnapshotRef every
// SnapshotEveryMs, when stopped and at exit; and at exit pushes Branch's
// commits to PushRef under a lease against what it started from, then
// ResultRef. Every push is idempotent, and none is to a branch.
type Checkout struct {
	// Origin is the URL the pod clones and pushes (http(s), git://, ssh,
	// or a path).
	Origin string `json:"origin"`
	// Base is the wave branch the worker branch starts from.
	Base string `json:"base"`
	// Branch is the worker branch, as the pod's clone names it.
	Branch string `json:"branch"`
	// PushRef (refs/wave/candidates/<branch>) is where the runner pushes
	// the branch's commits: a candidate the supervisor fetches and gates,
	// never a branch. Empty (a supervisor before it): Branch itself.
	PushRef string `json:"pushRef,omitempty"`
	// Dir is where the clone is made in the pod; Payload.Cwd == Dir.
	Dir string `json:"dir"`
	// RestoreRef is a snapshot ref on origin to continue from.
	RestoreRef string `json:"restoreRef,omitempty"`
	// SnapshotRef (refs/wave/salvage/<n>/a<k>) is where this run pushes
	// snapshots of its uncommitted work.
	SnapshotRef string `json:"snapshotRef"`
	// SnapshotEveryMs is the period of snapshots (backlog.snapshotMinutes);
	// 0: only when stopped and at exit.
	SnapshotEveryMs int `json:"snapshotEveryMs,omitempty"`
	// ResultRef (refs/wave/runs/<runID>) is where the runner pushes, at
	// exit, a commit holding the run's final record (runner-final.json)
	// and agent.log's tail (at most 256 KiB), so the supervisor reads the
	// outcome from origin.
	ResultRef string `json:"resultRef"`
}

// GitFacts is a run's checkout as its runner saw it (Record.Git).
type GitFacts struct {
	Head  string `json:"head,omitempty"` // the worker branch's sha in the pod
	Ahead int    `json:"ahead"`          // commits ahead of Base
	Dirty int    `json:"dirty"`          // uncommitted files
	// ChangedAt is the last time Head or the dirty set changed (silence
	// uses it).
	ChangedAt  *time.Time `json:"changedAt,omitempty"`
	Snapshot   string     `json:"snapshot,omitempty"` // last pushed snapshot sha
	SnapshotAt *time.Time `json:"snapshotAt,omitempty"`
	Pushed     string     `json:"pushed,omitempty"` // sha of Branch last pushed to origin
}

// CheckoutKeeper does the git work of a run with a Payload.Checkout for
// its runner (package kube provides it, over gitops). The runner calls
// one method at a time.
type CheckoutKeeper interface {
	// Prepare makes the checkout before the agent starts: clone, branch,
	// restore.
	Prepare(ctx context.Context) error
	// Facts reads the checkout now.
	Facts(ctx context.Context) (GitFacts, error)
	// Snapshot pushes the uncommitted work to SnapshotRef (nothing when
	// it did not change since the last one).
	Snapshot(ctx context.Context) error
	// PushBranch pushes the worker branch under its lease.
	PushBranch(ctx context.Context) error
	// PushResult pushes the run's final record and status, and the
	// log's tail, to ResultRef.
	PushResult(ctx context.Context, rec Record, st Status) error
}

// CheckoutFunc makes the CheckoutKeeper of a payload with a Checkout.
type CheckoutFunc func(p *Payload) (CheckoutKeeper, error)

// Hooks are what `agent-run` adds to the runner for runs that need more
// than this machine: a Reporter for a kubernetes run, a CheckoutKeeper
// for a run that owns its checkout.
type Hooks struct {
	NewReporter ReporterFunc
	NewCheckout CheckoutFunc
}
