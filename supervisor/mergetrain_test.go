package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// The merge pipeline's invariants (docs/merge-gate.md, "The pipeline"),
// each through whole supervised runs: real git with a bare origin, real
// tmux, shell workers and a shell verify step that leave a trace of what
// they saw in a directory the test reads.

// verifyTrace is shell for a verify gate: `trace pass|fail` appends the
// merge commit verified, the tree of its checkout and the verdict to
// $GATE/verifies, one line per verify.
func verifyTrace(gate string) string {
	return "GATE=" + shellQuote(gate) + `
trace() { echo "$WAVE_ISSUE_NUMBER $WAVE_MERGE_COMMIT $(git rev-parse 'HEAD^{tree}') $1" >> "$GATE/verifies"; }
`
}

// waitFiles is shell that waits (30 s at most) until every path given
// exists, failing the verify if one never does.
const waitFiles = `wait_files() {
  for p in "$@"; do
    i=0
    until [ -e "$p" ]; do i=$((i+1)); [ $i -gt 600 ] && { echo "timed out waiting for $p" >&2; exit 1; }; sleep 0.05; done
  done
}
`

// traced is one line of the verify trace.
type traced struct {
	issue                 int
	commit, tree, verdict string
}

func readTrace(t *testing.T, gate string) []traced {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(gate, "verifies"))
	if err != nil {
		t.Fatal(err)
	}
	var out []traced
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var v traced
		if _, err := fmt.Sscan(l, &v.issue, &v.commit, &v.tree, &v.verdict); err != nil {
			t.Fatalf("trace line %q: %v", l, err)
		}
		out = append(out, v)
	}
	return out
}

// brokenWorkers are shell workers writing part<n>/work.txt, ready in
// the issues' order (#n's first run ends once the run's log has #n-1
// ready: two runs that end together may be taken up in either order);
// the first attempt of each issue in broken also commits part<n>/BROKEN,
// which the verify step refuses, and its rework round removes it. An
// attempt after the first merges the wave branch first.
func (f *fixture) brokenWorkers(broken ...int) string {
	list := strings.Trim(fmt.Sprint(broken), "[]")
	return f.shellWorkers(`set -e
RUNS=` + shellQuote(runlog.Root(f.layout().StateDir)) + `
n=$WAVE_ISSUE_NUMBER
mkdir -p part$n
if [ "$WAVE_ATTEMPT" = 1 ] && [ "$n" -gt 1 ]; then
  p=$((n-1)); i=0
  until grep -Eq '"kind":"ready","issue":'"$p"'[,}]' "$RUNS"/*/events.jsonl 2>/dev/null; do i=$((i+1)); [ $i -gt 400 ] && exit 1; sleep 0.05; done
fi
if [ "$WAVE_ATTEMPT" -gt 1 ]; then
  gitc merge -q -X ours --no-edit "$WAVE_TARGET_BRANCH" || true
  rm -f part$n/BROKEN
else
  for b in ` + list + `; do [ "$b" = "$n" ] && echo broken > part$n/BROKEN; done
fi
echo "work of #$n, attempt $WAVE_ATTEMPT" >> part$n/work.txt
gitc add -A part$n && gitc commit -q -m "Work on #$n"
echo "[backlog-result] state=done detail=shell worker"
`)
}

// verifyRounds counts the verifies each issue's merge began.
func verifyRounds(evs []backlog.Event) map[int]int {
	out := map[int]int{}
	for _, ev := range evs {
		if ev.Kind == backlog.EvVerify && ev.Outcome == backlog.VerifyRunning {
			out[ev.Issue]++
		}
	}
	return out
}

func readyOrder(evs []backlog.Event) []int {
	var out []int
	for _, ev := range evs {
		if ev.Kind == backlog.EvReady {
			out = append(out, ev.Issue)
		}
	}
	return out
}

func issueList(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// TestCandidatesAreVerifiedAtOnce: with backlog.verifyParallel 3, three
// candidates' verifies run at the same time — each waits until the three
// began — and every issue merges without a rework.
func TestCandidatesAreVerifiedAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.config = strings.Replace(baseConfig, "backlog:\n", "backlog:\n  verifyParallel: 3\n", 1)
	for n := 1; n <= 4; n++ {
		f.issue(n, fmt.Sprintf("Part %d", n), fmt.Sprintf("Files: part%d/**", n))
	}
	gate := f.brokenWorkers()
	f.verifyGate(verifyTrace(gate) + waitFiles + `touch "$GATE/verifying-$WAVE_ISSUE_NUMBER"
[ "$WAVE_ISSUE_NUMBER" = 4 ] || wait_files "$GATE/verifying-1" "$GATE/verifying-2" "$GATE/verifying-3"
trace pass
`)
	res := f.run(issueList(4)...)
	if res.err != nil || res.ExitCode != exitcode.OK || res.Tally.Merged != 4 {
		t.Fatalf("run: exit %d, tally %+v, %v", res.ExitCode, res.Tally, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	for n := 1; n <= 4; n++ {
		if is := r.Issues[n]; is.Reworks != 0 {
			t.Errorf("#%d went back for %d rework round(s): its verify did not overlap the others'", n, is.Reworks)
		}
	}
	if r.Info.VerifyParallel != 3 {
		t.Errorf("run records verifyParallel %d, want 3", r.Info.VerifyParallel)
	}
}

// TestEveryWaveTipWasVerifiedAsThatExactTree: every commit the wave
// branch ever pointed at (its first-parent line from the cut) is a merge
// commit some verify passed on, with the very tree it checked out —
// while #3's first change fails its verify and the candidates verified
// on top of it are verified again without it.
func TestEveryWaveTipWasVerifiedAsThatExactTree(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for n := 1; n <= 6; n++ {
		f.issue(n, fmt.Sprintf("Part %d", n), fmt.Sprintf("Files: part%d/**", n))
	}
	gate := f.brokenWorkers(3)
	f.verifyGate(verifyTrace(gate) + `if ls part*/BROKEN >/dev/null 2>&1; then trace fail; echo "a BROKEN file is in the tree"; exit 1; fi
trace pass
`)
	res := f.run(issueList(6)...)
	if res.err != nil || res.ExitCode != exitcode.OK || res.Tally.Merged != 6 {
		t.Fatalf("run: exit %d, tally %+v, %v", res.ExitCode, res.Tally, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	if r.Issues[3].Reworks != 1 {
		t.Errorf("#3 went back %d times, want once (its BROKEN file)", r.Issues[3].Reworks)
	}
	passed := map[string]string{} // commit → tree verified
	for _, v := range readTrace(t, gate) {
		if v.verdict == "pass" {
			passed[v.commit] = v.tree
		}
	}
	closing := ""
	for _, ev := range f.events(res.Dir) {
		if ev.Kind == backlog.EvIssuesClosed {
			closing = ev.Commit
		}
	}
	line := strings.Fields(git(t, f.origin, "rev-list", "--first-parent", r.Wave.CutAt+".."+r.Info.WaveBranch))
	if len(line) < 6 {
		t.Fatalf("the wave branch's first-parent line has %d commits after the cut, want ≥ 6", len(line))
	}
	for _, c := range line {
		if c == closing {
			continue // the end's commit marking the local issue files closed (docs/merge-gate.md)
		}
		tree, ok := passed[c]
		if !ok {
			t.Errorf("the wave branch pointed at %s, which no verify passed on", c)
			continue
		}
		if want := git(t, f.origin, "rev-parse", c+"^{tree}"); tree != want {
			t.Errorf("%s was verified with tree %s, but its tree is %s", c, tree, want)
		}
	}
}

// TestMergesLandInTheQueuesOrder: the candidates behind the first pass
// their verifies before it does (its verify waits for theirs); the
// merges still land in the queue's order, each once all ahead landed.
func TestMergesLandInTheQueuesOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for n := 1; n <= 3; n++ {
		f.issue(n, fmt.Sprintf("Part %d", n), fmt.Sprintf("Files: part%d/**", n))
	}
	// Ready in order: #n's worker finishes once #n-1 is ready.
	gate := f.shellWorkers(`set -e
RUNS=` + shellQuote(runlog.Root(f.layout().StateDir)) + `
n=$WAVE_ISSUE_NUMBER
if [ "$n" -gt 1 ]; then
  p=$((n-1)); i=0
  until grep -Eq '"kind":"ready","issue":'"$p"'[,}]' "$RUNS"/*/events.jsonl 2>/dev/null; do i=$((i+1)); [ $i -gt 400 ] && exit 1; sleep 0.05; done
fi
mkdir -p part$n && echo "work of #$n" > part$n/work.txt && gitc add -A part$n && gitc commit -q -m "Work on #$n"
echo "[backlog-result] state=done detail=shell worker"
`)
	f.verifyGate(verifyTrace(gate) + waitFiles + `[ "$WAVE_ISSUE_NUMBER" = 1 ] && wait_files "$GATE/passed-2" "$GATE/passed-3"
trace pass
touch "$GATE/passed-$WAVE_ISSUE_NUMBER"
`)
	res := f.run(issueList(3)...)
	if res.err != nil || res.ExitCode != exitcode.OK || res.Tally.Merged != 3 {
		t.Fatalf("run: exit %d, tally %+v, %v", res.ExitCode, res.Tally, res.err)
	}
	evs := f.events(res.Dir)
	if got, ready := mergedOrder(evs), readyOrder(evs); !slices.Equal(got, []int{1, 2, 3}) || !slices.Equal(ready, got) {
		t.Errorf("merged %v, ready %v: want the queue's order [1 2 3]", got, ready)
	}
	var passOrder []int
	for _, v := range readTrace(t, gate) {
		passOrder = append(passOrder, v.issue)
	}
	if !slices.Equal(passOrder, []int{2, 3, 1}) && !slices.Equal(passOrder, []int{3, 2, 1}) {
		t.Errorf("verifies passed in order %v, want #1 last (the test's premise)", passOrder)
	}
}

// TestAFailingCandidateCostsTheOthersAtMostOneExtraVerifyRound: #2's
// change fails its verify while #3 and #4 are verified on top of it;
// they are verified once more without it, every issue merges, #2 after
// its rework round.
func TestAFailingCandidateCostsTheOthersAtMostOneExtraVerifyRound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for n := 1; n <= 5; n++ {
		f.issue(n, fmt.Sprintf("Part %d", n), fmt.Sprintf("Files: part%d/**", n))
	}
	gate := f.brokenWorkers(2)
	// #2's failing verify ends only once #3's began on top of it.
	f.verifyGate(verifyTrace(gate) + waitFiles + `touch "$GATE/verifying-$WAVE_ISSUE_NUMBER"
if ls part*/BROKEN >/dev/null 2>&1; then
  [ "$WAVE_ISSUE_NUMBER" = 2 ] && wait_files "$GATE/verifying-3"
  trace fail; exit 1
fi
trace pass
`)
	res := f.run(issueList(5)...)
	if res.err != nil || res.ExitCode != exitcode.OK || res.Tally.Merged != 5 {
		t.Fatalf("run: exit %d, tally %+v, %v", res.ExitCode, res.Tally, res.err)
	}
	evs := f.events(res.Dir)
	rounds := verifyRounds(evs)
	for n := 1; n <= 5; n++ {
		if n != 2 && rounds[n] > 2 {
			t.Errorf("#%d took %d verify rounds; a failing candidate may cost it one extra at most", n, rounds[n])
		}
	}
	r := backlog.Reduce(evs)
	if r.Issues[2].Reworks != 1 {
		t.Errorf("#2 went back %d times, want once", r.Issues[2].Reworks)
	}
	spec := false
	for _, ev := range evs {
		if ev.Kind == backlog.EvVerify && ev.Issue == 3 && slices.Contains(ev.Ahead, 2) {
			spec = true
		}
	}
	if !spec {
		t.Error("#3 was never verified on top of #2 (the test's premise)")
	}
	if got := mergedOrder(evs); got[len(got)-1] != 2 {
		t.Errorf("merge order %v: #2 merges after its rework round, last", got)
	}
}

// TestACandidateConflictingOnlyWithAFailedOneAheadMergesWithoutIt: #2's
// change conflicts with #1's, which fails its verify: #2 is not sent
// back for a conflict with a change that never landed; it merges on its
// own, and #1 after its rework.
func TestACandidateConflictingOnlyWithAFailedOneAheadMergesWithoutIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "First", "Files: part1/**")
	f.issue(2, "Second", "Files: part2/**")
	gate := f.shellWorkers(`set -e
n=$WAVE_ISSUE_NUMBER
mkdir -p part$n
if [ "$WAVE_ATTEMPT" -gt 1 ]; then
  gitc merge -q -X theirs --no-edit "$WAVE_TARGET_BRANCH"
  rm -f part$n/BROKEN
else
  [ "$n" = 1 ] && echo broken > part1/BROKEN
  [ "$n" = 2 ] && { i=0; until [ -e "$GATE/verifying-1" ]; do i=$((i+1)); [ $i -gt 600 ] && exit 1; sleep 0.05; done; }
  echo "shared line of #$n" > shared.txt
fi
echo "work of #$n" >> part$n/work.txt
gitc add -A . && gitc commit -q -m "Work on #$n"
echo "[backlog-result] state=done detail=shell worker"
`)
	// #1's failing verify ends once #2's merge was found to conflict
	// with it (recorded: it waits for #1's verdict).
	f.verifyGate(verifyTrace(gate) + `RUNS=` + shellQuote(runlog.Root(f.layout().StateDir)) + `
touch "$GATE/verifying-$WAVE_ISSUE_NUMBER"
if [ -e part1/BROKEN ]; then
  i=0; until grep -q '"kind":"verify","issue":2,"outcome":"conflict"' "$RUNS"/*/events.jsonl 2>/dev/null; do i=$((i+1)); [ $i -gt 600 ] && exit 1; sleep 0.05; done
  trace fail; exit 1
fi
trace pass
`)
	res := f.run(1, 2)
	if res.err != nil || res.ExitCode != exitcode.OK || res.Tally.Merged != 2 {
		t.Fatalf("run: exit %d, tally %+v, %v", res.ExitCode, res.Tally, res.err)
	}
	evs := f.events(res.Dir)
	if c := count(evs, backlog.EvConflict, 2); c != 0 {
		t.Errorf("#2 was sent back %d time(s) for conflicting with #1's change, which never landed", c)
	}
	if got := mergedOrder(evs); !slices.Equal(got, []int{2, 1}) {
		t.Errorf("merge order %v, want [2 1]: #2 on its own, #1 after its rework", got)
	}
}
