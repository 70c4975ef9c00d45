package watch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

// Issue 18's smaller backlog defects: a stopped worker, attach to a
// backlog worker, and pruning kept worktrees only where nothing is lost.

func TestBacklogStatusShowsAStoppedWorkerAsStopped(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	_, _ = r.PauseAHangingRun(t)
	is := r.LiveIssues(t)
	if len(is) != 1 || is[0].State != "stopped" || is[0].LastOutputSec != nil {
		t.Fatalf("status after stop: %+v, want state stopped and no output age", is)
	}
	text := r.RunEnv(context.Background(), "backlog", "status")
	if !strings.Contains(text.Stdout, "#1     stopped") || strings.Contains(text.Stdout, "output ") {
		t.Errorf("text status after stop:\n%s", text.Stdout)
	}
}

func TestAttachIssueAttachesToTheBacklogWorkersSession(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Works for a long time", "Files: a/**\n\nlocal-agent: hang")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l := &e2etest.Lives{R: r, Args: []string{"backlog", "run", "--issues", "1", "--no-dashboard"}}
	defer l.Dump(t)
	run := l.Start(ctx, "")
	defer func() {
		r.RunEnv(context.Background(), "backlog", "stop")
		_ = run.Wait()
	}()
	// Running in the run's record comes before the worker's session and
	// log exist: attach is asked once both do.
	var want string
	e2etest.WaitFor(t, "the worker's session and log", time.Minute, func() bool {
		is, _ := r.TryLiveIssues()
		if len(is) != 1 || is[0].State != "running" || is[0].Session == "" || is[0].RunDir == "" {
			return false
		}
		if _, err := r.TmuxLane("has-session", "-t", "="+is[0].Session); err != nil {
			return false
		}
		if _, err := os.Stat(filepath.Join(is[0].RunDir, lanes.LogFile)); err != nil {
			return false
		}
		want = is[0].Session
		return true
	})
	env := append(append(envWithout("TMUX", "TMUX_PANE"), "TMUX_TMPDIR="+e2etest.TmuxDir()), r.Env()...)
	outside := ptyClient(t, env, e2etest.Bin(), "--repo-root", r.Root, "attach", "--issue", "1")
	e2etest.WaitFor(t, "a client attached to "+want, 30*time.Second, func() bool {
		s := r.ClientSessions()
		return len(s) == 1 && s[0] == want
	})
	if _, err := r.TmuxLane("detach-client", "-s", want); err != nil {
		t.Fatalf("detach: %v", err)
	}
	e2etest.WaitFor(t, "attach to return after detach", 30*time.Second, func() bool { return processExited(outside) })
	if res := r.RunEnv(ctx, "attach", "--issue", "9"); res.Code != 2 || !strings.Contains(res.Stderr, "no backlog run of this lane took issue #9") {
		t.Errorf("attach --issue 9: exit %d %s", res.Code, res.Stderr)
	}
}

func TestBacklogPruneRemovesOnlyWorktreesWhoseWorkIsSafe(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Fails, committed", "Files: a/**\n\nlocal-agent: fail-attempts=9")
	r.Issue(2, "Fails, dirty", "Files: b/**\n\nlocal-agent: fail-attempts=9 dirty=b/wip.txt")
	r.Issue(3, "Merges", "Files: c/**")
	run := r.RunEnv(context.Background(), "backlog", "run", "--issues", "1,2,3", "--no-dashboard")
	if !strings.Contains(run.Stdout, "#3 merged into") {
		t.Fatalf("run: exit %d\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	wt := map[int]e2etest.IssueLive{}
	for _, is := range r.LiveIssues(t) {
		wt[is.Number] = is
	}
	for _, n := range []int{1, 2} {
		if _, err := os.Stat(wt[n].Worktree); err != nil || (wt[n].State != "parked" && wt[n].State != "failed") {
			t.Fatalf("#%d: state %s, worktree %s: %v; want it kept after failing", n, wt[n].State, wt[n].Worktree, err)
		}
	}
	// #1's worktree gets a commit only it has: not safe until it is in a ref.
	e2etest.GitIn(t, wt[1].Worktree, "checkout", "-q", "--detach")
	e2etest.GitIn(t, wt[1].Worktree, "commit", "-q", "--allow-empty", "-m", "only here")
	dry := r.RunEnv(context.Background(), "backlog", "prune", "--dry-run")
	if dry.Code != 0 || !strings.Contains(dry.Stdout, "#1: kept") || !strings.Contains(dry.Stdout, "#2: kept") {
		t.Fatalf("prune --dry-run: exit %d\n%s\n%s", dry.Code, dry.Stdout, dry.Stderr)
	}
	if !strings.Contains(dry.Stdout, "uncommitted change") {
		t.Errorf("prune does not say why it keeps #2:\n%s", dry.Stdout)
	}
	// Put #1's commit back on its branch: now every commit is in a ref.
	e2etest.GitIn(t, wt[1].Worktree, "checkout", "-q", "-B", wt[1].Branch)
	res := r.RunEnv(context.Background(), "backlog", "prune")
	if res.Code != 0 || !strings.Contains(res.Stdout, "#1: removed") || !strings.Contains(res.Stdout, "#2: kept") {
		t.Fatalf("prune: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if _, err := os.Stat(wt[1].Worktree); err == nil {
		t.Errorf("#1's worktree %s is still there", wt[1].Worktree)
	}
	if b, err := os.ReadFile(filepath.Join(wt[2].Worktree, "b", "wip.txt")); err != nil || len(b) == 0 {
		t.Errorf("#2's uncommitted work is gone: %v", err)
	}
	if gittest.Ref(r.Root, "refs/heads/"+wt[1].Branch) == "" {
		t.Errorf("#1's branch went with its worktree")
	}
}

// Once prune has removed the last worktree of a run, the run's directory
// under the worktree root (<project>-<run>) goes too: nothing empty is
// left behind per run.
func TestBacklogPruneLeavesNoEmptyRunDirectory(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Fails, committed", "Files: a/**\n\nlocal-agent: fail-attempts=9")
	r.Issue(2, "Merges", "Files: c/**")
	run := r.RunEnv(context.Background(), "backlog", "run", "--issues", "1,2", "--no-dashboard")
	if !strings.Contains(run.Stdout, "#2 merged into") {
		t.Fatalf("run: exit %d\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	var wt string
	for _, is := range r.LiveIssues(t) {
		if is.Number == 1 {
			wt = is.Worktree
		}
	}
	runDir := filepath.Dir(wt)
	if _, err := os.Stat(wt); err != nil {
		t.Fatalf("#1's worktree %s was not kept: %v", wt, err)
	}
	res := r.RunEnv(context.Background(), "backlog", "prune")
	if res.Code != 0 || !strings.Contains(res.Stdout, "#1: removed") || !strings.Contains(res.Stdout, "removed the empty directory "+runDir) {
		t.Fatalf("prune: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if _, err := os.Stat(runDir); !os.IsNotExist(err) {
		entries, _ := os.ReadDir(runDir)
		t.Fatalf("the run's directory %s is still there (%v, %d entries)", runDir, err, len(entries))
	}
	if root := filepath.Dir(runDir); !strings.HasSuffix(root, "worktrees") {
		t.Fatalf("the run directory's parent %s is not the worktree root", root)
	} else if _, err := os.Stat(root); err != nil {
		t.Errorf("prune removed the worktree root %s itself: %v", root, err)
	}
}

// `backlog prune --dry-run` changes nothing — no ref of the clone moves,
// no worktree goes — and says what `backlog prune` then does: a commit
// made on the worker's branch in its worktree after the run counts as
// safe in both, though only the real prune brings it into the clone.
func TestBacklogPruneDryRunChangesNothingAndSaysWhatPruneDoes(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Fails, committed", "Files: a/**\n\nlocal-agent: fail-attempts=9")
	run := r.RunEnv(context.Background(), "backlog", "run", "--issues", "1", "--no-dashboard")
	var wt e2etest.IssueLive
	for _, is := range r.LiveIssues(t) {
		if is.Number == 1 {
			wt = is
		}
	}
	if _, err := os.Stat(wt.Worktree); err != nil || wt.Branch == "" {
		t.Fatalf("#1's worktree %q (branch %q) was not kept: %v\n%s", wt.Worktree, wt.Branch, err, run.Stdout)
	}
	e2etest.GitIn(t, wt.Worktree, "commit", "-q", "--allow-empty", "-m", "after the run, on its branch")
	refs := func() string { return e2etest.GitIn(t, r.Root, "for-each-ref", "--format=%(refname) %(objectname)") }
	before := refs()
	dry := r.RunEnv(context.Background(), "backlog", "prune", "--dry-run")
	if dry.Code != 0 || !strings.Contains(dry.Stdout, "#1: would remove "+wt.Worktree+" (work safe in refs/heads/"+wt.Branch+")") {
		t.Fatalf("prune --dry-run: exit %d, want #1 would be removed\n%s\n%s", dry.Code, dry.Stdout, dry.Stderr)
	}
	if after := refs(); after != before {
		t.Errorf("prune --dry-run moved refs of the clone:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, err := os.Stat(wt.Worktree); err != nil {
		t.Fatalf("prune --dry-run removed #1's worktree: %v", err)
	}
	res := r.RunEnv(context.Background(), "backlog", "prune")
	if res.Code != 0 || !strings.Contains(res.Stdout, "#1: removed "+wt.Worktree+" (work safe in refs/heads/"+wt.Branch+")") {
		t.Fatalf("prune: exit %d, want #1 removed as the dry run said\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
}
