package backlogrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// pipelineVerify is a backlog.verify script that notes each verify as it
// begins ("issue commit" in ctl/verifying), then holds until the test
// releases it (ctl/pass-<issue> or ctl/pass-all) and notes the tree it
// passed on in ctl/passed. A verify whose supervisor was killed under it
// ends without a verdict: nobody is left to record one.
func pipelineVerify(ctl string) string {
	return `#!/bin/sh
CTL='` + ctl + `'
n=$WAVE_ISSUE_NUMBER
echo "$n $WAVE_MERGE_COMMIT" >> "$CTL/verifying"
until [ -e "$CTL/pass-all" ] || [ -e "$CTL/pass-$n" ]; do
  kill -0 $PPID 2>/dev/null || exit 3
  sleep 0.05
done
kill -0 $PPID 2>/dev/null || exit 3
echo "$n $WAVE_MERGE_COMMIT $(git rev-parse 'HEAD^{tree}')" >> "$CTL/passed"
`
}

// TestBacklogKill9InTheMergePipelineMergesOnceAndOnlyVerified kills the
// supervisor with SIGKILL while four merge candidates are verified at
// once, each on top of the ones ahead of it; then, once the first passed,
// between its verify and its push (the others still verifying); then
// between a push and its record. Each life resumes the run: every issue
// is merged exactly once, and every commit the wave branch ever pointed
// at on origin is a merge some verify passed on, as that exact tree.
func TestBacklogKill9InTheMergePipelineMergesOnceAndOnlyVerified(t *testing.T) {
	const issues = 4
	r := e2etest.NewBacklogRepo(t)
	for n := 1; n <= issues; n++ {
		r.Issue(n, fmt.Sprintf("Issue %d", n), fmt.Sprintf("Files: part%d/**", n))
	}
	ctl := filepath.Join(r.Origin, "ctl")
	if err := os.MkdirAll(ctl, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(ctl, "verify.sh")
	if err := os.WriteFile(script, []byte(pipelineVerify(ctl)), 0o755); err != nil {
		t.Fatal(err)
	}
	r.SetBacklogKey(t, "verify: [sh, '"+script+"']")
	// Every value origin's wave branch takes is kept in its reflog.
	e2etest.GitIn(t, r.Origin, "config", "core.logAllRefUpdates", "always")
	hook := func(name string, reject bool) {
		t.Helper()
		for _, h := range []string{"pre-receive", "post-receive"} {
			_ = os.Remove(filepath.Join(r.Origin, "hooks", h))
		}
		if name != "" {
			if err := os.WriteFile(filepath.Join(r.Origin, "hooks", name), []byte(waveHook(reject)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	touch := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(ctl, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// The verify step reads and writes the test's control files, which a
	// sandboxed verify cannot (e2e/sandbox proves it): unconfined.
	l := &e2etest.Lives{R: r, Args: []string{"backlog", "run", "--issues", "1,2,3,4", "--no-dashboard", "--width", "4"},
		Env: []string{"WAVE_BACKLOG_SANDBOX_MODE=off"}}
	defer l.Dump(t)
	pid := filepath.Join(ctl, "pid")

	// Life 1: killed while the four candidates are verified at once.
	first := e2etest.StartLife(l.Start(ctx, ""))
	var train *backlog.TrainView
	first.WaitFor(t, "four verifies running at once", 2*time.Minute, func() bool {
		st, err := r.TryStatus()
		train = st.Train
		return err == nil && train != nil && len(train.Verifying) == issues && len(verifying(ctl)) == issues
	})
	// Each on top of the ones ahead of it: the last on the other three.
	deepest := slices.MaxFunc(train.Verifying, func(a, b backlog.TrainEntry) int { return len(a.Ahead) - len(b.Ahead) })
	if len(deepest.Ahead) != issues-1 {
		t.Fatalf("the deepest candidate #%d is verified on top of %v, want the %d ahead of it", deepest.Issue, deepest.Ahead, issues-1)
	}
	head := deepest.Ahead[0] // the first in the queue
	first.Kill(t)

	// Life 2: the first candidate passes, the others hold; killed by
	// origin as its merge is pushed (the push refused).
	hook("pre-receive", true)
	touch(fmt.Sprint("pass-", head))
	second := e2etest.StartLife(l.Start(ctx, pid))
	<-second.Done
	if !second.Killed() {
		t.Fatalf("life 2 was not killed at the first merge's push: %v", second.Err)
	}
	// Life 3: every verify passes; killed once a merge's push landed,
	// before the supervisor recorded it.
	hook("post-receive", false)
	touch("pass-all")
	third := e2etest.StartLife(l.Start(ctx, pid))
	<-third.Done
	if !third.Killed() {
		t.Fatalf("life 3 was not killed after a merge's push: %v", third.Err)
	}
	// Life 4: to the end.
	hook("", false)
	last := e2etest.StartLife(l.Start(ctx, ""))
	<-last.Done
	if last.Err != nil {
		t.Fatalf("the last life ended with %v", last.Err)
	}

	run, evs := e2etest.BacklogEvents(t, r)
	if !run.Finished || run.Tally().Merged != issues {
		t.Fatalf("run finished=%v tally %+v", run.Finished, run.Tally())
	}
	killed, _ := os.ReadFile(filepath.Join(ctl, "killed"))
	k := strings.Fields(string(killed))
	if len(k) != 2 {
		t.Fatalf("origin's hooks killed the supervisor at %d pushes (%v), want 2", len(k), k)
	}
	merged, interrupted := map[int]int{}, 0
	for _, ev := range evs {
		switch {
		case ev.Kind == backlog.EvMerged:
			merged[ev.Issue]++
		case ev.Kind == backlog.EvVerify && ev.Outcome == backlog.VerifyInterrupted:
			interrupted++
		}
	}
	if interrupted < issues {
		t.Errorf("%d verifies recorded as interrupted, want at least the %d life 1 was killed in", interrupted, issues)
	}
	log := e2etest.GitIn(t, r.Origin, "log", "--merges", "--format=%H %s", run.Info.WaveBranch)
	for n := 1; n <= issues; n++ {
		if merged[n] != 1 || run.Issues[n].State != backlog.StateMerged {
			t.Errorf("#%d: %d merged events, state %s; want merged once", n, merged[n], run.Issues[n].State)
		}
		if c := strings.Count(log, fmt.Sprintf("Merge #%d:", n)); c != 1 {
			t.Errorf("#%d has %d merge commits on the wave branch, want 1:\n%s", n, c, log)
		}
	}
	// The merges the killed lives pushed are the ones on origin: the one
	// refused was landed as verified, the one landed was found there.
	for _, sha := range k {
		if !strings.Contains(log, sha) {
			t.Errorf("merge commit %s of a killed life is not on the wave branch:\n%s", sha, log)
		}
	}
	everyWaveTipVerified(t, r, ctl, run, evs, issues)
}

// everyWaveTipVerified checks every value origin's wave branch took (its
// reflog: core.logAllRefUpdates) but its creation and the end's commit
// closing the local issues is a merge commit a verify passed on (the
// run's verify events), with the tree the verify checked out
// (ctl/passed: "issue commit tree" lines).
func everyWaveTipVerified(t *testing.T, r *e2etest.BacklogRepo, ctl string, run *backlog.Run, evs []backlog.Event, merges int) {
	t.Helper()
	passed := map[string]bool{}
	closing := ""
	for _, ev := range evs {
		switch {
		case ev.Kind == backlog.EvVerify && ev.Outcome == backlog.VerifyPassed:
			passed[ev.Commit] = true
		case ev.Kind == backlog.EvIssuesClosed:
			closing = ev.Commit // the end's commit marking the local issue files closed
		}
	}
	trees := map[string]string{} // commit → the tree its verify checked out
	if b, err := os.ReadFile(filepath.Join(ctl, "passed")); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if f := strings.Fields(line); len(f) == 3 {
				trees[f[1]] = f[2]
			}
		}
	}
	wave := run.Info.WaveBranch
	// Oldest first: the branch's creation at the base, then each value.
	tips := strings.Fields(e2etest.GitIn(t, r.Origin, "log", "-g", "--format=%H", "refs/heads/"+wave))
	slices.Reverse(tips)
	if len(tips) < merges+1 {
		t.Fatalf("origin's wave branch took %d values, want its creation and one per merge at least: %v", len(tips), tips)
	}
	for _, c := range tips[1:] {
		if c == closing {
			continue
		}
		if !passed[c] {
			t.Errorf("the wave branch pointed at %s, which no verify passed on", c)
			continue
		}
		if want := strings.TrimSpace(e2etest.GitIn(t, r.Origin, "rev-parse", c+"^{tree}")); trees[c] != want {
			t.Errorf("%s was verified with tree %q, but its tree is %s", c, trees[c], want)
		}
	}
}

// verifying is the issues whose verify began, as ctl/verifying lists them.
func verifying(ctl string) map[string]bool {
	b, _ := os.ReadFile(filepath.Join(ctl, "verifying"))
	out := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			out[f[0]] = true
		}
	}
	return out
}
