package supervisor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// limitedWorkers makes f's workers a script: issues in limited print what
// claude 2.1.197 prints in stream-json when the subscription's session
// limit is reached, with the reset an hour away, and exit 1, on their
// first attempt; every other run commits its issue's file and ends done,
// issue free once the pause is in the run's log.
func limitedWorkers(f *fixture, free int, limited ...int) {
	var cases []string
	for _, n := range limited {
		cases = append(cases, itoa(n))
	}
	f.shellWorkers(`set -e
RUNS=` + shellQuote(runlog.Root(f.layout().StateDir)) + `
n=$WAVE_ISSUE_NUMBER
case " ` + strings.Join(cases, " ") + ` " in *" $n "*)
  if [ "$WAVE_ATTEMPT" = 1 ]; then
    reset=$(( $(date +%s) + 3600 ))
    printf '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":%s,"rateLimitType":"five_hour","isUsingOverage":false}}\n' "$reset"
    printf '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"num_turns":1,"result":"You'"'"'ve hit your session limit · resets 5:47am (UTC)","total_cost_usd":0}\n'
    exit 1
  fi;;
esac
if [ "$n" = ` + itoa(free) + ` ]; then
  i=0; until grep -q '"usage_limit"' "$RUNS"/*/events.jsonl 2>/dev/null; do i=$((i+1)); [ $i -gt 1200 ] && exit 1; sleep 0.05; done
fi
echo "work on $n" > own-$n.txt && gitc add own-$n.txt && gitc commit -q -m "Work on #$n"
echo "[backlog-result] state=done detail=worked"
`)
}

// A usage limit pauses the fleet instead of failing it: the two workers
// whose CLI said the account is out spend no salvage and no rework, the
// person is told once, the worker still running finishes and merges
// during the pause, nothing of the executor starts before the reset, and
// at the reset the same two workers go on in the same worktrees and
// merge, each issue once.
func TestUsageLimitPausesTheFleetAndTheSameWorkersGoOnAfterTheReset(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "First", "Files: a/**")
	f.issue(2, "Second", "Files: b/**")
	f.issue(3, "Third", "Files: c/**")
	limitedWorkers(f, 3, 1, 2)
	clk := &clock{}
	or := f.startRun(t, func(o *Options) { o.Now = clk.now }, 1, 2, 3)
	or.until(t, f, "#3 merged during the pause", func(ev backlog.Event) bool { return ev.Kind == backlog.EvMerged && ev.Issue == 3 })
	or.until(t, f, "both limited workers ended usage-limited", func(backlog.Event) bool {
		evs := f.events(or.dir())
		return countEvents(evs, backlog.EvWorkerFinished, backlog.OutcomeUsageLimited) == 2
	})
	r, _, _ := runlog.Read(or.dir())
	if p := r.Paused("shell"); p == nil || !p.Reset || len(p.Issues) != 2 {
		t.Fatalf("pause %+v, want the shell executor paused until the CLI's reset for #1 and #2", p)
	}
	for _, n := range []int{1, 2} {
		if _, err := os.Stat(filepath.Join(or.dir(), "runs", "i"+itoa(n)+"-a2")); err == nil {
			t.Fatalf("#%d started again before the reset", n)
		}
	}
	clk.skip(time.Hour + time.Minute) // the reset passes
	res := or.end(t)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("exit %d, %v\n%s", res.ExitCode, res.err, res.out)
	}
	evs := f.events(res.Dir)
	r, _, _ = runlog.Read(res.Dir)
	for n := 1; n <= 3; n++ {
		is := r.Issues[n]
		if is.State != backlog.StateMerged || countIssueEvents(evs, backlog.EvMerged, n) != 1 {
			t.Errorf("#%d %s, merged %d times; want merged once", n, is.State, countIssueEvents(evs, backlog.EvMerged, n))
		}
		if is.Salvages != 0 || is.Reworks != 0 || is.EnvRelaunches != 0 {
			t.Errorf("#%d spent salvages %d reworks %d environment relaunches %d, want none", n, is.Salvages, is.Reworks, is.EnvRelaunches)
		}
	}
	for _, n := range []int{1, 2} {
		wt := ""
		for _, ev := range evs {
			if ev.Kind == backlog.EvWorkerStarted && ev.Issue == n {
				if wt != "" && ev.Worktree != wt {
					t.Errorf("#%d went on in %s, not its worktree %s", n, ev.Worktree, wt)
				}
				wt = ev.Worktree
			}
		}
		prompt, _ := os.ReadFile(filepath.Join(res.Dir, "runs", "i"+itoa(n)+"-a2", "prompt.md"))
		if !strings.Contains(string(prompt), "usage limit") {
			t.Errorf("#%d's relaunch is not told it stopped at a usage limit:\n%s", n, prompt)
		}
	}
	if c := strings.Count(res.out, "paused: shell usage limit until"); c != 1 {
		t.Errorf("the pause was said %d times, want once:\n%s", c, res.out)
	}
	if countEvents(evs, backlog.EvUsageLimit, backlog.UsageResumed) != 1 {
		t.Errorf("want one end of the pause in the log")
	}
}

func countEvents(evs []backlog.Event, kind, outcome string) int {
	c := 0
	for _, ev := range evs {
		if ev.Kind == kind && ev.Outcome == outcome {
			c++
		}
	}
	return c
}

func countIssueEvents(evs []backlog.Event, kind string, n int) int {
	c := 0
	for _, ev := range evs {
		if ev.Kind == kind && ev.Issue == n {
			c++
		}
	}
	return c
}

// backlog.executor.fallbacks take the work while the workers' executor is
// out: #1's shell worker finds its account out (the reset an hour away),
// and its relaunch runs at once on the fallback, local, and merges, with
// no salvage spent and the pause still open.
func TestAFallbackExecutorTakesTheWorkDuringAUsageLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "First", "Files: a/**")
	limitedWorkers(f, 0, 1)
	f.config = strings.Replace(f.config, "    id: shell\n", "    id: shell\n    fallbacks: local\n", 1)
	res := f.run(1)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("exit %d, %v\n%s", res.ExitCode, res.err, res.out)
	}
	evs := f.events(res.Dir)
	r := backlog.Reduce(evs)
	if is := r.Issues[1]; is.State != backlog.StateMerged || is.Attempts != 2 || is.Salvages != 0 {
		t.Fatalf("#1: %s after %d attempts, %d salvages; want merged on the fallback's run, no salvage", is.State, is.Attempts, is.Salvages)
	}
	var launch struct {
		ExecutorID string `json:"executorId"`
	}
	b, err := os.ReadFile(filepath.Join(res.Dir, "runs", "i1-a2", "launch.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &launch); err != nil || launch.ExecutorID != "local" {
		t.Fatalf("#1's relaunch ran on %q (%v), want the fallback local", launch.ExecutorID, err)
	}
	if countEvents(evs, backlog.EvUsageLimit, backlog.UsageResumed) != 0 {
		t.Errorf("the pause ended before its reset")
	}
}

// A reviewer whose CLI says its account is out pauses its executor as a
// worker does, spending nothing: the issue is neither parked nor sent
// back for rework, the person is told once, and at the reset (two
// seconds away: the runs are real, so is the clock) the review runs
// again and the issue merges once.
func TestAReviewerAtItsUsageLimitWaitsForTheResetAndTheIssueMergesOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.actsOutside() // the reviewer keeps its mark outside its scratch checkout
	mark := filepath.Join(t.TempDir(), "limited")
	script := filepath.Join(t.TempDir(), "review.sh")
	body := `if [ ! -e ` + shellQuote(mark) + ` ]; then
  : > ` + shellQuote(mark) + `
  reset=$(( $(date +%s) + 2 ))
  printf '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":%s}}\n' "$reset"
  printf '{"type":"result","is_error":true,"api_error_status":429,"result":"You'"'"'ve hit your session limit · resets 5:47am (UTC)"}\n'
  exit 1
fi
echo "[wave-verdict] pass detail=reviewed"
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	f.config = baseConfig + "  review:\n    executor:\n      id: shell\n      shell.command: sh " + script + "\n"
	f.issue(1, "Reviewed", "Files: backlog-work/**")
	res := f.run(1)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("exit %d, %v\n%s", res.ExitCode, res.err, res.out)
	}
	evs := f.events(res.Dir)
	r := backlog.Reduce(evs)
	if is := r.Issues[1]; is.State != backlog.StateMerged || is.Reworks != 0 || is.Attempts != 1 || countIssueEvents(evs, backlog.EvMerged, 1) != 1 {
		t.Fatalf("#1: %s after %d attempts, %d rework rounds; want merged once, on its first run, no rework", is.State, is.Attempts, is.Reworks)
	}
	var until time.Time
	var reviews []time.Time
	for _, ev := range evs {
		switch {
		case ev.Kind == backlog.EvUsageLimit && ev.Outcome == backlog.UsagePaused && ev.Executor == "shell" && ev.Until != nil:
			until = *ev.Until
		case ev.Kind == backlog.EvVerify && ev.Outcome == "reviewing":
			reviews = append(reviews, ev.At)
		}
	}
	if until.IsZero() || len(reviews) != 2 {
		t.Fatalf("pause until %v, %d review runs; want a pause of shell and the review run twice\n%s", until, len(reviews), res.out)
	}
	if reviews[1].Before(until) {
		t.Errorf("the review ran again at %s, before the reset %s", reviews[1], until)
	}
	if c := strings.Count(res.out, "paused: shell usage limit until"); c != 1 {
		t.Errorf("the pause was said %d times, want once:\n%s", c, res.out)
	}
}
