package supervisor

import (
	"context"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// askingWorkers makes f's workers a script: issues in asking ask a
// question on their first attempt; the others run until the run's log
// holds answers answered events, go on a while (as an agent would), and
// commit; every run that works commits its own file.
func askingWorkers(f *fixture, answers int, asking ...int) {
	var cases []string
	for _, n := range asking {
		cases = append(cases, itoa(n))
	}
	f.shellWorkers(`set -e
RUNS=` + shellQuote(runlog.Root(f.layout().StateDir)) + `
n=$WAVE_ISSUE_NUMBER
case " ` + strings.Join(cases, " ") + ` " in *" $n "*)
  if [ "$WAVE_ATTEMPT" = 1 ]; then
    echo '[backlog-result] state=needs-input question="Which way?"'
    exit 0
  fi;;
*)
  i=0; until [ "$(cat "$RUNS"/*/events.jsonl 2>/dev/null | grep -c '"kind":"answered"')" -ge ` + itoa(answers) + ` ]; do i=$((i+1)); [ $i -gt 1200 ] && exit 1; sleep 0.05; done
  sleep 1.5;;
esac
mkdir -p shared && echo "work on $n" > shared/$n.txt && gitc add shared/$n.txt && gitc commit -q -m "Work on #$n"
echo "[backlog-result] state=done detail=worked"
`)
}

// answer removes issue n's needs-input label: a person's answer.
func (f *fixture) answer(t *testing.T, n int) {
	t.Helper()
	if err := f.source().RemoveLabel(context.Background(), n, "needs-input"); err != nil {
		t.Fatal(err)
	}
}

// A group runs one worker at a time, answered or not: #1 asked a
// question, so #2 of its group started; #1, answered while #2 works, goes
// on only once #2 merged, never beside it on the same surface.
func TestAnAnsweredIssueWaitsForTheWorkerOnItsSurface(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "First", "Files: shared/**")
	f.issue(2, "Second", "Files: shared/**")
	askingWorkers(f, 1, 1)
	or := f.startRun(t, fastAnswers, 1, 2)
	or.until(t, f, "#2 started", func(ev backlog.Event) bool { return ev.Kind == backlog.EvWorkerStarted && ev.Issue == 2 })
	f.answer(t, 1)
	res := or.end(t)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("exit %d, %v\n%s", res.ExitCode, res.err, res.out)
	}
	evs := f.events(res.Dir)
	merged2, again1 := -1, -1
	for i, ev := range evs {
		switch {
		case ev.Kind == backlog.EvMerged && ev.Issue == 2:
			merged2 = i
		case ev.Kind == backlog.EvWorkerStarted && ev.Issue == 1 && ev.Attempt == 2:
			again1 = i
		}
	}
	if merged2 < 0 || again1 < merged2 {
		t.Fatalf("#1 went on (event %d) before #2 merged (event %d): two workers on one surface", again1, merged2)
	}
	for n := 1; n <= 2; n++ {
		if c := countIssueEvents(evs, backlog.EvConflict, n); c != 0 {
			t.Errorf("#%d spent %d conflict round(s)", n, c)
		}
	}
}

// Workers sent back by an answer start only into a free slot: at width 2,
// with #3 and #4 working, the answered #1 and #2 wait for them.
func TestAnsweredWorkersNeverRunBeyondTheWidth(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for n := 1; n <= 4; n++ {
		f.issue(n, "Issue "+itoa(n), "Files: p"+itoa(n)+"/**")
	}
	askingWorkers(f, 2, 1, 2)
	or := f.startRun(t, func(o *Options) { fastAnswers(o); o.Width = 2 }, 1, 2, 3, 4)
	for _, n := range []int{3, 4} {
		or.until(t, f, "#"+itoa(n)+" started", func(ev backlog.Event) bool { return ev.Kind == backlog.EvWorkerStarted && ev.Issue == n })
	}
	f.answer(t, 1)
	f.answer(t, 2)
	res := or.end(t)
	if res.err != nil || res.ExitCode != exitcode.OK || res.Tally.Merged != 4 {
		t.Fatalf("exit %d, tally %+v, %v\n%s", res.ExitCode, res.Tally, res.err, res.out)
	}
	running, most := map[int]bool{}, 0
	for _, ev := range f.events(res.Dir) {
		switch ev.Kind {
		case backlog.EvWorkerStarted:
			running[ev.Issue] = true
		case backlog.EvWorkerFinished:
			delete(running, ev.Issue)
		}
		most = max(most, len(running))
	}
	if most > 2 {
		t.Fatalf("%d workers ran at once at width 2", most)
	}
}
