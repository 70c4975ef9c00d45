package supervisor

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

// An open run takes the answers to its own workers' questions: the
// answered issue goes back to its worker in the same worktree with the
// answer in its prompt, merges, and the run exits 0 — nobody types
// `backlog run` again.

const asksIssue = "Files: a/**\n\nlocal-agent: result=needs-input question=\"Which API?\""

// waitingConfig lets a run with only questions left wait for answers.
func waitingConfig(cfg string, minutes string) string {
	return strings.Replace(cfg, "  inputWaitMinutes: 0\n", "  inputWaitMinutes: "+minutes+"\n", 1)
}

// openRun is a supervisor running in the background.
type openRun struct {
	done chan result
	dir  func() string
}

func (f *fixture) startRun(t *testing.T, edit func(*Options), issues ...int) *openRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	or := &openRun{done: make(chan result, 1)}
	ended := make(chan struct{})
	go func() { defer close(ended); or.done <- f.runCtx(ctx, edit, issues...) }()
	// A run the test left open ends before its workers are stopped (a
	// supervisor still going could start one after that).
	t.Cleanup(func() { cancel(); <-ended })
	or.dir = func() string { d, _ := runlog.OpenDir(f.layout().StateDir); return d }
	return or
}

// until waits for an event of the open run matching match, failing at
// once if the run ends first.
func (or *openRun) until(t *testing.T, f *fixture, what string, match func(backlog.Event) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case res := <-or.done:
			t.Fatalf("the run ended (exit %d, %v) before %s:\n%s", res.ExitCode, res.err, what, res.out)
		default:
		}
		if d := or.dir(); d != "" {
			evs, _, _ := readEvents(d)
			for _, ev := range evs {
				if match(ev) {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, with a deadline
	}
}

func (or *openRun) end(t *testing.T) result {
	t.Helper()
	select {
	case res := <-or.done:
		return res
	case <-time.After(2 * time.Minute):
		t.Fatal("the run did not end")
		return result{}
	}
}

func kind(k string) func(backlog.Event) bool {
	return func(ev backlog.Event) bool { return ev.Kind == k }
}

// answeredEvents are the run's answered events.
func answeredEvents(f *fixture, dir string) []backlog.Event {
	var out []backlog.Event
	for _, ev := range f.events(dir) {
		if ev.Kind == backlog.EvAnswered {
			out = append(out, ev)
		}
	}
	return out
}

// secondPrompt is the prompt of issue n's worker after the answer.
func secondPrompt(t *testing.T, dir string, n int) string {
	t.Helper()
	r, _, err := runlog.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(r.Issues[n].RunDir, "prompt.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fastAnswers(o *Options) { o.AnswerPoll = 50 * time.Millisecond }

func TestOpenRunTakesAGitHubCommentFromAPersonAndMerges(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.config = waitingConfig(g.config, "30")
	g.ghIssue(1, "Pick an API", asksIssue)
	run := g.startRun(t, fastAnswers, 1)
	run.until(t, g.fixture, "the run to wait for the answer", kind(backlog.EvInputWait))
	if !g.hasLabel(1, "needs-input") {
		t.Fatalf("#1 is waiting without the needs-input label: %+v", g.srv.Comments(1))
	}
	// A bot's comment is no answer: two more looks at the comments go by
	// and the issue still waits.
	g.srv.AddComment(1, "dependabot[bot]", "Bumps left-pad from 1.0 to 1.1")
	looks := g.srv.Count(forgetest.RouteCommentsList)
	waitFor(t, "two more looks for an answer", func() bool { return g.srv.Count(forgetest.RouteCommentsList) >= looks+2 })
	if evs := answeredEvents(g.fixture, run.dir()); len(evs) != 0 {
		t.Fatalf("a bot's comment was taken as the answer: %+v", evs)
	}
	g.srv.AddComment(1, "alice", "Use the v2 API, @bob <!-- keep -->")
	res := run.end(t)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("exit %d, %v; want 0 (answered while open, merged)\n%s", res.ExitCode, res.err, res.out)
	}
	evs := answeredEvents(g.fixture, res.Dir)
	if len(evs) != 1 || evs[0].Issue != 1 || evs[0].By != "alice" || evs[0].Outcome != backlog.AnsweredComment ||
		evs[0].Answer != "Use the v2 API, @bob <!-- keep -->" || evs[0].Question != "Which API?" {
		t.Fatalf("answered events %+v, want one by alice with her words", evs)
	}
	r, _, _ := runlog.Read(res.Dir)
	is := r.Issues[1]
	if is.State != backlog.StateMerged || is.Attempts != 2 {
		t.Fatalf("#1 %s after %d attempts, want merged by the second", is.State, is.Attempts)
	}
	var wts []string
	for _, ev := range g.events(res.Dir) {
		if ev.Kind == backlog.EvWorkerStarted {
			wts = append(wts, ev.Worktree)
		}
	}
	if len(wts) != 2 || wts[0] != wts[1] {
		t.Errorf("worker worktrees %v, want the same one twice", wts)
	}
	p := secondPrompt(t, res.Dir, 1)
	if !strings.Contains(p, backlog.AnswersSection) || !strings.Contains(p, "The answer (by `alice`):\n\n```text\nUse the v2 API, @bob <!") {
		t.Errorf("the answered worker's prompt lacks the fenced answer:\n%s", p)
	}
	if g.hasLabel(1, "needs-input") {
		t.Errorf("#1 still has the needs-input label after its answer was taken")
	}
	g.noDuplicateWrites(t)
}

func TestOpenRunTakesTheNeedsInputLabelRemovedAsAnAnswer(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	g.config = waitingConfig(g.config, "30")
	g.ghIssue(1, "Pick an API", asksIssue)
	run := g.startRun(t, fastAnswers, 1)
	run.until(t, g.fixture, "the run to wait for the answer", kind(backlog.EvInputWait))
	if err := g.client().RemoveLabel(context.Background(), 1, "needs-input"); err != nil {
		t.Fatal(err)
	}
	res := run.end(t)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("exit %d, %v; want 0\n%s", res.ExitCode, res.err, res.out)
	}
	if evs := answeredEvents(g.fixture, res.Dir); len(evs) != 1 || evs[0].Outcome != backlog.AnsweredLabel || evs[0].Answer != "" {
		t.Fatalf("answered events %+v, want one by the label's removal", evs)
	}
	if p := secondPrompt(t, res.Dir, 1); !strings.Contains(p, "removed the needs-input label without an answer in words") {
		t.Errorf("the prompt does not say the label was removed:\n%s", p)
	}
	g.noDuplicateWrites(t)
}

// TestAnsweredWorkerThatAsksAgainIsAskedOnItsIssueAgain: the second
// question of one issue in one run gets its own comment and label (the
// first round's writes are not taken for it), and its answer is taken.
func TestAnsweredWorkerThatAsksAgainIsAskedOnItsIssueAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.config = waitingConfig(f.config, "30")
	f.shellWorkers(`n=$(ls "$GATE" | wc -l); touch "$GATE/attempt-$n"
if [ "$n" -lt 2 ]; then echo "[backlog-result] state=needs-input question=\"Question $n?\""; exit 0; fi
echo done > own.txt && gitc add own.txt && gitc commit -q -m "Work" && echo "[backlog-result] state=done detail=shell worker"
`)
	f.issue(1, "Asks twice", "Files: own.txt")
	src := f.source()
	run := f.startRun(t, nil, 1)
	for _, q := range []string{"Question 0?", "Question 1?"} {
		run.until(t, f, "question "+q, func(ev backlog.Event) bool { return ev.Kind == backlog.EvNeedsInput && ev.Question == q })
		body, marker := backlog.AnswerComment("answer " + q)
		if _, err := src.EnsureComment(context.Background(), 1, marker, body); err != nil {
			t.Fatal(err)
		}
		if err := src.RemoveLabel(context.Background(), 1, "needs-input"); err != nil {
			t.Fatal(err)
		}
		run.until(t, f, "answer "+q, func(ev backlog.Event) bool { return ev.Kind == backlog.EvAnswered && ev.Answer == "answer "+q })
	}
	res := run.end(t)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("exit %d, %v; want 0\n%s", res.ExitCode, res.err, res.out)
	}
	is, err := src.Get(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	for _, c := range is.Comments {
		if strings.Contains(c.Body, "needs-input run=") {
			asked++
		}
	}
	if asked != 2 {
		t.Errorf("%d question comments on #1, want one per question:\n%+v", asked, is.Comments)
	}
	if p := secondPrompt(t, res.Dir, 1); !strings.Contains(p, "answer Question 1?") || !strings.Contains(p, "Question 1?") {
		t.Errorf("the last prompt lacks the second answer:\n%s", p)
	}
}

// clock is a supervisor clock a test moves forward.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return time.Now().Add(c.off) }

func (c *clock) skip(d time.Duration) { c.mu.Lock(); c.off += d; c.mu.Unlock() }

// TestUnansweredQuestionHoldsTheRunOnlyForInputWaitMinutes: with only a
// question left the run says it waits for the answer (status and its
// JSON), and past backlog.inputWaitMinutes it ends with its final PR for
// what merged, exit 43 and the question kept.
func TestUnansweredQuestionHoldsTheRunOnlyForInputWaitMinutes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.config = waitingConfig(f.config, "5")
	f.issue(1, "Merges", "Files: b/**")
	f.issue(2, "Pick an API", asksIssue)
	clk := &clock{}
	run := f.startRun(t, func(o *Options) { o.Now = clk.now }, 1, 2)
	run.until(t, f, "the run to wait for the answer", kind(backlog.EvInputWait))
	v, err := Status(context.Background(), run.dir(), nil, true, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if a := v.WaitingForAnswers; a == nil || len(a.Issues) != 1 || a.Issues[0] != 2 || a.Until == nil ||
		a.Until.Sub(a.Since) != 5*time.Minute {
		t.Fatalf("status while waiting: %+v, want waiting 5 minutes for #2", a)
	}
	if line := backlog.InputWaitLine(*v.WaitingForAnswers); !strings.Contains(line, "waiting for answers to #2 since ") {
		t.Errorf("status does not say it waits for answers: %s", line)
	}
	clk.skip(6 * time.Minute)
	res := run.end(t)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("exit %d, %v; want 43 (the question is unanswered)\n%s", res.ExitCode, res.err, res.out)
	}
	r, _, _ := runlog.Read(res.Dir)
	if r.InputWait == nil || r.InputWait.Outcome != backlog.InputGaveUp || r.Issues[1].State != backlog.StateMerged ||
		r.Issues[2].State != backlog.StateNeedsInput || r.FinalPR == nil {
		t.Fatalf("wait %+v, states %s %s, final PR %v", r.InputWait, r.Issues[1].State, r.Issues[2].State, r.FinalPR)
	}
	if !strings.Contains(res.out, "no answer to #2 by ") {
		t.Errorf("the run does not say why it stopped waiting:\n%s", res.out)
	}
}

// A worker that is no model (a script) knows a person answered its
// issue's question the way a wave agent does: started again after the
// answer, it sees $WAVE_ANSWERED=1 and reads the answer, as `questions
// --json` prints it, from $WAVE_ANSWERS_FILE (docs/local-agent.md).
func TestABacklogWorkerStartedAfterAnAnswerIsToldSoInItsEnvironment(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.config = waitingConfig(f.config, "30")
	gate := f.shellWorkers(`if [ "$WAVE_ANSWERED" != 1 ]; then echo "[backlog-result] state=needs-input question=\"Which API?\""; exit 0; fi
cp "$WAVE_ANSWERS_FILE" "$GATE/answers.json"
echo done > own.txt && gitc add own.txt && gitc commit -q -m "Work" && echo "[backlog-result] state=done detail=answered"
`)
	f.issue(1, "Asks", "Files: own.txt")
	src := f.source()
	run := f.startRun(t, fastAnswers, 1)
	run.until(t, f, "the question", func(ev backlog.Event) bool { return ev.Kind == backlog.EvNeedsInput })
	body, marker := backlog.AnswerComment("the v2 API")
	if _, err := src.EnsureComment(context.Background(), 1, marker, body); err != nil {
		t.Fatal(err)
	}
	if err := src.RemoveLabel(context.Background(), 1, "needs-input"); err != nil {
		t.Fatal(err)
	}
	res := run.end(t)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("exit %d, %v; want 0 (answered, merged)\n%s", res.ExitCode, res.err, res.out)
	}
	var got []questions.Question
	b, err := os.ReadFile(filepath.Join(gate, "answers.json"))
	if err != nil {
		t.Fatalf("the answered worker had no answers file: %v", err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("answers file: %v\n%s", err, b)
	}
	if len(got) != 1 || got[0].Issue == nil || *got[0].Issue != 1 || got[0].Text != "Which API?" || got[0].Answer != "the v2 API" ||
		got[0].State != questions.Answered {
		t.Errorf("answers file %+v, want #1's question with its answer", got)
	}
}
