package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// Overnight survival: transient failures are waited out, permanent ones
// end the run at once, a worker's lost worktree and a worker failed by the
// supervisor's environment do not wedge the run or cost its salvage.

func TestTransientCauseIsAskedOfTheRoomThatRanTheCommand(t *testing.T) {
	t.Parallel()
	disk := fmt.Errorf("record worker_finished event: append x: %w", &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC})
	for _, tc := range []struct {
		err  error
		want string
	}{
		{disk, gitops.CauseDiskFull},
		{errors.New("git fetch: Could not read from remote repository"), ""}, // words alone are not a classification
		{ErrStopped, ""},
		{context.Canceled, ""},
		{nil, ""},
	} {
		if got := transientCause(tc.err); got != tc.want {
			t.Errorf("transientCause(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestEnvironmentalFailureNeedsTheRunToOverlapAWindow(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	win := []span{{since: at(10), until: at(20), cause: gitops.CauseUnreachable}}
	for _, tc := range []struct {
		name           string
		started, ended time.Time
		spans          []span
		current        *waitOut
		log, want      string
	}{
		{name: "ended inside the window", started: at(0), ended: at(15), spans: win, want: gitops.CauseUnreachable},
		{name: "ended just before it was noticed", started: at(0), ended: at(9).Add(30 * time.Second), spans: win, want: gitops.CauseUnreachable},
		{name: "ended long before", started: at(0), ended: at(5), spans: win},
		{name: "started after it passed", started: at(21), ended: at(22), spans: win},
		{name: "during the wait going on", started: at(0), ended: at(31), current: &waitOut{Waiting: backlog.Waiting{Cause: gitops.CauseDiskFull, Since: at(30)}}, want: gitops.CauseDiskFull},
		{name: "its log says the disk was full", started: at(0), ended: at(5), log: "error: unable to write file x: No space left on device\n", want: gitops.CauseDiskFull},
		{name: "its log says permission denied", started: at(0), ended: at(5), log: "git@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository.\n"},
		{name: "an ordinary failure", started: at(0), ended: at(5), log: "FAIL: TestSomething\n"},
	} {
		if got := environmental(tc.started, tc.ended, tc.spans, tc.current, tc.log); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// fastRetries makes a failed sweep retry after 50 ms.
func fastRetries(o *Options) { o.Backoff = func(int) time.Duration { return 50 * time.Millisecond } }

// currentRunDir is the lane's newest backlog run, "" before one exists.
func (f *fixture) currentRunDir() string {
	dirs, _ := runlog.List(f.layout().StateDir)
	if len(dirs) == 0 {
		return ""
	}
	return dirs[len(dirs)-1]
}

// waitForWait waits until the running supervisor says it is waiting out
// cause, and returns the wait.
func (f *fixture) waitForWait(cause string) *backlog.Waiting {
	f.t.Helper()
	return f.waitingOrEnded(nil, cause)
}

// TestOriginUnreachableForAWhileStillMergesEverything: origin vanishes
// (renamed away) mid-run and comes back; the supervisor waits, says so in
// status, leaves the workers running and ends with both issues merged.
func TestOriginUnreachableForAWhileStillMergesEverything(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "First", "Files: a/**")
	f.issue(2, "Second", "Files: b/**")
	away := f.origin + ".away"
	// #1 takes origin away once it has committed; #2 finishes only
	// after that, so both merges meet the outage.
	f.shellWorkers(`set -e
n=$WAVE_ISSUE_NUMBER
echo "work of #$n" > own-$n.txt && gitc add own-$n.txt && gitc commit -q -m "Work on #$n"
if [ "$n" = 1 ]; then mv ` + shellQuote(f.origin) + ` ` + shellQuote(away) + ` && touch "$GATE/away"; fi
i=0; until [ -e "$GATE/away" ]; do i=$((i+1)); [ $i -gt 400 ] && exit 1; sleep 0.05; done
echo "[backlog-result] state=done detail=shell worker"
`)
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		done <- f.runCtx(ctx, fastRetries, 1, 2)
	}()
	if w := f.waitForWait(gitops.CauseUnreachable); w != nil {
		v, err := Status(context.Background(), f.currentRunDir(), nil, true, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if v.Waiting == nil || !strings.Contains(backlog.WaitingLine(v.Waiting), "waiting: origin unreachable since ") {
			t.Errorf("status while waiting: %+v, want a line \"waiting: origin unreachable since …\"", v.Waiting)
		}
	}
	if err := os.Rename(away, f.origin); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v; want 0 with everything merged", res.ExitCode, res.err)
	}
	if got := mergedOrder(f.events(res.Dir)); len(got) != 2 {
		t.Errorf("merged %v, want #1 and #2", got)
	}
	if !strings.Contains(res.out, "recovered: origin unreachable passed") {
		t.Errorf("output does not say the outage passed:\n%s", res.out)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, WaitingFile)); !os.IsNotExist(err) {
		t.Errorf("%s left behind after the wait: %v", WaitingFile, err)
	}
}

// TestHookRefusingPushesForAWhileIsWaitedOut: a pre-receive hook on
// origin declines every push for a while (maintenance); the merge waits
// and lands once pushes are accepted again.
func TestHookRefusingPushesForAWhileIsWaitedOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "First", "Files: a/**")
	// The claim and the wave branch are pushed before the refusal
	// starts: the worker turns it on once it has committed.
	refuse := filepath.Join(filepath.Dir(f.root), "gate", "refuse")
	hook := filepath.Join(f.origin, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\n[ -e "+shellQuote(refuse)+" ] && { echo 'maintenance: pushes refused' >&2; exit 1; }\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.shellWorkers(`set -e
echo work > own.txt && gitc add own.txt && gitc commit -q -m "Work"
touch ` + shellQuote(refuse) + `
echo "[backlog-result] state=done detail=shell worker"
`)
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		done <- f.runCtx(ctx, fastRetries, 1)
	}()
	f.waitForWait(gitops.CauseHook)
	if err := os.Remove(refuse); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v; want 0 with #1 merged", res.ExitCode, res.err)
	}
	if got := mergedOrder(f.events(res.Dir)); len(got) != 1 {
		t.Errorf("merged %v, want #1", got)
	}
}

// TestRefusedPermissionStillExitsAtOnce: origin answers "Permission
// denied" (a revoked key): not waited out, the run ends at once naming it.
func TestRefusedPermissionStillExitsAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "First", "Files: a/**")
	ssh := filepath.Join(filepath.Dir(f.root), "fake-ssh")
	if err := os.WriteFile(ssh, []byte("#!/bin/sh\necho 'git@example.invalid: Permission denied (publickey).' >&2\nexit 255\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The worker's commit done, origin turns into one that refuses us
	// (the user's clone is reconfigured: the worker's own clone is not
	// where the supervisor's origin is).
	f.shellWorkers(`set -e
echo work > own.txt && gitc add own.txt && gitc commit -q -m "Work"
git -C ` + shellQuote(f.root) + ` config core.sshCommand ` + shellQuote(ssh) + `
git -C ` + shellQuote(f.root) + ` config remote.origin.url ssh://git@example.invalid/app.git
echo "[backlog-result] state=done detail=shell worker"
`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := f.runCtx(ctx, fastRetries, 1)
	if res.err == nil || ctx.Err() != nil {
		t.Fatalf("run: exit %d, %v; want an error at once", res.ExitCode, res.err)
	}
	if !strings.Contains(res.err.Error(), "Permission denied") {
		t.Errorf("error %q does not name the refusal", res.err)
	}
	if strings.Contains(res.out, "waiting:") {
		t.Errorf("a refused permission was waited out:\n%s", res.out)
	}
}

// TestTransientFailureGivesUpAfterTheWindowNamingTheCause: origin gone
// for good; after backlog.transientRetrySeconds the run exits naming the
// cause in words.
func TestTransientFailureGivesUpAfterTheWindowNamingTheCause(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "First", "Files: a/**")
	f.config = strings.Replace(f.config, "\nbacklog:\n", "\nbacklog:\n  transientRetrySeconds: 1\n", 1)
	f.shellWorkers(`set -e
echo work > own.txt && gitc add own.txt && gitc commit -q -m "Work"
mv ` + shellQuote(f.origin) + ` ` + shellQuote(f.origin+".gone") + `
echo "[backlog-result] state=done detail=shell worker"
`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := f.runCtx(ctx, fastRetries, 1)
	var gave *GaveUpError
	if !errors.As(res.err, &gave) || ctx.Err() != nil {
		t.Fatalf("run: exit %d, %v; want a GaveUpError", res.ExitCode, res.err)
	}
	if gave.Cause != gitops.CauseUnreachable || !strings.Contains(res.err.Error(), "gave up after waiting 1s: origin unreachable since ") {
		t.Errorf("error %q, want it to give up naming %q", res.err, gitops.CauseUnreachable)
	}
	if !strings.Contains(res.out, "waiting: origin unreachable since ") {
		t.Errorf("output never said it waits:\n%s", res.out)
	}
}

// TestLostWorktreeGetsItsSnapshotAndOneRelaunchInARecreatedWorktree: the
// worker's checkout is deleted under it (after a commit, which went with
// its clone: nothing had fetched it yet). The run does not end on it:
// the branch is snapshotted, the checkout recreated on it, the worker
// relaunched once, and the issue merges.
func TestLostWorktreeGetsItsSnapshotAndOneRelaunchInARecreatedWorktree(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "First", "Files: a/**")
	f.shellWorkers(`set -e
if [ "$WAVE_ATTEMPT" = 1 ]; then
  echo work > own.txt && gitc add own.txt && gitc commit -q -m "Work"
  wt=$(pwd); cd / && rm -rf "$wt"
  exit 1
fi
[ -e .git/objects/info/alternates ] || { echo "not a clone of its own"; exit 1; }
[ -e own.txt ] || { echo work > own.txt && gitc add own.txt && gitc commit -q -m "Work again"; }
echo "[backlog-result] state=done detail=continued"
`)
	res := f.run(1)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v; want 0 with #1 merged", res.ExitCode, res.err)
	}
	evs := f.events(res.Dir)
	r := backlog.Reduce(evs)
	is := r.Issues[1]
	if is.State != backlog.StateMerged || is.Attempts != 2 || is.Salvages != 1 || len(is.SalvageRefs) == 0 {
		t.Fatalf("#1: %s after %d attempts, %d salvages (%v); want merged after one salvage relaunch", is.State, is.Attempts, is.Salvages, is.SalvageRefs)
	}
	if !strings.Contains(res.out, "was deleted") {
		t.Errorf("output does not say the worktree was deleted:\n%s", res.out)
	}
	// Said in words a person reads, not "worker its worktree … was deleted".
	if !strings.Contains(res.out, "#1: worker lost its worktree ") || strings.Contains(res.out, "worker its worktree") {
		t.Errorf("output garbles the lost worktree:\n%s", res.out)
	}
}

// TestWorktreeLostTwiceParksTheIssue: a second loss parks the issue with
// the reason; the run ends asking a person (43), not failing (1).
func TestWorktreeLostTwiceParksTheIssue(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "First", "Files: a/**")
	f.shellWorkers(`wt=$(pwd); cd / && rm -rf "$wt"
exit 1
`)
	res := f.run(1)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run: exit %d, %v; want 43 with #1 parked", res.ExitCode, res.err)
	}
	is := backlog.Reduce(f.events(res.Dir)).Issues[1]
	if is.State != backlog.StateParked || is.Attempts != 2 || !strings.Contains(is.Detail, "was deleted") {
		t.Errorf("#1: %s after %d attempts, %q; want parked after 2, saying its worktree was deleted", is.State, is.Attempts, is.Detail)
	}
}

// TestWorkerFailedByAnOriginOutageKeepsItsSalvage: the worker fails
// because origin is unreachable (the supervisor sees the same outage).
// Its relaunch does not spend the salvage, so a genuine failure after
// still gets the one salvage relaunch, and the issue merges.
func TestWorkerFailedByAnOriginOutageKeepsItsSalvage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "First", "Files: a/**")
	away := f.origin + ".away"
	f.shellWorkers(`case "$WAVE_ATTEMPT" in
1) mv ` + shellQuote(f.origin) + ` ` + shellQuote(away) + `; git fetch -q ` + shellQuote(f.origin) + ` || exit 1 ;;
2) echo "a genuine failure"; exit 1 ;;
esac
set -e
echo work > own.txt && gitc add own.txt && gitc commit -q -m "Work"
echo "[backlog-result] state=done detail=third time"
`)
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		done <- f.runCtx(ctx, fastRetries, 1)
	}()
	f.waitForWait(gitops.CauseUnreachable)
	if err := os.Rename(away, f.origin); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v; want 0: the outage must not spend #1's salvage", res.ExitCode, res.err)
	}
	is := backlog.Reduce(f.events(res.Dir)).Issues[1]
	if is.State != backlog.StateMerged || is.Attempts != 3 || is.Salvages != 1 {
		t.Errorf("#1: %s after %d attempts, %d salvages; want merged on the third, one salvage spent", is.State, is.Attempts, is.Salvages)
	}
}

// TestWorkerWhoseLogSaysDiskFullKeepsItsSalvage: the worker's git failed
// with "No space left on device"; that relaunch is free too.
func TestWorkerWhoseLogSaysDiskFullKeepsItsSalvage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "First", "Files: a/**")
	f.shellWorkers(`case "$WAVE_ATTEMPT" in
1) echo "error: unable to write new index file: No space left on device"; exit 128 ;;
2) echo "a genuine failure"; exit 1 ;;
esac
set -e
echo work > own.txt && gitc add own.txt && gitc commit -q -m "Work"
echo "[backlog-result] state=done detail=third time"
`)
	res := f.run(1)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v; want 0: a full disk must not spend #1's salvage", res.ExitCode, res.err)
	}
	is := backlog.Reduce(f.events(res.Dir)).Issues[1]
	if is.State != backlog.StateMerged || is.Attempts != 3 || is.Salvages != 1 {
		t.Errorf("#1: %s after %d attempts, %d salvages; want merged on the third, one salvage spent", is.State, is.Attempts, is.Salvages)
	}
	if !strings.Contains(res.out, "the supervisor's environment (no space left on device)") {
		t.Errorf("output does not name the cause:\n%s", res.out)
	}
}

// TestGitHubDownForAWhileIsWaitedOut: GitHub answers 502 to more requests
// than the client retries, mid-run; the supervisor waits it out and the
// run ends with everything merged, each write made once.
func TestGitHubDownForAWhileIsWaitedOut(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.ghIssue(1, "One", "Files: a/**")
	g.ghIssue(2, "Two", "Files: b/**")
	g.onNth(forgetest.RouteCommentCreate, 1, false, func() { g.srv.Fail5xx(12) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := g.runCtx(ctx, fastRetries, 1, 2)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v; want 0 with everything merged", res.ExitCode, res.err)
	}
	if !strings.Contains(res.out, "waiting: "+forge.CauseGitHubServer+" (HTTP 502) since ") {
		t.Errorf("output never said it waits for GitHub:\n%s", res.out)
	}
	if got := mergedOrder(g.events(res.Dir)); len(got) != 2 {
		t.Errorf("merged %v, want #1 and #2", got)
	}
	g.noDuplicateWrites(t)
}

// waitForFile waits (60 s at most) until path exists.
func waitForFile(t *testing.T, path string) {
	t.Helper()
	waitFor(t, path+" to appear", func() bool { _, err := os.Stat(path); return err == nil })
}

// TestResumeAfterALostWorktreeMergesFromTheBranch: the supervisor is
// gone, the worker's checkout is deleted (its commit with it: nothing had
// fetched it), the worker finishes done; the next `backlog run` does not
// exit 1 on the missing checkout: the worker is lost, relaunched once in
// a checkout made again from its branch, and the issue merges.
func TestResumeAfterALostWorktreeMergesFromTheBranch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "First", "Files: a/**")
	gate := f.shellWorkers(`set -e
echo work > own.txt && gitc add own.txt && gitc commit -q -m "Work"
touch "$GATE/committed"
i=0; until [ -e "$GATE/go" ]; do i=$((i+1)); [ $i -gt 1200 ] && exit 1; sleep 0.05; done
echo "[backlog-result] state=done detail=shell worker"
`)
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan result, 1)
	go func() { first <- f.runCtx(ctx, nil, 1) }()
	waitForFile(t, filepath.Join(gate, "committed"))
	cancel() // the supervisor dies; its worker keeps running in tmux
	if r := <-first; r.err == nil {
		t.Fatalf("the first life ended %+v, want it cancelled", r.Result)
	}
	wts, _ := filepath.Glob(filepath.Join(filepath.Dir(f.root), "worktrees", "*", "i1"))
	if len(wts) != 1 {
		t.Fatalf("worktrees %v, want #1's", wts)
	}
	if err := os.RemoveAll(wts[0]); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gate, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := f.run(1)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("resumed run: exit %d, %v; want 0 with #1 merged from its branch", res.ExitCode, res.err)
	}
	if got := mergedOrder(f.events(res.Dir)); len(got) != 1 {
		t.Errorf("merged %v, want #1", got)
	}
}
