package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 18's smaller backlog defects: a stopped worker, attach to a
// backlog worker, and pruning kept worktrees only where nothing is lost.

type issueLive struct {
	Number        int    `json:"number"`
	State         string `json:"state"`
	Session       string `json:"session"`
	Worktree      string `json:"worktree"`
	Branch        string `json:"branch"`
	LastOutputSec *int64 `json:"lastOutputAgeSeconds"`
}

func (r *backlogRepo) liveIssues(t *testing.T) []issueLive {
	t.Helper()
	is, err := r.tryLiveIssues()
	if err != nil {
		t.Fatal(err)
	}
	return is
}

func (r *backlogRepo) tryLiveIssues() ([]issueLive, error) {
	res := r.runEnv(context.Background(), "backlog", "status", "--json")
	var v struct {
		Issues []issueLive `json:"issues"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &v); err != nil {
		return nil, fmt.Errorf("status --json: %w\n%s%s", err, res.stdout, res.stderr)
	}
	return v.Issues, nil
}

func TestBacklogStatusShowsAStoppedWorkerAsStopped(t *testing.T) {
	r := newBacklogRepo(t)
	_, _ = r.pauseAHangingRun(t)
	is := r.liveIssues(t)
	if len(is) != 1 || is[0].State != "stopped" || is[0].LastOutputSec != nil {
		t.Fatalf("status after stop: %+v, want state stopped and no output age", is)
	}
	text := r.runEnv(context.Background(), "backlog", "status")
	if !strings.Contains(text.stdout, "#1     stopped") || strings.Contains(text.stdout, "output ") {
		t.Errorf("text status after stop:\n%s", text.stdout)
	}
}

func TestAttachIssueAttachesToTheBacklogWorkersSession(t *testing.T) {
	r := newBacklogRepo(t)
	r.issue(1, "Works for a long time", "Files: a/**\n\nlocal-agent: hang")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l := &lives{r: r, args: []string{"backlog", "run", "--issues", "1", "--no-dashboard"}}
	defer l.dump(t)
	run := l.start(ctx, "")
	defer func() {
		r.runEnv(context.Background(), "backlog", "stop")
		_ = run.Wait()
	}()
	var want string
	waitFor(t, "the worker to start", time.Minute, func() bool {
		is, _ := r.tryLiveIssues()
		if len(is) == 1 && is[0].State == "running" {
			want = is[0].Session
		}
		return want != ""
	})
	env := append(append(envWithout("TMUX", "TMUX_PANE"), "TMUX_TMPDIR="+tmuxTmp), r.env()...)
	outside := ptyClient(t, env, binPath, "--repo-root", r.root, "attach", "--issue", "1")
	waitFor(t, "a client attached to "+want, 30*time.Second, func() bool {
		s := r.clientSessions()
		return len(s) == 1 && s[0] == want
	})
	if _, err := r.tmuxLane("detach-client", "-s", want); err != nil {
		t.Fatalf("detach: %v", err)
	}
	waitFor(t, "attach to return after detach", 30*time.Second, func() bool { return processExited(outside) })
	if res := r.runEnv(ctx, "attach", "--issue", "9"); res.code != 2 || !strings.Contains(res.stderr, "no backlog run of this lane took issue #9") {
		t.Errorf("attach --issue 9: exit %d %s", res.code, res.stderr)
	}
}

func TestBacklogPruneRemovesOnlyWorktreesWhoseWorkIsSafe(t *testing.T) {
	r := newBacklogRepo(t)
	r.issue(1, "Fails, committed", "Files: a/**\n\nlocal-agent: fail-attempts=9")
	r.issue(2, "Fails, dirty", "Files: b/**\n\nlocal-agent: fail-attempts=9 dirty=b/wip.txt")
	r.issue(3, "Merges", "Files: c/**")
	run := r.runEnv(context.Background(), "backlog", "run", "--issues", "1,2,3", "--no-dashboard")
	if !strings.Contains(run.stdout, "#3 merged into") {
		t.Fatalf("run: exit %d\n%s\n%s", run.code, run.stdout, run.stderr)
	}
	wt := map[int]issueLive{}
	for _, is := range r.liveIssues(t) {
		wt[is.Number] = is
	}
	for _, n := range []int{1, 2} {
		if _, err := os.Stat(wt[n].Worktree); err != nil || (wt[n].State != "parked" && wt[n].State != "failed") {
			t.Fatalf("#%d: state %s, worktree %s: %v; want it kept after failing", n, wt[n].State, wt[n].Worktree, err)
		}
	}
	// #1's worktree gets a commit only it has: not safe until it is in a ref.
	gitIn(t, wt[1].Worktree, "checkout", "-q", "--detach")
	gitIn(t, wt[1].Worktree, "commit", "-q", "--allow-empty", "-m", "only here")
	dry := r.runEnv(context.Background(), "backlog", "prune", "--dry-run")
	if dry.code != 0 || !strings.Contains(dry.stdout, "#1: kept") || !strings.Contains(dry.stdout, "#2: kept") {
		t.Fatalf("prune --dry-run: exit %d\n%s\n%s", dry.code, dry.stdout, dry.stderr)
	}
	if !strings.Contains(dry.stdout, "uncommitted change") {
		t.Errorf("prune does not say why it keeps #2:\n%s", dry.stdout)
	}
	// Put #1's commit back on its branch: now every commit is in a ref.
	gitIn(t, wt[1].Worktree, "checkout", "-q", "-B", wt[1].Branch)
	res := r.runEnv(context.Background(), "backlog", "prune")
	if res.code != 0 || !strings.Contains(res.stdout, "#1: removed") || !strings.Contains(res.stdout, "#2: kept") {
		t.Fatalf("prune: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if _, err := os.Stat(wt[1].Worktree); err == nil {
		t.Errorf("#1's worktree %s is still there", wt[1].Worktree)
	}
	if b, err := os.ReadFile(filepath.Join(wt[2].Worktree, "b", "wip.txt")); err != nil || len(b) == 0 {
		t.Errorf("#2's uncommitted work is gone: %v", err)
	}
	if err := exec.Command("git", "-C", r.root, "rev-parse", "--verify", "-q", "refs/heads/"+wt[1].Branch).Run(); err != nil {
		t.Errorf("#1's branch went with its worktree: %v", err)
	}
}
