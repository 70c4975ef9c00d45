package supervisor

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/spend"
	"github.com/wave-orchestrator/wave-orchestrator/supervisor/checkout"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// Status builds the snapshot of the run in dir: the reduced events plus
// what is read live here (worktrees, output ages, waits, spend). git may
// be nil (no live worktree facts); lockHeld says whether a supervisor
// holds the lane.
func Status(ctx context.Context, dir string, git *gitops.Repo, lockHeld bool, now time.Time) (backlog.StatusView, error) {
	r, bad, err := runlog.Read(dir)
	if err != nil {
		return backlog.StatusView{}, err
	}
	runs := spend.BacklogRuns("", dir)
	in := backlog.StatusInput{BadEvents: bad, LockHeld: lockHeld, Now: now, Usage: spend.Total(runs).Ptr(),
		IssueUsage: map[int]*usage.Usage{}, Live: map[int]backlog.LiveFacts{}, StopPending: pauseRequested(dir)}
	if lockHeld && !r.Finished {
		in.Waiting = readWaiting(dir)
		in.Probes = readProbes(dir)
	}
	for n, u := range spend.ByIssue(runs) {
		in.IssueUsage[n] = u.Ptr()
	}
	waveRef := "refs/remotes/origin/" + r.Info.WaveBranch
	if r.WaveTip != "" {
		waveRef = r.WaveTip // what the run pushed, whatever origin has since
	}
	for _, is := range r.List() {
		if f, ok := live(ctx, is, git, waveRef, now); ok {
			in.Live[is.Number] = f
		}
	}
	return backlog.NewStatusView(r, in), nil
}

// live reads checkout progress and output age for work not yet final.
func live(ctx context.Context, is *backlog.IssueRun, git *gitops.Repo, waveRef string, now time.Time) (backlog.LiveFacts, bool) {
	var f backlog.LiveFacts
	if backlog.Terminal(is.State) {
		return f, false
	}
	if f, ok := podLive(is, now); ok {
		return f, true
	}
	if git == nil || is.Worktree == "" {
		return f, false
	}
	if _, err := os.Stat(is.Worktree); err != nil {
		return f, false
	}
	f.CommitsAhead, f.DirtyFiles, _ = checkout.Facts(ctx, git, is.Worktree, waveRef)
	if is.RunDir != "" {
		if fi, err := os.Stat(filepath.Join(is.RunDir, lanes.LogFile)); err == nil {
			age := int64(now.Sub(fi.ModTime()).Seconds())
			f.LastOutputSec = &age
		}
	}
	return f, true
}

// pauseRequested reports whether a `backlog stop` without --finish waits
// in the run's control file for the next supervisor.
func pauseRequested(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, runlog.ControlFile))
	if err != nil {
		return false
	}
	var req struct {
		Finish bool `json:"finish"`
	}
	_ = json.Unmarshal(b, &req) // unreadable: a plain stop, as halt reads it
	return !req.Finish
}
