package human

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// The human loop in wave mode: A1 asks a blocking question and finishes;
// the live launcher holds the wave in waiting-for-input while A2 goes on,
// `answer` resolves it, the launcher relaunches A1 with the answer in its
// prompt, and the wave goes through closure: launch exits 0 and nobody
// typed resume.
func TestAnsweredQuestionRelaunchesTheAgentAndTheLaunchCompletes(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	e2etest.AskingWave(r)
	l := e2etest.StartLaunch(t, r)
	q := e2etest.PendingQuestion(t, r, l)
	if q.AgentID != "A1" || *q.Wave != 0 || !q.Blocking || q.Text != e2etest.AskedQuestion || q.Attempt != 1 {
		t.Fatalf("question %+v", q)
	}
	// A2 does not need the answer: it finishes while A1 waits.
	e2etest.WaitFor(t, "A2 completed while A1 waits", time.Minute, func() bool {
		evs, _, _ := state.ReadEvents(r.Layout().EventsPath())
		for _, ev := range evs {
			if ev.EntityType == state.EntityAgentRun && ev.Action == state.AgentCompleted && ev.Data["agentId"] == "A2" {
				return true
			}
		}
		return false
	})
	st := r.Run(e2etest.Context(t), "status", "--json")
	var lane state.Lane
	if err := json.Unmarshal([]byte(st.Stdout), &lane); err != nil || len(lane.Waves) != 1 {
		t.Fatalf("status --json: %v\n%s", err, st.Stdout)
	}
	w := lane.Waves[0]
	if w.Status != state.WaveWaitingForInput || len(w.Questions) != 1 || w.Questions[0].ID != q.ID || w.Questions[0].State != questions.Pending {
		t.Fatalf("wave while asking: status %q questions %+v", w.Status, w.Questions)
	}
	listed := r.Run(e2etest.Context(t), "questions", "--pending")
	if listed.Code != 0 || !strings.Contains(listed.Stdout, q.ID) || !strings.Contains(listed.Stdout, "wave 0 / A1") {
		t.Fatalf("questions --pending: %d\n%s%s", listed.Code, listed.Stdout, listed.Stderr)
	}
	const answer = "PostgreSQL 16, the shared cluster"
	res := r.Run(e2etest.Context(t), "answer", q.ID, answer, "--operator", "tester")
	if res.Code != 0 || !strings.Contains(res.Stdout, "launcher of lane main is running") {
		t.Fatalf("answer: %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if code := l.Wait(t); code != 0 {
		t.Fatalf("launch exit %d after the answer\n%s", code, l.Console())
	}
	e2etest.CheckAnswerReachedA1(t, r, q, answer)
	again := r.Run(e2etest.Context(t), "answer", q.ID, "something else")
	if again.Code != e2etest.ExitUsage || !strings.Contains(again.Stderr, "already answered") {
		t.Fatalf("answering twice: %d %s", again.Code, again.Stderr)
	}
}

// A launcher killed with SIGKILL while it waits loses nothing: the next
// launch adopts the finished run, sees the question still pending and
// waits for it; killed again, the answer given while no launcher runs
// says what happens next, and the launch after that relaunches A1 with
// it and completes. One asked and one answered event in all.
func TestAQuestionSurvivesKill9OfTheWaitingLauncher(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	e2etest.AskingWave(r)
	first := e2etest.StartLaunch(t, r)
	q := e2etest.PendingQuestion(t, r, first)
	_ = first.Cmd.Process.Signal(syscall.SIGKILL)
	first.Wait(t)

	second := e2etest.StartLaunch(t, r)
	if got := e2etest.PendingQuestion(t, r, second); got.ID != q.ID {
		t.Fatalf("after the kill the question is %s, want %s", got.ID, q.ID)
	}
	_ = second.Cmd.Process.Signal(syscall.SIGKILL)
	second.Wait(t)
	e2etest.WaitFor(t, "the lane lock free", 30*time.Second, func() bool { return !lanes.Held(r.Layout().LockPath()) })

	const answer = "SQLite is enough"
	res := r.Run(e2etest.Context(t), "answer", q.ID, answer)
	if res.Code != 0 || !strings.Contains(res.Stdout, "no launcher is running") || !strings.Contains(res.Stdout, "resume -w 0") {
		t.Fatalf("answer with no launcher: %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("launch after the answer: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	e2etest.CheckAnswerReachedA1(t, r, q, answer)
}

// runtime.inputTimeoutSeconds: a question nobody answers in time becomes
// unanswered and the launch exits 43, printing every pending question in
// one block.
func TestAnUnansweredQuestionEndsTheLaunchWith43(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.Write("wave.config.yaml", strings.Replace(e2etest.Config, "  terminateGraceMs: 500\n", "  terminateGraceMs: 500\n  inputTimeoutSeconds: 1\n", 1))
	e2etest.AskingWave(r)
	res := e2etest.Launch(t, r)
	if res.Code != 43 || !strings.Contains(res.Stdout, "questions waiting for a person in wave 0:") || !strings.Contains(res.Stdout, e2etest.AskedQuestion) {
		t.Fatalf("exit %d, want 43 with the pending question\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	qs, _, _ := questions.List(r.Layout())
	if len(qs) != 1 || qs[0].State != questions.Unanswered {
		t.Fatalf("questions %+v: want one unanswered", qs)
	}
	qe := e2etest.QuestionEvents(r.Events())
	if qe[qs[0].ID+" asked"] != 1 || qe[qs[0].ID+" unanswered"] != 1 {
		t.Fatalf("question events %v", qe)
	}
}

// `ask --wait` blocks until the answer and prints it; with a timeout and
// no answer it exits 124.
func TestAskWaitPrintsTheAnswer(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, e2etest.ImplAgent("A1"))
	if res := r.Run(e2etest.Context(t), "ask", "--wave", "0", "--agent", "A1", "--question", "nobody answers", "--wait", "--timeout-seconds", "1"); res.Code != e2etest.ExitTimeout {
		t.Fatalf("ask --wait with no answer: %d %s", res.Code, res.Stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := r.Command(ctx, "ask", "--wave", "0", "--agent", "A1", "--question", "Ship it?", "--wait")
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var id string
	e2etest.WaitFor(t, "the question", 30*time.Second, func() bool {
		qs, _, _ := questions.List(r.Layout())
		for _, q := range qs {
			if q.Text == "Ship it?" {
				id = q.ID
			}
		}
		return id != ""
	})
	if res := r.Run(e2etest.Context(t), "feedback", "respond", "--id", id, "--response", "yes, \x1b[31mtoday"); res.Code != 0 {
		t.Fatalf("feedback respond: %d %s", res.Code, res.Stderr)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ask --wait: %v", err)
	}
	if got := strings.TrimSpace(out.String()); !strings.HasPrefix(got, "yes, ") || !strings.HasSuffix(got, "today") || strings.Contains(got, "\x1b") {
		t.Fatalf("ask --wait printed %q: want the answer without terminal controls", got)
	}
}

// An unknown id lists the pending questions.
func TestAnswerUnknownIDListsThePendingQuestions(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, e2etest.ImplAgent("A1"))
	ask := r.Run(e2etest.Context(t), "ask", "--wave", "0", "--agent", "A1", "--question", "Which \x1b]0;title\x07 port?")
	id := strings.TrimSpace(ask.Stdout)
	if ask.Code != 0 || !strings.HasPrefix(id, "q-") {
		t.Fatalf("ask: %d %q %s", ask.Code, ask.Stdout, ask.Stderr)
	}
	res := r.Run(e2etest.Context(t), "answer", "q-nope", "8080")
	if res.Code != e2etest.ExitUsage || !strings.Contains(res.Stderr, id) || strings.Contains(res.Stderr, "\x1b") {
		t.Fatalf("unknown id: %d %q", res.Code, res.Stderr)
	}
	list := r.Run(e2etest.Context(t), "questions")
	if strings.Contains(list.Stdout, "\x1b") || strings.Contains(list.Stdout, "\x07") || !strings.Contains(list.Stdout, id) {
		t.Fatalf("questions printed raw control characters or missed %s: %q", id, list.Stdout)
	}
}

// Issue 21's loop: a script following a live launch with `status
// --wait-change --exit-code` until something needs it gets 20 (input
// required) when an agent asks a blocking question with `ask`.
func TestStatusWaitChangeReturnsTwentyWhenALiveAgentAsks(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	e2etest.AskingWave(r)
	l := e2etest.StartLaunch(t, r)
	t.Cleanup(func() { _ = l.Cmd.Process.Kill(); _ = l.Cmd.Wait() })
	code := e2etest.StatusChanged
	for i := 0; i < 50 && (code == e2etest.StatusChanged || code == e2etest.StatusRunning); i++ {
		code = r.Run(e2etest.Context(t), "status", "--wait-change", "--exit-code", "--timeout-seconds", "60").Code
	}
	if code != e2etest.StatusInputRequired {
		t.Fatalf("status --wait-change --exit-code ended with %d, want 20\n%s", code, l.Console())
	}
	if qs, _, _ := questions.List(r.Layout()); len(qs) != 1 || qs[0].State != questions.Pending {
		t.Fatalf("questions %+v", qs)
	}
}

// With no launcher left (it gave up: inputTimeoutSeconds), `answer
// --resume` starts the wave's resume detached through the submit
// machinery and says how to follow it; the resumed A1 reads the answer
// and the run completes.
func TestAnswerResumeStartsTheWavesResumeDetached(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.Write("wave.config.yaml", strings.Replace(e2etest.Config, "  terminateGraceMs: 500\n", "  terminateGraceMs: 500\n  inputTimeoutSeconds: 1\n", 1))
	e2etest.AskingWave(r)
	if res := e2etest.Launch(t, r); res.Code != 43 {
		t.Fatalf("launch: exit %d, want 43\n%s", res.Code, res.Stdout)
	}
	qs, _, _ := questions.List(r.Layout())
	if len(qs) != 1 {
		t.Fatalf("questions %+v", qs)
	}
	const answer = "MySQL 8"
	res := r.Run(e2etest.Context(t), "answer", qs[0].ID, answer, "--resume")
	if res.Code != 0 || !strings.Contains(res.Stdout, "attach -t launcher") {
		t.Fatalf("answer --resume: %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	_, rest, ok := strings.Cut(res.Stdout, "as run ")
	if !ok {
		t.Fatalf("answer --resume named no run:\n%s", res.Stdout)
	}
	id := strings.Fields(rest)[0]
	if w := r.Run(e2etest.Context(t), "wait", "--run-id", id); w.Code != 0 {
		t.Fatalf("wait --run-id %s: %d %s %s", id, w.Code, w.Stdout, w.Stderr)
	}
	dir, _ := e2etest.LatestRunDir(r.Layout(), 0, "A1")
	prompt, _ := os.ReadFile(filepath.Join(dir, lanes.PromptFile))
	if !strings.Contains(string(prompt), questions.HeadAnswers) || !strings.Contains(string(prompt), answer) {
		t.Fatalf("the resumed A1's prompt lacks the answer:\n%s", prompt)
	}
}

// A backlog worker's needs-input question is listed by `questions` and
// answered by `answer` through the backlog answer path: the next run
// merges the issue with the answer in its worker's prompt.
func TestAnswerAnswersABacklogQuestionOnItsIssue(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Asks", "Files: a/**\n\nlocal-agent: result=needs-input question=\"Which API?\"")
	r.CommitIssues(t)
	ctx := context.Background()
	if first := r.RunEnv(ctx, "backlog", "run", "--issues", "1", "--no-dashboard"); !strings.Contains(first.Stdout, "#1 needs input") {
		t.Fatalf("the first run did not ask (exit %d):\n%s\n%s", first.Code, first.Stdout, first.Stderr)
	}
	list := r.RunEnv(ctx, "questions", "--pending", "--json")
	var qs []questions.Question
	if err := json.Unmarshal([]byte(list.Stdout), &qs); err != nil || len(qs) != 1 || qs[0].Issue == nil || *qs[0].Issue != 1 || qs[0].Text != "Which API?" {
		t.Fatalf("questions --pending --json: %v\n%s%s", err, list.Stdout, list.Stderr)
	}
	ans := r.RunEnv(ctx, "answer", "#1", "Use the v2 API", "--operator", "ana")
	if ans.Code != 0 || !strings.Contains(ans.Stdout, "issue #1") {
		t.Fatalf("answer #1: exit %d\n%s%s", ans.Code, ans.Stdout, ans.Stderr)
	}
	if again := r.RunEnv(ctx, "answer", qs[0].ID, "other"); again.Code != e2etest.ExitUsage || !strings.Contains(again.Stderr, "already answered") {
		t.Fatalf("answering twice: %d %s", again.Code, again.Stderr)
	}
	second := r.RunEnv(ctx, "backlog", "run", "--issues", "1", "--no-dashboard")
	if second.Code != 0 || !strings.Contains(second.Stdout, "#1 merged into") {
		t.Fatalf("the run after the answer did not merge #1 (exit %d):\n%s\n%s", second.Code, second.Stdout, second.Stderr)
	}
	v := r.SurfaceStatus(t)
	b, err := os.ReadFile(filepath.Join(v.Issues[0].RunDir, "prompt.md"))
	if err != nil || !strings.Contains(string(b), "Use the v2 API") {
		t.Fatalf("the worker's prompt lacks the answer (%v):\n%s", err, b)
	}
}

// An agent that asks with `ask --wait` stays alive: the wave is
// waiting-for-input while it waits, the answer reaches it in the same run
// (printed by ask), and the launcher does not relaunch it.
func TestAskWaitGetsTheAnswerInTheSameRun(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	script := filepath.Join(t.TempDir(), "asker")
	body := "#!/bin/sh\nset -e\nmkdir -p src\n" +
		e2etest.Bin() + " ask --question 'Which port?' --wait > src/a1.txt\n" +
		"echo '[wave-proof] completion=contract durability=none proof=unit state=met'\necho '[wave-doc-delta] state=owned'\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "id: shell", "shell.command: "+script)}, e2etest.ClosureAgents()...)...)
	l := e2etest.StartLaunch(t, r)
	var q questions.Question
	e2etest.WaitFor(t, "the launcher telling the event log of the question", time.Minute, func() bool {
		evs, _, _ := state.ReadEvents(r.Layout().EventsPath())
		for _, ev := range evs {
			if ev.EntityType == state.EntityQuestion && ev.Action == state.QuestionAsked {
				q.ID = ev.EntityID
				return true
			}
		}
		return false
	})
	var lane state.Lane
	if err := json.Unmarshal([]byte(r.Run(e2etest.Context(t), "status", "--json").Stdout), &lane); err != nil || lane.Waves[0].Status != state.WaveWaitingForInput {
		t.Fatalf("status while A1 waits: %v %+v", err, lane.Waves)
	}
	if res := r.Run(e2etest.Context(t), "answer", q.ID, "8443"); res.Code != 0 {
		t.Fatalf("answer: %d %s", res.Code, res.Stderr)
	}
	if code := l.Wait(t); code != 0 {
		t.Fatalf("launch exit %d\n%s", code, l.Console())
	}
	if b, _ := os.ReadFile(filepath.Join(r.Root, "src", "a1.txt")); strings.TrimSpace(string(b)) != "8443" {
		t.Fatalf("A1 got %q from ask --wait", b)
	}
	launched, _ := e2etest.AgentStarts(r.Events())
	if launched["A1"] != 1 {
		t.Fatalf("A1 launched %d times, want once (no relaunch after ask --wait)", launched["A1"])
	}
	if qe := e2etest.QuestionEvents(r.Events()); qe[q.ID+" asked"] != 1 || qe[q.ID+" answered"] != 1 {
		t.Fatalf("question events %v", qe)
	}
}
