package checkout

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/internal/fanout"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// PodDir is where a worker's pod clones origin: the run's checkout lives
// there, and nowhere on the supervisor's machine.
const PodDir = "/wave/work/repo"

// Remote is a worker's clone in its pod (runtime.Checkout): the pod's
// runner clones origin, works, snapshots and pushes; the supervisor
// never sees the files, only what reaches origin — the worker branch, the
// snapshots under refs/wave/salvage/<n>/, and each run's result commit
// under refs/wave/runs/<run>/ — and what the runner reports in its record
// (Record.Git, mirrored into runtime.json).
type Remote struct {
	o RemoteOptions

	mu sync.Mutex
	// restore is, per issue, the snapshot the next run restores, as its
	// Prepare found it (a relaunch continues from the last snapshot).
	restore map[int]string
	origin  string // URL, or the clone's origin once looked up
}

// RemoteOptions are what a Remote reads of the run it serves; the
// functions are asked at each call.
type RemoteOptions struct {
	// Git is the supervisor's clone.
	Git *gitops.Repo
	// Wave is the run's wave branch.
	Wave func() string
	// RunID is the backlog run's id: result refs are per run.
	RunID func() string
	// URL is the origin pods clone (runtime.kubernetes.gitURL; "": the
	// clone's origin).
	URL string
	// Every is the runner's snapshot period (0: at stop and exit).
	Every time.Duration
	// Say prints a line for the user.
	Say func(format string, args ...any)
	// Dir is where issue n's run clones (nil: PodDir, each pod has its
	// own disk there).
	Dir func(n int) string
}

// NewRemote is a Remote for a run.
func NewRemote(o RemoteOptions) *Remote {
	if o.Say == nil {
		o.Say = func(string, ...any) {}
	}
	if o.Dir == nil {
		o.Dir = func(int) string { return PodDir }
	}
	return &Remote{o: o, restore: map[int]string{}}
}

// Dir is where issue n's run clones.
func (c *Remote) Dir(n int) string { return c.o.Dir(n) }

func (c *Remote) waveRef() string { return "refs/remotes/origin/" + c.o.Wave() }

// snapshotPrefix holds issue n's snapshots on origin.
func snapshotPrefix(n int) string { return "refs/wave/salvage/" + strconv.Itoa(n) + "/" }

// snapshotRef is where attempt k of issue n pushes its snapshots: the
// ref a salvage of that attempt names.
func snapshotRef(n, k int) string { return snapshotPrefix(n) + "a" + strconv.Itoa(k) }

// resultPrefix holds issue n's result commits of run id on origin.
func resultPrefix(id string, n int) string {
	return "refs/wave/runs/" + id + "/i" + strconv.Itoa(n) + "/"
}

// resultRef is where attempt k of issue n pushes its result.
func (c *Remote) resultRef(n, k int) string {
	return resultPrefix(c.o.RunID(), n) + "a" + strconv.Itoa(k)
}

// Prepare implements Checkout: nothing is made here (the pod clones).
// It finds what the run starts from: whether origin has the branch
// (resumed), and the snapshot a relaunch restores. At an issue's first
// run, snapshots of it that earlier runs left on origin are moved into
// the clone (as a local worktree's snapshots live there), so every
// snapshot on origin afterwards is this run's.
func (c *Remote) Prepare(ctx context.Context, is *backlog.IssueRun, branch, _ string) (bool, error) {
	n := is.Number
	if err := c.lookUpOrigin(ctx); err != nil {
		return false, err
	}
	_, resumed, err := c.o.Git.RemoteRef(ctx, gitops.CandidateRef(branch))
	if err == nil && !resumed {
		_, resumed, err = c.o.Git.RemoteHead(ctx, branch) // pushed by an older version
	}
	if err != nil {
		return false, fmt.Errorf("#%d: %w", n, err)
	}
	refs, err := c.o.Git.RemoteRefs(ctx, snapshotPrefix(n))
	if err != nil {
		return false, fmt.Errorf("#%d: %w", n, err)
	}
	restore := ""
	if is.Attempts == 0 {
		if err := c.adoptOld(ctx, n, refs); err != nil {
			return false, err
		}
	} else if ref := snapshotRef(n, is.Attempts); refs[ref] != "" {
		restore = ref // the last run's work, uncommitted files included
	}
	c.mu.Lock()
	c.restore[n] = restore
	c.mu.Unlock()
	return resumed, nil
}

// adoptOld fetches issue n's snapshots an earlier run left on origin into
// the clone, then deletes them there (each under a lease).
func (c *Remote) adoptOld(ctx context.Context, n int, refs map[string]string) error {
	for ref := range refs {
		if _, _, err := c.o.Git.FetchRef(ctx, ref); err != nil {
			return fmt.Errorf("#%d: keep an earlier run's snapshot %s: %w", n, ref, err)
		}
	}
	if _, err := c.o.Git.DeleteRemoteRefs(ctx, refs); err != nil {
		return fmt.Errorf("#%d: %w", n, err)
	}
	return nil
}

// lookUpOrigin settles the URL pods clone, once.
func (c *Remote) lookUpOrigin(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.origin != "" {
		return nil
	}
	if c.o.URL != "" {
		c.origin = c.o.URL
		return nil
	}
	url, err := c.o.Git.RemoteURL(ctx)
	if err != nil {
		return fmt.Errorf("the origin pods clone (runtime.kubernetes.gitURL unset): %w", err)
	}
	c.origin = url
	return nil
}

// Payload implements Checkout: the run clones origin at the wave branch
// into its Dir, works on its branch there, restores the snapshot Prepare
// found, and pushes its snapshots and result.
func (c *Remote) Payload(is *backlog.IssueRun, p *runtime.Payload) error {
	n := is.Number
	c.mu.Lock()
	origin, restore := c.origin, c.restore[n]
	c.mu.Unlock()
	if origin == "" {
		return fmt.Errorf("#%d: the origin to clone is not known (Prepare did not run)", n)
	}
	// A salvage's ref is restored when origin has it (Prepare looked):
	// the runner pushed it. Otherwise it is the branch's tip, from which
	// the run starts anyway.
	branch := p.Env["WAVE_WORKER_BRANCH"] // executor.Build's, for every worker
	if branch == "" {
		return fmt.Errorf("#%d: the run's payload names no worker branch", n)
	}
	dir := c.o.Dir(n)
	p.Cwd = dir
	p.Env["WAVE_WORKTREE"] = dir
	// The cluster names a run's Job, Secret and Lease for its id, and
	// adopts what it finds under one: "i3-a1" of the run before (whose
	// Job stays a while after it ends) must not pass for this run's.
	p.RunID = c.o.RunID() + "-" + p.RunID
	p.Checkout = &runtime.Checkout{Origin: origin, Base: c.o.Wave(), Branch: branch, PushRef: gitops.CandidateRef(branch), Dir: dir,
		RestoreRef: restore, SnapshotRef: snapshotRef(n, p.Attempt), SnapshotEveryMs: int(c.o.Every / time.Millisecond),
		ResultRef: c.resultRef(n, p.Attempt)}
	return nil
}

// Progress implements Checkout from the runner's report: no git here.
func (c *Remote) Progress(_ context.Context, _ *backlog.IssueRun, obs runtime.Observation) (int, int, error) {
	if obs.Record == nil || obs.Record.Git == nil {
		return 0, 0, nil
	}
	return obs.Record.Git.Ahead, obs.Record.Git.Dirty, nil
}

// Mark implements Checkout for a pod's clone: what its runner last
// reported of it (its head, and when its files last changed).
func (c *Remote) Mark(_ context.Context, _ *backlog.IssueRun, obs runtime.Observation) (string, error) {
	if obs.Record == nil || obs.Record.Git == nil {
		return "", nil
	}
	g := obs.Record.Git
	changed := ""
	if g.ChangedAt != nil {
		changed = g.ChangedAt.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("%s %d %s", g.Head, g.Dirty, changed), nil
}

// Lost implements Checkout: a pod's files are never looked at, so never
// found gone; a pod that went is a lost run, and its work is on origin.
func (c *Remote) Lost(*backlog.IssueRun) bool { return false }

// Fetch implements Checkout: the candidate the pod pushed (origin's
// copy of the branch, for an older version's pod) becomes the clone's
// refs/heads/<branch>, and the run's result (its log's tail and final
// record) is brought into its run directory, where the supervisor reads
// a finished run's outcome.
func (c *Remote) Fetch(ctx context.Context, is *backlog.IssueRun) error {
	if err := c.fetchBranch(ctx, is); err != nil {
		return err
	}
	if is.RunDir == "" {
		return nil
	}
	return c.collect(ctx, is.Number, is.Attempts, is.RunDir)
}

// fetchBranch brings the worker's candidate, else origin's branch of an
// older version's pod, into the clone's refs/heads/<branch>, checked as
// a local worker's clone is: an object git's checks refuse
// (gitops.ErrRefusedObject) or a branch with no history in common with
// the wave branch (gitops.ErrNoCommonHistory) is its worker's failure,
// which parks its issue (docs/security-model.md).
func (c *Remote) fetchBranch(ctx context.Context, is *backlog.IssueRun) error {
	_, ok, err := c.o.Git.FetchCandidate(ctx, gitops.CandidateRef(is.Branch), is.Branch, c.waveRef())
	if err == nil && !ok {
		_, _, err = c.o.Git.FetchWorker(ctx, is.Branch, c.waveRef())
	}
	if err != nil {
		return fmt.Errorf("#%d: %w", is.Number, err)
	}
	return nil
}

// collect writes the result commit's files into runDir, once: what a
// runner on this machine would have left there.
func (c *Remote) collect(ctx context.Context, n, attempt int, runDir string) error {
	logPath := filepath.Join(runDir, lanes.LogFile)
	if _, err := os.Stat(logPath); err == nil {
		return nil
	}
	ref := c.resultRef(n, attempt)
	if _, ok, err := c.o.Git.FetchRef(ctx, ref); err != nil || !ok {
		return err // no result: the pod went before it could push one
	}
	for _, f := range []string{lanes.LogFile, runtime.FinalFile} {
		data, ok, err := c.o.Git.ReadFile(ctx, ref, f)
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

// Ahead implements Checkout: the fetched branch, counted in the clone.
func (c *Remote) Ahead(ctx context.Context, is *backlog.IssueRun) (int, error) {
	n, _, err := c.o.Git.BranchAhead(ctx, is.Branch, c.waveRef())
	return n, err
}

// Snapshot implements Checkout: the snapshot the failed run's runner
// pushed to ref, fetched. A runner that pushed none (its pod went at
// once) left its branch as origin has it: ref is then that tip, in the
// clone only, and the relaunch starts from the branch.
func (c *Remote) Snapshot(ctx context.Context, is *backlog.IssueRun, ref, _ string) (string, error) {
	sha, ok, err := c.o.Git.FetchRef(ctx, ref)
	if err != nil || ok {
		return sha, err
	}
	if err := c.fetchBranch(ctx, is); err != nil {
		return "", err
	}
	c.o.Say("#%d: its run pushed no snapshot; %s is its branch as origin has it", is.Number, ref)
	return c.o.Git.SnapshotRef(ctx, is.Branch, c.waveRef(), ref)
}

// Remove implements Checkout: the issue's snapshots, its candidate and
// this run's result commits go from origin (the branch is the caller's).
func (c *Remote) Remove(ctx context.Context, is *backlog.IssueRun) error {
	refs, err := c.o.Git.RemoteRefs(ctx, snapshotPrefix(is.Number), resultPrefix(c.o.RunID(), is.Number))
	if err != nil {
		return err
	}
	if is.Branch != "" {
		// The candidate goes only at the commit the clone has of the
		// branch (merged): a later push of the pod's stays on origin.
		cand := gitops.CandidateRef(is.Branch)
		sha, ok, err := c.o.Git.RemoteRef(ctx, cand)
		if err != nil {
			return err
		}
		if mine, merr := c.o.Git.RevParse(ctx, "refs/heads/"+is.Branch); ok && merr == nil && mine == sha {
			refs[cand] = sha
		}
	}
	_, err = c.o.Git.DeleteRemoteRefs(ctx, refs)
	return err
}

// RemoveAll implements Checkout: each worker's refs go as Remove does,
// up to width at once.
func (c *Remote) RemoveAll(ctx context.Context, iss []*backlog.IssueRun, width int) map[int]error {
	errs := make([]error, len(iss))
	fanout.Each(len(iss), width, func(i int) { errs[i] = c.Remove(ctx, iss[i]) })
	out := map[int]error{}
	for i, err := range errs {
		if err != nil {
			out[iss[i].Number] = err
		}
	}
	return out
}
