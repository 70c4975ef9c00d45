package backlogrun

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
)

// The "overnight" run: eight issues through the real binary against the
// fake GitHub, while origin disappears, GitHub answers 500, a worker's
// worktree is deleted, a worker's account runs out (its CLI's usage
// limit, a pause the supervisor is killed in), a worker keeps printing
// without changing anything, and the supervisor is killed -9 three times.
// The only commands are the restarts a user's cron would make. Every
// fault is set off at a point the test sees (an event of the run, a
// worker's log), and each outage lasts until the supervisor is seen
// waiting it out.
func TestBacklogOvernightRunSurvivesOutagesALostWorktreeAUsageLimitABusyWorkerAndKills(t *testing.T) {
	t.Parallel()
	for trial := range overnightTrials() {
		t.Run(fmt.Sprint("trial", trial), overnightTrial)
	}
}

// overnightTrials is 1, or $WAVE_OVERNIGHT_TRIALS for a soak run.
func overnightTrials() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("WAVE_OVERNIGHT_TRIALS"), &n); err == nil && n > 0 {
		return n
	}
	return 1
}

// flakyGitHub stands in front of the fake GitHub: while down, every
// request is answered 500 and never reaches it (nothing is applied).
type flakyGitHub struct {
	down atomic.Bool
	srv  *httptest.Server
}

func newFlakyGitHub(t *testing.T, gh *forgetest.Server) *flakyGitHub {
	u, err := url.Parse(gh.URL)
	if err != nil {
		t.Fatal(err)
	}
	f := &flakyGitHub{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.down.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"message":"Internal Server Error"}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func waitStarted(prefix string) func(backlog.Event) bool {
	return func(ev backlog.Event) bool {
		return ev.Kind == backlog.EvWaitStarted && strings.HasPrefix(ev.Cause, prefix)
	}
}

func overnightTrial(t *testing.T) {
	r := e2etest.NewBacklogRepo(t)
	gh := forgetest.NewServer(t, "acme", "widgets")
	gate := filepath.Join(t.TempDir(), "gate")
	if err := os.MkdirAll(gate, 0o755); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 8; n++ {
		knobs := "wait=" + filepath.Join(gate, fmt.Sprint("go", n))
		switch n {
		case 3:
			knobs += " fail-attempts=1" // its worktree is deleted under it: the first attempt fails
		case 7:
			knobs += " usage-limit=claude-stream-json reset-in=4s" // its account is out, for 4 s
		case 8:
			knobs += " busy-attempts=1" // prints and prints, changes nothing
		}
		gh.AddIssue(backlog.Issue{Number: n, Title: fmt.Sprintf("Issue %d", n), Body: fmt.Sprintf("Files: part%d/**\n\nlocal-agent: %s", n, knobs)})
	}
	open := func(n int) {
		if err := os.WriteFile(filepath.Join(gate, fmt.Sprint("go", n)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flaky := newFlakyGitHub(t, gh)
	cfg, _ := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	r.Write("wave.config.yaml", string(cfg)+fmt.Sprintf("github:\n  owner: acme\n  repo: widgets\n  apiUrl: %s\n", flaky.srv.URL))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	l := &e2etest.Lives{R: r, Args: []string{"backlog", "run", "--issues", "1,2,3,4,5,6,7,8", "--no-dashboard", "--width", "3"},
		Env: []string{"GITHUB_TOKEN=" + forgetest.Token, "WAVE_BACKLOG_NO_PROGRESS_SECONDS=3"}}
	defer l.Dump(t)
	defer func() {
		if t.Failed() {
			dir, _ := r.RunLog()
			b, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
			t.Logf("events:\n%s", b)
		}
	}()
	const long = 90 * time.Second

	// Life 1: #3's worktree is deleted while its worker works; #1 merges,
	// then kill -9.
	life1 := e2etest.StartLife(l.Start(ctx, ""))
	var wt3 string
	life1.WaitFor(t, "#3's worker at work", long, func() bool {
		_, evs := r.RunLog()
		for _, ev := range evs {
			if ev.Kind == backlog.EvWorkerStarted && ev.Issue == 3 && ev.Attempt == 1 {
				b, _ := os.ReadFile(filepath.Join(ev.RunDir, "agent.log"))
				if bytes.Contains(b, []byte("[local-worker] issue #3 attempt 1")) {
					wt3 = ev.Worktree
					return true
				}
			}
		}
		return false
	})
	if err := os.RemoveAll(wt3); err != nil {
		t.Fatal(err)
	}
	open(3)
	open(1)
	life1.WaitFor(t, "#1 merged", long, func() bool { return r.HasEvent(e2etest.Merged(1)) })
	life1.Kill(t)

	// Life 2: origin disappears once #2 is done; kill -9 while the
	// supervisor waits for it.
	life2 := e2etest.StartLife(l.Start(ctx, ""))
	life2.WaitFor(t, "life 2 resuming", long, func() bool { return strings.Contains(l.Outs[1].String(), "resuming run") })
	away := r.Origin + ".away"
	if err := os.Rename(r.Origin, away); err != nil {
		t.Fatal(err)
	}
	open(2)
	life2.WaitFor(t, "the wait for origin recorded", long, func() bool { return r.HasEvent(waitStarted(gitops.CauseUnreachable)) })
	life2.Kill(t)

	// Life 3 starts while origin is still away: it takes up the wait;
	// origin comes back once life 3 has been seen failing too.
	dir, _ := r.RunLog()
	before, _ := os.ReadFile(filepath.Join(dir, "waiting.json"))
	life3 := e2etest.StartLife(l.Start(ctx, ""))
	life3.WaitFor(t, "life 3 waiting for origin", long, func() bool {
		now, err := os.ReadFile(filepath.Join(dir, "waiting.json"))
		return err == nil && !bytes.Equal(now, before) && strings.Contains(l.Outs[2].String(), "was waiting out origin unreachable")
	})
	if err := os.Rename(away, r.Origin); err != nil {
		t.Fatal(err)
	}
	life3.WaitFor(t, "#2 merged", long, func() bool { return r.HasEvent(e2etest.Merged(2)) })

	// GitHub answers 500 until the supervisor is seen waiting for it.
	flaky.down.Store(true)
	open(4)
	life3.WaitFor(t, "the wait for GitHub recorded", long, func() bool { return r.HasEvent(waitStarted("GitHub")) })
	flaky.down.Store(false)
	life3.WaitFor(t, "#4 merged", long, func() bool { return r.HasEvent(e2etest.Merged(4)) })

	// A usage-limit window: #7's worker finds its account out, the run
	// pauses, and the supervisor is killed -9 during the pause. Life 4
	// takes the pause up from the log; at the reset #7 goes on and merges.
	open(7)
	life3.WaitFor(t, "the pause recorded", long, func() bool { return r.HasEvent(usagePaused) })
	life3.Kill(t)
	life4 := e2etest.StartLife(l.Start(ctx, ""))
	life4.WaitFor(t, "#7 merged after the reset", long, func() bool { return r.HasEvent(e2etest.Merged(7)) })
	// #8 keeps printing without a change: stopped as no-progress,
	// relaunched once, merged.
	open(8)
	open(5)
	open(6)
	select {
	case <-life4.Done:
		if life4.Err != nil {
			t.Fatalf("life 4 ended with %v, want exit 0", life4.Err)
		}
	case <-ctx.Done():
		t.Fatal("life 4 did not finish")
	}
	overnightChecks(t, r, gh)
}

func usagePaused(ev backlog.Event) bool {
	return ev.Kind == backlog.EvUsageLimit && ev.Outcome == backlog.UsagePaused
}

// overnightChecks: one run, every issue merged exactly once (events, merge
// commits), each write made once on GitHub, one final PR, and both
// outages recorded as waits that ended.
func overnightChecks(t *testing.T, r *e2etest.BacklogRepo, gh *forgetest.Server) {
	t.Helper()
	run, evs := e2etest.BacklogEvents(t, r)
	if !run.Finished || run.Tally().Merged != 8 || exitOf(run) != 0 {
		t.Fatalf("run finished=%v tally %+v exit %d, want all 8 merged, exit 0", run.Finished, run.Tally(), exitOf(run))
	}
	count := map[int]int{}
	for _, ev := range evs {
		if ev.Kind == backlog.EvMerged {
			count[ev.Issue]++
		}
	}
	log := e2etest.GitIn(t, r.Origin, "log", "--merges", "--format=%s", run.Info.WaveBranch)
	for n := 1; n <= 8; n++ {
		if count[n] != 1 {
			t.Errorf("#%d merged %d times, want once", n, count[n])
		}
		if c := strings.Count(log, fmt.Sprintf("Merge #%d:", n)); c != 1 {
			t.Errorf("#%d has %d merge commits on the wave branch, want 1", n, c)
		}
		if c := countOf(gh.Comments(n), "wave-orchestrator:claim run="); c != 1 {
			t.Errorf("#%d has %d claim comments, want 1", n, c)
		}
	}
	if is := run.Issues[3]; is.Attempts != 2 || is.Salvages != 1 {
		t.Errorf("#3 (worktree deleted): %d attempts, %d salvages; want its one relaunch", is.Attempts, is.Salvages)
	}
	overnightLimitChecks(t, run, evs)
	// The fake's ordered log: no comment marker twice, one PR per head.
	marker := regexp.MustCompile(`<!-- wave-orchestrator:[^>]*-->`)
	for n := 1; n <= 8; n++ {
		seen := map[string]int{}
		for _, c := range gh.Comments(n) {
			for _, m := range marker.FindAllString(c.Body, -1) {
				if seen[m]++; seen[m] == 2 {
					t.Errorf("#%d: marker %s on two comments", n, m)
				}
			}
		}
	}
	heads := map[string]int{}
	finals := 0
	for _, m := range gh.MutationsOn(forgetest.RoutePullCreate) {
		heads[m.Summary]++
	}
	for k, c := range heads {
		if c != 1 {
			t.Errorf("PR create %q applied %d times", k, c)
		}
	}
	for _, pr := range gh.PRs() {
		if pr.Base == run.Info.Base {
			finals++
		}
	}
	if finals != 1 || run.FinalPR == nil {
		t.Errorf("%d final PRs into %s (recorded %+v), want 1", finals, run.Info.Base, run.FinalPR)
	}
	causes := map[string]bool{}
	for _, w := range run.Waits {
		if w.Until == nil {
			t.Errorf("wait %+v never ended", w)
		}
		causes[w.Cause] = true
	}
	if !causes[gitops.CauseUnreachable] || !causes[forge.CauseGitHubServer+" (HTTP 500)"] {
		t.Errorf("recorded waits %+v, want origin's outage and GitHub's 500s", run.Waits)
	}
}

// overnightLimitChecks: the usage limit paused the run once and cost #7
// nothing (no salvage, no relaunch before the reset); the busy worker #8
// was stopped as no-progress once and merged on its salvage relaunch.
func overnightLimitChecks(t *testing.T, run *backlog.Run, evs []backlog.Event) {
	t.Helper()
	var pauses, resumes, stops int
	var until time.Time
	for _, ev := range evs {
		switch {
		case usagePaused(ev):
			pauses++
			until = *ev.Until
		case ev.Kind == backlog.EvUsageLimit && ev.Outcome == backlog.UsageResumed:
			resumes++
		case ev.Kind == backlog.EvWorkerStarted && ev.Issue == 7 && ev.Attempt == 2 && ev.At.Before(until):
			t.Errorf("#7 started again at %s, before the reset %s", ev.At, until)
		case ev.Kind == backlog.EvWorkerFinished && ev.Outcome == backlog.OutcomeNoProgress:
			stops++
		}
	}
	if pauses != 1 || resumes != 1 {
		t.Errorf("%d pauses, %d ends; want the one usage-limit window", pauses, resumes)
	}
	if is := run.Issues[7]; is.Attempts != 2 || is.Salvages != 0 {
		t.Errorf("#7 (usage limit): %d attempts, %d salvages; want the limited run and one after the reset, no salvage", is.Attempts, is.Salvages)
	}
	if is := run.Issues[8]; stops != 1 || is.Attempts != 2 || is.Salvages != 1 {
		t.Errorf("#8 (busy, no progress): %d no-progress stops, %d attempts, %d salvages; want one stop and its salvage relaunch", stops, is.Attempts, is.Salvages)
	}
}

func countOf(cs []backlog.Comment, s string) int {
	n := 0
	for _, c := range cs {
		n += strings.Count(c.Body, s)
	}
	return n
}

func exitOf(r *backlog.Run) int {
	if r.ExitCode == nil {
		return -1
	}
	return *r.ExitCode
}

// TestBacklogRunStartedDuringAnOutageWaitsForIt: `backlog run` typed
// while GitHub answers 500 and origin is gone does not exit: it waits for
// each (saying so) and, once both are back, runs to its end.
func TestBacklogRunStartedDuringAnOutageWaitsForIt(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	gh := forgetest.NewServer(t, "acme", "widgets")
	gh.AddIssue(backlog.Issue{Number: 1, Title: "One", Body: "Files: a/**"})
	flaky := newFlakyGitHub(t, gh)
	cfg, _ := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	r.Write("wave.config.yaml", string(cfg)+fmt.Sprintf("github:\n  owner: acme\n  repo: widgets\n  apiUrl: %s\n", flaky.srv.URL))
	away := r.Origin + ".away"
	if err := os.Rename(r.Origin, away); err != nil {
		t.Fatal(err)
	}
	flaky.down.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l := &e2etest.Lives{R: r, Args: []string{"backlog", "run", "--issues", "1", "--no-dashboard"}, Env: []string{"GITHUB_TOKEN=" + forgetest.Token}}
	defer l.Dump(t)
	run := e2etest.StartLife(l.Start(ctx, ""))
	run.WaitFor(t, "the start waiting for GitHub", 90*time.Second, func() bool {
		return strings.Contains(l.Outs[0].String(), "waiting: "+forge.CauseGitHubServer+" (HTTP 500) since ")
	})
	flaky.down.Store(false)
	run.WaitFor(t, "the start waiting for origin", 90*time.Second, func() bool {
		return r.HasEvent(waitStarted(gitops.CauseUnreachable))
	})
	if err := os.Rename(away, r.Origin); err != nil {
		t.Fatal(err)
	}
	select {
	case <-run.Done:
		if run.Err != nil {
			t.Fatalf("run ended with %v, want exit 0", run.Err)
		}
	case <-ctx.Done():
		t.Fatal("the run did not finish")
	}
	got, _ := e2etest.BacklogEvents(t, r)
	if !got.Finished || got.Tally().Merged != 1 || len(gh.PRs()) == 0 {
		t.Errorf("run finished=%v tally %+v, %d PRs; want #1 merged and proposed", got.Finished, got.Tally(), len(gh.PRs()))
	}
}
