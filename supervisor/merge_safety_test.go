package supervisor

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// Merge-safety facts a user relies on, proven through whole supervised
// runs (real git with a bare origin, real tmux, the local worker). The
// gitops tests prove the merge engine's own guarantees; these prove the
// supervisor uses it so that they hold for the run.

// verifyGate makes backlog.verify a shell script (body) the test writes:
// the product's own hook, used to make something happen at a chosen
// moment of a merge (other workers finishing, base moving) without
// sleeping in the test. The script sees WAVE_ISSUE_NUMBER (0 for the base
// merge), RUNS (this lane's backlog runs) and WORKTREES (worker trees).
func (f *fixture) verifyGate(body string) {
	f.t.Helper()
	f.actsOutside()
	script := filepath.Join(filepath.Dir(f.root), "gate.sh")
	pre := "#!/bin/sh\nRUNS=" + shellQuote(runlog.Root(f.layout().StateDir)) + "\nWORKTREES=" + shellQuote(filepath.Join(filepath.Dir(f.root), "worktrees")) + "\n"
	if err := os.WriteFile(script, []byte(pre+body), 0o755); err != nil {
		f.t.Fatal(err)
	}
	f.config = strings.Replace(f.config, "\nbacklog:\n", "\nbacklog:\n  verify: [sh, "+shellQuote(script)+"]\n", 1)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// waitFinished is shell that waits (10 s at most) until the first worker
// runs of the issues given have a terminal runtime record.
const waitFinished = `wait_finished() {
  for n in "$@"; do
    i=0
    until grep -Eq '"terminalDisposition": *"(completed|failed|terminated)"' "$RUNS"/*/runs/i$n-a1/runtime.json 2>/dev/null; do
      i=$((i+1)); [ $i -gt 200 ] && { echo "timed out waiting for #$n" >&2; exit 1; }
      sleep 0.05
    done
  done
}
`

// eventIndex is the index of the k-th (1-based) event of kind about
// issue, or -1.
func eventIndex(evs []backlog.Event, kind string, issue, k int) int {
	for i, ev := range evs {
		if ev.Kind == kind && ev.Issue == issue {
			if k--; k == 0 {
				return i
			}
		}
	}
	return -1
}

func mergedOrder(evs []backlog.Event) []int {
	var out []int
	for _, ev := range evs {
		if ev.Kind == backlog.EvMerged {
			out = append(out, ev.Issue)
		}
	}
	return out
}

// shellWorkers makes the workers shell agents running body (sh), which
// sees WAVE_ISSUE_NUMBER, WAVE_ATTEMPT, WAVE_TARGET_BRANCH and GATE, a
// directory the test's verify gate and the workers share.
func (f *fixture) shellWorkers(body string) string {
	f.t.Helper()
	f.actsOutside()
	dir := filepath.Dir(f.root)
	gate := filepath.Join(dir, "gate")
	if err := os.MkdirAll(gate, 0o755); err != nil {
		f.t.Fatal(err)
	}
	script := filepath.Join(dir, "worker.sh")
	pre := "#!/bin/sh\nGATE=" + shellQuote(gate) + "\ngitc() { git -c user.name=w -c user.email=w@example.com \"$@\"; }\n"
	if err := os.WriteFile(script, []byte(pre+body), 0o755); err != nil {
		f.t.Fatal(err)
	}
	f.config = strings.Replace(f.config, "    id: local\n", "    id: shell\n    shell.command: sh "+shellQuote(script)+"\n", 1)
	return gate
}

// TestFIFONoStarvation: the head of the merge queue conflicts; it leaves
// the queue (sent back to its worker) and the entry behind it merges
// without waiting for the resolution; the returning entry queues again at
// the back, in readiness order.
func TestFIFONoStarvation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "First", "Files: a/**")
	f.issue(2, "Conflicts with the first", "Files: b/**")
	f.issue(3, "Independent", "Files: c/**")
	// #1 and #2 both write shared.txt. #2 and #3 finish only once #1's
	// merge is being verified, and that verify waits for them, so both
	// enter the queue together, #2 first, behind nothing.
	gate := f.shellWorkers(`set -e
RUNS=` + shellQuote(runlog.Root(f.layout().StateDir)) + `
n=$WAVE_ISSUE_NUMBER
if [ "$WAVE_ATTEMPT" -gt 1 ]; then
  gitc merge -q -X ours --no-edit "$WAVE_TARGET_BRANCH"
else
  if [ "$n" != 1 ]; then
    i=0; until [ -e "$GATE/merging-1" ]; do i=$((i+1)); [ $i -gt 400 ] && exit 1; sleep 0.05; done
  fi
  if [ "$n" = 3 ]; then
    # Ready after #2: two runs that end together may be taken up in
    # either order, so #3's ends once the run's log has #2 ready.
    i=0; until grep -Eq '"kind":"ready","issue":2[,}]' "$RUNS"/*/events.jsonl 2>/dev/null; do i=$((i+1)); [ $i -gt 400 ] && exit 1; sleep 0.05; done
  fi
  f=own-$n.txt; [ "$n" = 3 ] || f=shared.txt
  echo "work of #$n" > $f && gitc add $f && gitc commit -q -m "Work on #$n"
fi
echo "[backlog-result] state=done detail=shell worker"
`)
	f.verifyGate(waitFinished + `if [ "$WAVE_ISSUE_NUMBER" = 1 ]; then touch ` + shellQuote(gate) + `/merging-1; wait_finished 2 3; fi
exit 0
`)
	res := f.run(1, 2, 3)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	evs := f.events(res.Dir)
	merging1 := eventIndex(evs, backlog.EvMergeStarted, 1, 1)
	ready2, ready3 := eventIndex(evs, backlog.EvReady, 2, 1), eventIndex(evs, backlog.EvReady, 3, 1)
	conflict := eventIndex(evs, backlog.EvConflict, 2, 1)
	merged3 := eventIndex(evs, backlog.EvMerged, 3, 1)
	requeued := eventIndex(evs, backlog.EvReady, 2, 2)
	if merging1 < 0 || ready2 < merging1 || ready3 < ready2 || conflict < ready3 {
		t.Fatalf("want #1 merging, then #2 and #3 ready, then #2's conflict; got %d, %d, %d, %d", merging1, ready2, ready3, conflict)
	}
	// #2 and #3 are seen ready while #1's merge is still being verified
	// (the loop goes on observing during a merge): they queue behind it.
	if q := backlog.Reduce(evs[:ready3+1]).Queue; !slices.Equal(q, []int{1, 2, 3}) {
		t.Errorf("queue with both ready = %v, want [1 2 3] (#1 merging, then readiness order)", q)
	}
	if q := backlog.Reduce(evs[:conflict+1]).Queue; !slices.Equal(q, []int{3}) {
		t.Errorf("queue after #2's conflict = %v, want [3]: a conflicting entry leaves the queue", q)
	}
	// #3's merge begins before #2 is back (its worker's second run is
	// quick, so it may be ready again while #3's merge goes on).
	if merging3 := eventIndex(evs, backlog.EvMergeStarted, 3, 1); merged3 < conflict || requeued < merging3 {
		t.Errorf("#3's merge began at %d, #2 ready again at %d: #3 must merge without waiting for #2's resolution", merging3, requeued)
	}
	if got := mergedOrder(evs); !slices.Equal(got, []int{1, 3, 2}) {
		t.Errorf("merge order %v, want [1 3 2]", got)
	}
}

func TestWorkerWithNoCommitsIsNotMerged(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.ghIssue(1, "Says done, commits nothing", "Files: a/**\n\nlocal-agent: commit=none")
	g.ghIssue(2, "Real work", "Files: b/**")
	res := g.run(1, 2)
	if res.err != nil || res.ExitCode != exitcode.Failed {
		t.Fatalf("run: exit %d, %v; want 1 (a failed issue)", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	if is := r.Issues[1]; is.State != backlog.StateFailed || !strings.Contains(is.Detail, "no work") {
		t.Errorf("#1: %s %q, want failed (no work)", is.State, is.Detail)
	}
	evs := g.events(res.Dir)
	if i := eventIndex(evs, backlog.EvMerged, 1, 1); i >= 0 {
		t.Errorf("#1 recorded merged at event %d", i)
	}
	if i := eventIndex(evs, backlog.EvReady, 1, 1); i >= 0 {
		t.Errorf("#1 entered the merge queue at event %d", i)
	}
	log := git(t, g.root, "log", "--format=%s", "origin/"+r.Info.WaveBranch)
	if strings.Contains(log, "Merge #1:") || !strings.Contains(log, "Merge #2:") {
		t.Errorf("wave branch log:\n%s\nwant a merge of #2 and none of #1", log)
	}
	for _, p := range g.srv.PRs() {
		if p.Head == r.Issues[1].Branch {
			t.Errorf("a worker PR was opened for #1's empty branch: %+v", p)
		}
	}
	if slices.Contains(g.originBranches(), "refs/heads/"+r.Issues[1].Branch) {
		t.Errorf("#1's empty branch was pushed")
	}
	finals := g.prsInto("main")
	if len(finals) != 1 || !slices.Equal(closesRefs(finals[0].Body), []int{2}) {
		t.Errorf("final PRs %+v, want one closing #2 only", finals)
	}
	// Its claim is given back, visibly.
	if g.hasLabel(1, "wave:claimed") || slices.Contains(g.originBranches(), "refs/heads/wave-claims/1") || g.markers(1, "released") != 1 {
		t.Errorf("#1's claim not released: label %v, released comments %d", g.hasLabel(1, "wave:claimed"), g.markers(1, "released"))
	}
}

func TestBaseMovedMidWaveIsMergedOnceBeforeTheFinalPR(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	other := filepath.Join(t.TempDir(), "upstream")
	git(t, filepath.Dir(other), "clone", "-q", g.origin, other)
	g.ghIssue(1, "One", "Files: a/**")
	g.ghIssue(2, "Two", "Files: b/**")
	// Someone pushes to main while #1's merge is being verified.
	g.verifyGate(`if [ "$WAVE_ISSUE_NUMBER" = 1 ] && [ ! -e "$RUNS/../moved" ]; then
  touch "$RUNS/../moved"
  cd ` + shellQuote(other) + ` && echo upstream > upstream.txt && git add upstream.txt &&
  git -c user.name=u -c user.email=u@example.com commit -q -m "upstream change" && git push -q origin HEAD:main || exit 1
fi
exit 0
`)
	res := g.run(1, 2)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	evs := g.events(res.Dir)
	r := backlog.Reduce(evs)
	base := -1
	n := 0
	for i, ev := range evs {
		if ev.Kind == backlog.EvBaseMerged {
			base, n = i, n+1
		}
	}
	if n != 1 {
		t.Fatalf("%d base merges recorded, want exactly 1", n)
	}
	for _, is := range []int{1, 2} {
		if m := eventIndex(evs, backlog.EvMerged, is, 1); m < 0 || m > base {
			t.Errorf("#%d merged at event %d, after the base merge at %d", is, m, base)
		}
	}
	finalPR := -1
	for i, ev := range evs {
		if ev.Kind == backlog.EvPR && ev.Issue == 0 {
			finalPR = i
		}
	}
	if finalPR < base {
		t.Errorf("final PR recorded at event %d, before the base merge at %d", finalPR, base)
	}
	wave := "refs/heads/" + r.Info.WaveBranch
	mainTip := git(t, g.origin, "rev-parse", "refs/heads/main")
	if out := git(t, g.origin, "log", "--format=%s", "--merges", wave); strings.Count(out, "Merge main into") != 1 {
		t.Errorf("wave branch merges:\n%s\nwant exactly one merge of main", out)
	}
	if !gittest.IsAncestor(g.origin, mainTip, wave) {
		t.Errorf("the wave branch on origin does not contain the moved main")
	}
	if _, ok := g.originFile(r.Info.WaveBranch, "upstream.txt"); !ok {
		t.Errorf("wave branch lacks upstream.txt")
	}
}

// TestDeleteOnlyAncestors: at the end, a merged issue's worktree and
// branch go (local and on origin), a parked issue's stay, and a merged
// issue whose branch gained a commit after its merge keeps its branch.
func TestDeleteOnlyAncestors(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.ghIssue(1, "Merged, then more work", "Files: a/**")
	g.ghIssue(2, "Merged", "Files: b/**")
	g.ghIssue(3, "Fails verify", "Files: c/**")
	// While #2's merge is verified, #1 (merged already) gets one more
	// commit on its branch; #3's verify fails, which parks it after its
	// branch was pushed for its worker PR.
	g.verifyGate(waitFinished + `case "$WAVE_ISSUE_NUMBER" in
2) wait_finished 1
   for wt in "$WORKTREES"/*/i1; do
     cd "$wt" && echo late > late.txt && git add late.txt &&
     git -c user.name=u -c user.email=u@example.com commit -q -m "late work on #1" || exit 1
   done ;;
3) echo "tests fail" >&2; exit 1 ;;
esac
exit 0
`)
	g.config = strings.Replace(g.config, "  source: github\n", "  source: github\n  width: 1\n", 1)
	res := g.run(1, 2, 3)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run: exit %d, %v; want 43 (#3 parked)", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	if r.Issues[1].State != backlog.StateMerged || r.Issues[2].State != backlog.StateMerged || r.Issues[3].State != backlog.StateParked {
		t.Fatalf("states %s %s %s, want merged merged parked", r.Issues[1].State, r.Issues[2].State, r.Issues[3].State)
	}
	origin := g.originBranches()
	local := strings.Fields(git(t, g.root, "for-each-ref", "--format=%(refname)", "refs/heads"))
	has := func(refs []string, n int) bool { return slices.Contains(refs, "refs/heads/"+r.Issues[n].Branch) }
	exists := func(n int) bool { _, err := os.Stat(r.Issues[n].Worktree); return err == nil }
	if has(origin, 2) || has(local, 2) || exists(2) {
		t.Errorf("merged #2: on origin %v, local %v, worktree %v; want all removed", has(origin, 2), has(local, 2), exists(2))
	}
	if !has(local, 1) {
		t.Errorf("#1's branch, which holds a commit the wave branch lacks, was deleted")
	} else if out := git(t, g.root, "log", "--format=%s", "-1", r.Issues[1].Branch); out != "late work on #1" {
		t.Errorf("#1's branch tip is %q, want the late commit", out)
	}
	if out := git(t, g.origin, "log", "--format=%s", "refs/heads/"+r.Info.WaveBranch); strings.Contains(out, "Merge #3:") {
		t.Errorf("a failed verify moved the wave branch:\n%s", out)
	}
	if !has(origin, 3) || !has(local, 3) || !exists(3) {
		t.Errorf("parked #3: on origin %v, local %v, worktree %v; want all kept", has(origin, 3), has(local, 3), exists(3))
	}
	// Its branch is kept; its worker PR is closed once its claim is
	// released at the end (open, it would look like work in progress).
	for _, p := range g.prsInto(r.Info.WaveBranch) {
		if p.Head == r.Issues[3].Branch && p.State != "closed" {
			t.Errorf("parked #3's worker PR is %s, want it closed with its claim released", p.State)
		}
	}
}

// TestAForeignCommitOnTheWaveBranchStopsTheMergesAndIsReported: a
// worker (or anyone) pushes a commit of its own to origin's wave branch
// while #1's merge is verified. The supervisor's push under its lease is
// refused; it finds origin's wave branch at a commit it did not make and
// never merges on top of it: #1 and #2 are parked, not merged, origin's
// wave branch is left at the foreign commit, and the foreign commit is
// said in the output, backlog status, a foreign-commit notification and
// the final PR body; the run asks a person (43).
func TestAForeignCommitOnTheWaveBranchStopsTheMergesAndIsReported(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	other := filepath.Join(t.TempDir(), "other")
	git(t, filepath.Dir(other), "clone", "-q", f.origin, other)
	f.issue(1, "One", "Files: a/**")
	f.issue(2, "Two", "Files: b/**")
	told := filepath.Join(t.TempDir(), "told")
	f.config += "notify:\n  - kind: command\n    argv: [sh, -c, 'cat >> " + told + "; echo >> " + told + "']\n"
	f.config = strings.Replace(f.config, "\nbacklog:\n", "\nbacklog:\n  width: 1\n", 1)
	f.verifyGate(`if [ "$WAVE_ISSUE_NUMBER" = 1 ] && [ ! -e "$RUNS/../moved" ]; then
  touch "$RUNS/../moved"
  cd ` + shellQuote(other) + ` && git fetch -q origin && b=$(git for-each-ref --format='%(refname:lstrip=3)' 'refs/remotes/origin/wave/*' | grep -v -- '-i[0-9]*$' | head -1) &&
  git checkout -q -B side "origin/$b" && echo foreign > foreign.txt && git add foreign.txt &&
  git -c user.name=u -c user.email=u@example.com commit -q -m "foreign commit" && git push -q origin "HEAD:refs/heads/$b" || exit 1
fi
exit 0
`)
	res := f.run(1, 2)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run: exit %d, %v; want 43", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	wave := r.Info.WaveBranch
	foreign := gittest.Ref(f.origin, "refs/heads/"+wave)
	if out := git(t, f.origin, "log", "-1", "--format=%s", foreign); out != "foreign commit" {
		t.Fatalf("origin's wave branch is at %q, want the foreign commit left as it is", out)
	}
	if is := r.Issues[1]; is == nil || is.State != backlog.StateParked {
		t.Errorf("#1: %+v, want parked", is)
	}
	if is, in := r.Issues[2]; in || !slices.ContainsFunc(r.Dropped, func(d backlog.Skip) bool { return d.Issue == 2 && d.Reason == "foreign-commit" }) {
		t.Errorf("#2: %+v, dropped %+v; want it dropped, never started on the foreign commit", is, r.Dropped)
	}
	if out := git(t, f.origin, "log", "--format=%s", "refs/heads/"+wave); strings.Contains(out, "Merge #") {
		t.Errorf("something was merged on top of or beside the foreign commit:\n%s", out)
	}
	if r.Foreign == nil || r.Foreign.Found != foreign {
		t.Fatalf("the run's record of the foreign commit: %+v, want %s", r.Foreign, foreign)
	}
	if !strings.Contains(res.out, "a commit this run did not make") {
		t.Errorf("output does not say so:\n%s", res.out)
	}
	v, err := Status(context.Background(), res.Dir, nil, false, time.Now())
	if err != nil || v.ForeignCommit == nil || v.ForeignCommit.Found != foreign {
		t.Errorf("status: %+v %v, want the foreign commit", v.ForeignCommit, err)
	}
	body, _ := os.ReadFile(filepath.Join(res.Dir, runlog.FinalPRFile))
	if !strings.Contains(string(body), "A commit this run did not make is on the wave branch") || !strings.Contains(string(body), foreign[:12]) {
		t.Errorf("the final PR body does not report it:\n%s", body)
	}
	if b, _ := os.ReadFile(told); !strings.Contains(string(b), `"event":"foreign-commit"`) {
		t.Errorf("no foreign-commit notification; told:\n%s", b)
	}
}

// TestKilledWorkerIsSalvagedWithItsUncommittedWork: a worker killed with
// SIGKILL in the middle of its work, uncommitted changes in its worktree,
// is snapshotted and relaunched once in the same worktree, where its
// changes still are; the relaunch commits them and the issue merges.
func TestKilledWorkerIsSalvagedWithItsUncommittedWork(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "Dies mid-work", "Files: w/**")
	f.shellWorkers(`if [ "$WAVE_ATTEMPT" = 1 ]; then
  mkdir -p w && echo "half done by attempt 1" > w/wip.txt
  echo "working..."
  exec sleep 600
fi
[ -e w/wip.txt ] || { echo "the salvage lost w/wip.txt"; exit 1; }
gitc add w/wip.txt && gitc commit -q -m "Finish #1" && echo "[backlog-result] state=done detail=finished the salvaged work"
`)
	done := make(chan result, 1)
	go func() { done <- f.run(1) }()
	// Kill the agent once it is at work with the file written.
	deadline := time.Now().Add(time.Minute)
	for killed := false; !killed; {
		if time.Now().After(deadline) {
			t.Fatal("the first attempt never got to work")
		}
		time.Sleep(50 * time.Millisecond)
		recs, _ := filepath.Glob(filepath.Join(runlog.Root(f.layout().StateDir), "*", "runs", "i1-a1", "runtime.json"))
		wts, _ := filepath.Glob(filepath.Join(filepath.Dir(f.root), "worktrees", "*", "i1", "w", "wip.txt"))
		if len(recs) != 1 || len(wts) != 1 {
			continue
		}
		// The redirection creates the file before echo writes it.
		if b, _ := os.ReadFile(wts[0]); !strings.Contains(string(b), "attempt 1") {
			continue
		}
		var rec runtime.Record
		b, err := os.ReadFile(recs[0])
		if err != nil || json.Unmarshal(b, &rec) != nil || rec.ExecutorPid <= 0 || rec.TerminalDisposition != runtime.Running {
			continue
		}
		if err := syscall.Kill(rec.ExecutorPid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill the agent: %v", err)
		}
		killed = true
	}
	res := <-done
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	is := r.Issues[1]
	if is.State != backlog.StateMerged || is.Salvages != 1 || is.Attempts != 2 {
		t.Fatalf("#1: %s after %d attempts, %d salvages; want merged after one salvage", is.State, is.Attempts, is.Salvages)
	}
	if tree := git(t, f.root, "ls-tree", "-r", "--name-only", is.SalvageRefs[0]); !strings.Contains(tree, "w/wip.txt") {
		t.Errorf("salvage ref %s lacks the uncommitted w/wip.txt:\n%s", is.SalvageRefs[0], tree)
	}
	if body, ok := f.originFile(r.Info.WaveBranch, "w/wip.txt"); !ok || !strings.Contains(body, "attempt 1") {
		t.Errorf("the wave branch lacks the killed attempt's work: %q", body)
	}
	evs := f.events(res.Dir)
	if a1, a2 := eventIndex(evs, backlog.EvWorkerStarted, 1, 1), eventIndex(evs, backlog.EvWorkerStarted, 1, 2); evs[a1].Worktree != evs[a2].Worktree {
		t.Errorf("relaunched in %s, first ran in %s; want the same worktree", evs[a2].Worktree, evs[a1].Worktree)
	}
}
