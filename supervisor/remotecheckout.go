package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/internal/fanout"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// PodCheckoutDir is where a worker's pod clones origin: the run's
// checkout lives there, and nowhere on the supervisor's machine.
const PodCheckoutDir = "/wave/work/repo"

// remoteCheckout is a worker's clone in its pod (runtime.Checkout): the
// pod's runner clones origin, works, snapshots and pushes; the supervisor
// never sees the files, only what reaches origin — the worker branch, the
// snapshots under refs/wave/salvage/<n>/, and each run's result commit
// under refs/wave/runs/<run>/ — and what the runner reports in its record
// (Record.Git, mirrored into runtime.json).
type remoteCheckout struct {
	git   *gitops.Repo
	wave  func() string // the run's wave branch
	runID func() string // the backlog run's id: result refs are per run
	// url is the origin pods clone (runtime.kubernetes.gitURL, else the
	// clone's origin); every the snapshot period (0: at stop and exit).
	url   string
	every time.Duration
	say   func(format string, args ...any)
	// dir is where issue n's run clones (PodCheckoutDir: each pod has its
	// own disk there).
	dir func(n int) string

	mu sync.Mutex
	// restore is, per issue, the snapshot the next run restores, as its
	// Prepare found it (a relaunch continues from the last snapshot).
	restore map[int]string
	origin  string // url, or the clone's origin once looked up
}

func (c *remoteCheckout) waveRef() string { return "refs/remotes/origin/" + c.wave() }

// snapshotPrefix holds issue n's snapshots on origin.
func snapshotPrefix(n int) string { return "refs/wave/salvage/" + strconv.Itoa(n) + "/" }

// snapshotRef is where attempt k of issue n pushes its snapshots: the
// ref a salvage of that attempt names (salvage).
func snapshotRef(n, k int) string { return snapshotPrefix(n) + "a" + strconv.Itoa(k) }

// resultPrefix holds issue n's result commits of run id on origin.
func resultPrefix(id string, n int) string {
	return "refs/wave/runs/" + id + "/i" + strconv.Itoa(n) + "/"
}

// resultRef is where attempt k of issue n pushes its result.
func (c *remoteCheckout) resultRef(n, k int) string {
	return resultPrefix(c.runID(), n) + "a" + strconv.Itoa(k)
}

// Prepare implements checkout: nothing is made here (the pod clones).
// It finds what the run starts from: whether origin has the branch
// (resumed), and the snapshot a relaunch restores. At an issue's first
// run, snapshots of it that earlier runs left on origin are moved into
// the clone (as a local worktree's snapshots live there), so every
// snapshot on origin afterwards is this run's.
func (c *remoteCheckout) Prepare(ctx context.Context, w *worker, branch, _ string) (bool, error) {
	if err := c.lookUpOrigin(ctx); err != nil {
		return false, err
	}
	_, resumed, err := c.git.RemoteRef(ctx, gitops.CandidateRef(branch))
	if err == nil && !resumed {
		_, resumed, err = c.git.RemoteHead(ctx, branch) // pushed by an older version
	}
	if err != nil {
		return false, fmt.Errorf("#%d: %w", w.n, err)
	}
	refs, err := c.git.RemoteRefs(ctx, snapshotPrefix(w.n))
	if err != nil {
		return false, fmt.Errorf("#%d: %w", w.n, err)
	}
	restore := ""
	if w.is.Attempts == 0 {
		if err := c.adoptOld(ctx, w.n, refs); err != nil {
			return false, err
		}
	} else if ref := snapshotRef(w.n, w.is.Attempts); refs[ref] != "" {
		restore = ref // the last run's work, uncommitted files included
	}
	c.mu.Lock()
	c.restore[w.n] = restore
	c.mu.Unlock()
	return resumed, nil
}

// adoptOld fetches issue n's snapshots an earlier run left on origin into
// the clone, then deletes them there (each under a lease).
func (c *remoteCheckout) adoptOld(ctx context.Context, n int, refs map[string]string) error {
	for ref := range refs {
		if _, _, err := c.git.FetchRef(ctx, ref); err != nil {
			return fmt.Errorf("#%d: keep an earlier run's snapshot %s: %w", n, ref, err)
		}
	}
	if _, err := c.git.DeleteRemoteRefs(ctx, refs); err != nil {
		return fmt.Errorf("#%d: %w", n, err)
	}
	return nil
}

// lookUpOrigin settles the URL pods clone, once.
func (c *remoteCheckout) lookUpOrigin(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.origin != "" {
		return nil
	}
	if c.url != "" {
		c.origin = c.url
		return nil
	}
	url, err := c.git.RemoteURL(ctx)
	if err != nil {
		return fmt.Errorf("the origin pods clone (runtime.kubernetes.gitURL unset): %w", err)
	}
	c.origin = url
	return nil
}

// Payload implements checkout: the run clones origin at the wave branch
// into PodCheckoutDir, works on its branch there, restores the snapshot
// Prepare found (or the salvage's), and pushes its snapshots and result.
func (c *remoteCheckout) Payload(w *worker, p *runtime.Payload, _ workerStart) error {
	c.mu.Lock()
	origin, restore := c.origin, c.restore[w.n]
	c.mu.Unlock()
	if origin == "" {
		return fmt.Errorf("#%d: the origin to clone is not known (Prepare did not run)", w.n)
	}
	// A salvage's ref is restored when origin has it (Prepare looked):
	// the runner pushed it. Otherwise it is the branch's tip, from which
	// the run starts anyway.
	branch := p.Env["WAVE_WORKER_BRANCH"] // executor.Build's, for every worker
	if branch == "" {
		return fmt.Errorf("#%d: the run's payload names no worker branch", w.n)
	}
	dir := c.dir(w.n)
	p.Cwd = dir
	p.Env["WAVE_WORKTREE"] = dir
	// The cluster names a run's Job, Secret and Lease for its id, and
	// adopts what it finds under one: "i3-a1" of the run before (whose
	// Job stays a while after it ends) must not pass for this run's.
	p.RunID = c.runID() + "-" + p.RunID
	p.Checkout = &runtime.Checkout{Origin: origin, Base: c.wave(), Branch: branch, PushRef: gitops.CandidateRef(branch), Dir: dir,
		RestoreRef: restore, SnapshotRef: snapshotRef(w.n, p.Attempt), SnapshotEveryMs: int(c.every / time.Millisecond),
		ResultRef: c.resultRef(w.n, p.Attempt)}
	return nil
}

// Progress implements checkout from the runner's report: no git here.
func (c *remoteCheckout) Progress(_ context.Context, _ *worker, obs runtime.Observation) (int, int, error) {
	if obs.Record == nil || obs.Record.Git == nil {
		return 0, 0, nil
	}
	return obs.Record.Git.Ahead, obs.Record.Git.Dirty, nil
}

// Lost implements checkout: a pod's files are never looked at, so never
// found gone; a pod that went is a lost run, and its work is on origin.
func (c *remoteCheckout) Lost(*worker) bool { return false }

// Fetch implements checkout: the candidate the pod pushed (origin's
// copy of the branch, for an older version's pod) becomes the clone's
// refs/heads/<branch>, and the run's result (its log's tail and final
// record) is brought into its run directory, where the supervisor reads
// a finished run's outcome.
func (c *remoteCheckout) Fetch(ctx context.Context, w *worker) error {
	if err := c.fetchBranch(ctx, w); err != nil {
		return err
	}
	if w.is.RunDir == "" {
		return nil
	}
	return c.collect(ctx, w.n, w.is.Attempts, w.is.RunDir)
}

// fetchBranch brings the worker's candidate, else origin's branch of an
// older version's pod, into the clone's refs/heads/<branch>.
func (c *remoteCheckout) fetchBranch(ctx context.Context, w *worker) error {
	_, ok, err := c.git.FetchCandidate(ctx, gitops.CandidateRef(w.is.Branch), w.is.Branch)
	if err == nil && !ok {
		_, _, err = c.git.FetchWorker(ctx, w.is.Branch)
	}
	if err != nil {
		return fmt.Errorf("#%d: %w", w.n, err)
	}
	return nil
}

// collect writes the result commit's files into runDir, once: what a
// runner on this machine would have left there.
func (c *remoteCheckout) collect(ctx context.Context, n, attempt int, runDir string) error {
	logPath := filepath.Join(runDir, lanes.LogFile)
	if _, err := os.Stat(logPath); err == nil {
		return nil
	}
	ref := c.resultRef(n, attempt)
	if _, ok, err := c.git.FetchRef(ctx, ref); err != nil || !ok {
		return err // no result: the pod went before it could push one
	}
	for _, f := range []string{lanes.LogFile, runtime.FinalFile} {
		data, ok, err := c.git.ReadFile(ctx, ref, f)
		if err != nil {
			return fmt.Errorf("#%d: result %s: %w", n, ref, err)
		}
		if !ok {
			continue
		}
		if err := jsonfile.WriteFileAtomic(filepath.Join(runDir, f), data, jsonfile.FileMode); err != nil {
			return fmt.Errorf("#%d: %w", n, err)
		}
	}
	return nil
}

// Ahead implements checkout: the fetched branch, counted in the clone.
func (c *remoteCheckout) Ahead(ctx context.Context, w *worker) (int, error) {
	n, _, err := c.git.BranchAhead(ctx, w.is.Branch, c.waveRef())
	return n, err
}

// Snapshot implements checkout: the snapshot the failed run's runner
// pushed to ref, fetched. A runner that pushed none (its pod went at
// once) left its branch as origin has it: ref is then that tip, in the
// clone only, and the relaunch starts from the branch.
func (c *remoteCheckout) Snapshot(ctx context.Context, w *worker, ref, _ string) (string, error) {
	sha, ok, err := c.git.FetchRef(ctx, ref)
	if err != nil || ok {
		return sha, err
	}
	if err := c.fetchBranch(ctx, w); err != nil {
		return "", err
	}
	c.say("#%d: its run pushed no snapshot; %s is its branch as origin has it", w.n, ref)
	return c.git.SnapshotRef(ctx, w.is.Branch, c.waveRef(), ref)
}

// Remove implements checkout: the snapshots, its candidate and
// this run's result commits go from origin (the branch is the caller's).
func (c *remoteCheckout) Remove(ctx context.Context, w *worker) error {
	refs, err := c.git.RemoteRefs(ctx, snapshotPrefix(w.n), resultPrefix(c.runID(), w.n))
	if err != nil {
		return err
	}
	if w.is.Branch != "" {
		// The candidate goes only at the commit the clone has of the
		// branch (merged): a later push of the pod's stays on origin.
		cand := gitops.CandidateRef(w.is.Branch)
		sha, ok, err := c.git.RemoteRef(ctx, cand)
		if err != nil {
			return err
		}
		if mine, merr := c.git.RevParse(ctx, "refs/heads/"+w.is.Branch); ok && merr == nil && mine == sha {
			refs[cand] = sha
		}
	}
	_, err = c.git.DeleteRemoteRefs(ctx, refs)
	return err
}

// RemoveAll implements checkout: each worker's refs go as Remove does,
// up to width at once.
func (c *remoteCheckout) RemoveAll(ctx context.Context, ws []*worker, width int) map[int]error {
	errs := make([]error, len(ws))
	fanout.Each(len(ws), width, func(i int) { errs[i] = c.Remove(ctx, ws[i]) })
	out := map[int]error{}
	for i, err := range errs {
		if err != nil {
			out[ws[i].n] = err
		}
	}
	return out
}

// pods: the run's workers each work in their own clone of origin
// (remoteCheckout: Kubernetes pods), not in worktrees of this clone.
func (s *Supervisor) pods() bool {
	_, ok := s.co.(*remoteCheckout)
	return ok
}

// newRemoteCheckout is the run's remoteCheckout: pods clone
// runtime.kubernetes.gitURL (else origin's URL) and snapshot every
// backlog.snapshotMinutes.
func (s *Supervisor) newRemoteCheckout() *remoteCheckout {
	return &remoteCheckout{git: s.o.Git, wave: func() string { return s.run().Info.WaveBranch },
		runID: func() string { return s.run().Info.ID }, url: s.o.Lane.Runtime.Kubernetes.GitURL,
		every: time.Duration(s.o.Config.Backlog.SnapshotMinutes) * time.Minute, say: s.printf, restore: map[int]string{},
		dir: func(int) string { return PodCheckoutDir }}
}
