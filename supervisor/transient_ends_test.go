package supervisor

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// A run's start and its end wait out a transient failure as its loop
// does, and the wait is in the run's log: a supervisor restarted
// mid-outage keeps the window and what it means for its workers.

// waitingOrEnded waits (60 s at most) until the supervisor says it waits
// out cause, or its run ends first (then it fails, with the end).
func (f *fixture) waitingOrEnded(done chan result, cause string) *backlog.Waiting {
	f.t.Helper()
	var w *backlog.Waiting
	waitFor(f.t, "the supervisor to say it waits out "+strconv.Quote(cause), func() bool {
		select {
		case res := <-done: // never, for a nil done
			done <- res
			f.t.Fatalf("the run ended (exit %d, %v) instead of waiting out %q", res.ExitCode, res.err, cause)
		default:
		}
		if dir := f.currentRunDir(); dir != "" {
			w = readWaiting(dir)
		}
		return w != nil && w.Cause == cause
	})
	return w
}

// waits are the run's recorded transient windows.
func (f *fixture) waits(dir string) []backlog.Wait { return backlog.Reduce(f.events(dir)).Waits }

// TestRunStartedWhileOriginIsDownStartsOnceItIsBack: `backlog run` with
// origin unreachable does not exit: it waits (status says so), and once
// origin is back it cuts the one wave branch and merges the issue.
func TestRunStartedWhileOriginIsDownStartsOnceItIsBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "First", "Files: a/**")
	away := f.origin + ".away"
	if err := os.Rename(f.origin, away); err != nil {
		t.Fatal(err)
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		done <- f.runCtx(ctx, fastRetries, 1)
	}()
	f.waitingOrEnded(done, gitops.CauseUnreachable)
	if v, err := Status(context.Background(), f.currentRunDir(), nil, true, time.Now()); err != nil || v.Waiting == nil {
		t.Errorf("status while the start waits: %+v, %v; want its waiting", v.Waiting, err)
	}
	if err := os.Rename(away, f.origin); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v; want 0 once origin is back", res.ExitCode, res.err)
	}
	if got := mergedOrder(f.events(res.Dir)); len(got) != 1 {
		t.Errorf("merged %v, want #1", got)
	}
	if runs, _ := runlog.List(f.layout().StateDir); len(runs) != 1 {
		t.Errorf("%d runs, want the one", len(runs))
	}
	waves := 0
	for _, b := range f.originBranches() {
		if strings.HasPrefix(b, "refs/heads/wave/") && !strings.Contains(b, "-i") {
			waves++
		}
	}
	if waves != 1 {
		t.Errorf("origin has %d wave branches, want 1: %v", waves, f.originBranches())
	}
	if w := f.waits(res.Dir); len(w) != 1 || w[0].Cause != gitops.CauseUnreachable || w[0].Outcome != backlog.WaitRecovered {
		t.Errorf("recorded waits %+v, want one origin outage, recovered", w)
	}
}

// TestRunStartedWhileGitHubIsDownStartsOnceItIsBack: GitHub answers 502
// to more requests than the client retries as the run starts (before it
// has a directory); the start waits, saying so, then runs to the end.
func TestRunStartedWhileGitHubIsDownStartsOnceItIsBack(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.ghIssue(1, "One", "Files: a/**")
	g.srv.Fail5xx(12)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := g.runCtx(ctx, fastRetries, 1)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v; want 0 once GitHub answers", res.ExitCode, res.err)
	}
	if !strings.Contains(res.out, "waiting: "+forge.CauseGitHubServer+" (HTTP 502) since ") || !strings.Contains(res.out, "recovered: ") {
		t.Errorf("output never said the start waits for GitHub:\n%s", res.out)
	}
	if runs, _ := runlog.List(g.layout().StateDir); len(runs) != 1 {
		t.Errorf("%d runs, want the one", len(runs))
	}
	g.noDuplicateWrites(t)
}

// TestRunStartRefusedByGitHubStillExitsAtOnce: a refused token at the
// start is not waited out.
func TestRunStartRefusedByGitHubStillExitsAtOnce(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.ghIssue(1, "One", "Files: a/**")
	g.srv.FailNextOn(forgetest.RouteRepoGet, http.StatusUnauthorized)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := g.runCtx(ctx, fastRetries, 1)
	if res.err == nil || ctx.Err() != nil || strings.Contains(res.out, "waiting:") {
		t.Fatalf("run: exit %d, %v, output:\n%s\nwant an error at once, no wait", res.ExitCode, res.err, res.out)
	}
}

// TestFinalPRDuringAGitHubOutageIsWaitedOut: GitHub answers 502 to the
// final PR for a while; the end waits it out and opens exactly one PR,
// exit 0 (it used to exit 1 and leave the PR to the next run).
func TestFinalPRDuringAGitHubOutageIsWaitedOut(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.config = strings.Replace(g.config, "backlog:\n", "backlog:\n  workerPRs: false\n", 1)
	g.ghIssue(1, "One", "Files: a/**")
	for range 6 {
		g.srv.FailNextOn(forgetest.RoutePullCreate, http.StatusBadGateway)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := g.runCtx(ctx, fastRetries, 1)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v; want 0 with the final PR opened after the outage", res.ExitCode, res.err)
	}
	if !strings.Contains(res.out, "waiting: "+forge.CauseGitHubServer+" (HTTP 502) since ") {
		t.Errorf("output never said the end waits for GitHub:\n%s", res.out)
	}
	if finals := g.prsInto("main"); len(finals) != 1 {
		t.Fatalf("%d PRs into main, want exactly one", len(finals))
	}
	r, _, _ := runlog.Read(res.Dir)
	if !r.Finished || r.FinalPR == nil {
		t.Errorf("run finished %v, final PR %+v", r.Finished, r.FinalPR)
	}
	if w := r.Waits; len(w) != 1 || w[0].Outcome != backlog.WaitRecovered {
		t.Errorf("recorded waits %+v, want the end's, recovered", w)
	}
	g.noDuplicateWrites(t)
}

// TestFinalPROutageOutlastingTheWindowLeavesTheRunOpen: the end gives up
// after backlog.transientRetrySeconds naming the cause; the run stays
// open and the next `backlog run` opens the one PR.
func TestFinalPROutageOutlastingTheWindowLeavesTheRunOpen(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.config = strings.Replace(g.config, "backlog:\n", "backlog:\n  workerPRs: false\n  transientRetrySeconds: 1\n", 1)
	g.ghIssue(1, "One", "Files: a/**")
	for range 1000 {
		g.srv.FailNextOn(forgetest.RoutePullCreate, http.StatusBadGateway)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	first := g.runCtx(ctx, fastRetries, 1)
	var gave *GaveUpError
	if !errors.As(first.err, &gave) || !strings.Contains(first.err.Error(), "the run stays open") {
		t.Fatalf("first life: exit %d, %v; want it to give up, saying the run stays open", first.ExitCode, first.err)
	}
	if r, _, _ := runlog.Read(first.Dir); r.Finished || !r.Finishing {
		t.Fatalf("run finished %v finishing %v; want it open, in its end", r.Finished, r.Finishing)
	}
	for len(g.srv.PRs()) == 0 && g.srv.Count(forgetest.RoutePullCreate) < 1000 {
		// Drain the faults: GitHub is back.
		_, _ = http.Post(g.srv.URL+"/api/v3/repos/"+ghOwner+"/"+ghRepo+"/pulls", "application/json", nil)
	}
	second := g.run(1)
	if second.err != nil || second.ExitCode != exitcode.OK || second.Dir != first.Dir {
		t.Fatalf("second life: exit %d, %v", second.ExitCode, second.err)
	}
	if finals := g.prsInto("main"); len(finals) != 1 {
		t.Errorf("%d PRs into main, want exactly one", len(finals))
	}
}

// TestWaitWindowSurvivesARestart: a supervisor killed while waiting out
// an outage leaves the wait in the log; the next one takes it up with the
// same start, so it gives up when the first would have, not a whole new
// window later.
func TestWaitWindowSurvivesARestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "First", "Files: a/**")
	f.config = strings.Replace(f.config, "\nbacklog:\n", "\nbacklog:\n  transientRetrySeconds: 4\n", 1)
	f.shellWorkers(`set -e
echo work > own.txt && gitc add own.txt && gitc commit -q -m "Work"
mv ` + shellQuote(f.origin) + ` ` + shellQuote(f.origin+".gone") + `
echo "[backlog-result] state=done detail=shell worker"
`)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan result, 1)
	go func() { done <- f.runCtx(ctx, fastRetries, 1) }()
	w := f.waitingOrEnded(done, gitops.CauseUnreachable)
	cancel() // the supervisor dies mid-wait
	<-done
	open := backlog.Reduce(f.events(f.currentRunDir())).OpenWait()
	if open == nil || !open.Since.Equal(w.Since) {
		t.Fatalf("the log's open wait %+v, want the one since %s", open, w.Since)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel2()
	res := f.runCtx(ctx2, fastRetries, 1)
	var gave *GaveUpError
	if !errors.As(res.err, &gave) {
		t.Fatalf("second life: exit %d, %v; want it to give up", res.ExitCode, res.err)
	}
	if !gave.Since.Equal(w.Since) {
		t.Errorf("the second life gave up on a wait since %s, want the first life's %s", gave.Since, w.Since)
	}
	if !strings.Contains(res.out, "was waiting out origin unreachable since") {
		t.Errorf("the second life did not say it takes up the wait:\n%s", res.out)
	}
	if ws := f.waits(res.Dir); len(ws) != 1 || ws[0].Outcome != backlog.WaitGaveUp {
		t.Errorf("recorded waits %+v, want the one, given up", ws)
	}
}

// TestWorkerFailedInAnOutageSeenBeforeARestartKeepsItsSalvage: the
// supervisor sees origin go away, is killed, a worker fails meanwhile;
// origin comes back and the next supervisor, knowing the outage from the
// log, relaunches that worker without spending its salvage (a genuine
// failure after still gets it, and the issue merges).
func TestWorkerFailedInAnOutageSeenBeforeARestartKeepsItsSalvage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "Fails in the outage", "Files: a/**")
	f.issue(2, "Takes origin away", "Files: b/**")
	away := f.origin + ".away"
	gate := f.shellWorkers(`n=$WAVE_ISSUE_NUMBER
if [ "$n" = 1 ]; then
  case "$WAVE_ATTEMPT" in
  1) i=0; until [ -e "$GATE/fail" ]; do i=$((i+1)); [ $i -gt 1200 ] && break; sleep 0.05; done
     echo "the tests could not finish"; exit 1 ;;
  2) echo "a genuine failure"; exit 1 ;;
  esac
fi
set -e
echo "work of #$n" > own-$n.txt && gitc add own-$n.txt && gitc commit -q -m "Work on #$n"
if [ "$n" = 2 ] && [ "$WAVE_ATTEMPT" = 1 ]; then mv ` + shellQuote(f.origin) + ` ` + shellQuote(away) + `; fi
echo "[backlog-result] state=done detail=shell worker"
`)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan result, 1)
	go func() { done <- f.runCtx(ctx, fastRetries, 1, 2) }()
	f.waitingOrEnded(done, gitops.CauseUnreachable)
	cancel() // killed mid-wait; #1's worker runs on in tmux
	<-done
	if err := os.WriteFile(filepath.Join(gate, "fail"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(away, f.origin); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel2()
	res := f.runCtx(ctx2, fastRetries, 1, 2)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("second life: exit %d, %v; want 0: the outage the first life saw must not spend #1's salvage", res.ExitCode, res.err)
	}
	is := backlog.Reduce(f.events(res.Dir)).Issues[1]
	if is.State != backlog.StateMerged || is.Attempts != 3 || is.Salvages != 1 || is.EnvRelaunches != 1 {
		t.Errorf("#1: %s after %d attempts, %d salvages, %d environment relaunches; want merged on the third, one of each",
			is.State, is.Attempts, is.Salvages, is.EnvRelaunches)
	}
}
