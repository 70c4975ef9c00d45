package human

import (
	"context"
	"encoding/json"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

// runWithoutUser runs the binary in r with $USER removed from its
// environment (cron, a container, `env -i`) and extra added.
func runWithoutUser(t *testing.T, r *e2etest.Repo, extra []string, args ...string) e2etest.Result {
	t.Helper()
	cmd := r.Command(e2etest.Context(t), args...)
	cmd.Env = append(slices.DeleteFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "USER=") }), extra...)
	return e2etest.RunCmd(t, cmd)
}

// operatorOf is who `questions --json` says answered question id.
func operatorOf(t *testing.T, r *e2etest.Repo, env []string, id string) string {
	t.Helper()
	res := r.RunWith(e2etest.Context(t), env, "questions", "--json")
	var qs []questions.Question
	if err := json.Unmarshal([]byte(res.Stdout), &qs); err != nil {
		t.Fatalf("questions --json: %v\n%s%s", err, res.Stdout, res.Stderr)
	}
	for _, q := range qs {
		if q.ID == id {
			return q.Operator
		}
	}
	t.Fatalf("questions --json has no %s:\n%s", id, res.Stdout)
	return ""
}

// With $USER unset, an answer is attributed to the account that gave it
// — not to nobody ("-") nor to the issue source's own account.
func TestAnAnswerWithoutUserIsAttributedToTheAccount(t *testing.T) {
	t.Parallel()
	me, err := user.Current()
	if err != nil {
		t.Skipf("no account name here: %v", err)
	}
	t.Run("wave", func(t *testing.T) {
		r := e2etest.NewRepo(t)
		r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
		id := e2etest.PostRecord(t, r, "--agent", "A1", "--kind", "human-feedback", "--summary", "Which region?")
		if res := runWithoutUser(t, r, nil, "answer", id, "eu-west-1"); res.Code != 0 {
			t.Fatalf("answer: exit %d\n%s", res.Code, res.Stderr)
		}
		if got := operatorOf(t, r, nil, id); got != me.Username {
			t.Errorf("answered by %q, want the account %q", got, me.Username)
		}
	})
	t.Run("backlog run waiting", func(t *testing.T) {
		r := e2etest.NewBacklogRepo(t)
		r.Issue(1, "Asks", "Files: backlog-work/**\n\nlocal-agent: result=needs-input question=\"Which API?\"")
		r.CommitIssues(t)
		cmd := r.Command(context.Background(), "backlog", "run", "--issues", "1", "--no-dashboard")
		cmd.Env = append(append(cmd.Env, r.Env()...), waitFor5Minutes...)
		out := &e2etest.SyncBuf{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		run := e2etest.StartLife(cmd)
		run.WaitFor(t, "the run to wait for the answer", time.Minute, func() bool { return r.HasEvent(isKind(backlog.EvInputWait)) })
		var id string
		for _, q := range listQuestions(t, r) {
			id = q.ID
		}
		if ans := runWithoutUser(t, r.Repo, r.Env(), "backlog", "answer", "1", "Use the v2 API"); ans.Code != 0 {
			t.Fatalf("backlog answer: exit %d\n%s%s", ans.Code, ans.Stdout, ans.Stderr)
		}
		select {
		case <-run.Done:
		case <-time.After(2 * time.Minute):
			t.Fatal("the run did not end after the answer")
		}
		if run.Err != nil {
			t.Fatalf("the run after the answer: %v\n%s", run.Err, out.String())
		}
		if got := operatorOf(t, r.Repo, r.Env(), id); got != me.Username {
			t.Errorf("answered by %q, want the account %q", got, me.Username)
		}
	})
}

// listQuestions is the backlog repository's questions.
func listQuestions(t *testing.T, r *e2etest.BacklogRepo) []questions.Question {
	t.Helper()
	res := r.RunEnv(e2etest.Context(t), "questions", "--json")
	var qs []questions.Question
	if err := json.Unmarshal([]byte(res.Stdout), &qs); err != nil || len(qs) != 1 {
		t.Fatalf("questions --json: %v\n%s%s", err, res.Stdout, res.Stderr)
	}
	return qs
}

// An agent that is no model — a script — cannot tell from its prompt
// that it was answered (every prompt's rules name the answers heading):
// its relaunch with the answer has $WAVE_ANSWERED=1 and the answers,
// as `questions --json` shows them, in $WAVE_ANSWERS_FILE; its first
// run has neither.
func TestAScriptAgentIsToldItWasAnsweredInItsEnvironment(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	script := filepath.Join(t.TempDir(), "asker")
	body := "#!/bin/sh\nset -e\nmkdir -p src\n" +
		"if [ \"$WAVE_ANSWERED\" != 1 ]; then\n" +
		"  test -z \"$WAVE_ANSWERS_FILE\"\n" +
		"  grep -q 'Answers from people:' \"$WAVE_PROMPT_FILE\"\n" + // the rules name it: no signal
		"  " + e2etest.Bin() + " ask --question 'Which port?' --blocking\n  exit 0\nfi\n" +
		"cp \"$WAVE_ANSWERS_FILE\" src/a1.txt\n" +
		"echo '[wave-proof] completion=contract durability=none proof=unit state=met'\necho '[wave-doc-delta] state=owned'\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "id: shell", "shell.command: "+script)}, e2etest.ClosureAgents()...)...)
	l := e2etest.StartLaunch(t, r)
	q := e2etest.PendingQuestion(t, r, l)
	if res := r.Run(e2etest.Context(t), "answer", q.ID, "8443"); res.Code != 0 {
		t.Fatalf("answer: %d %s", res.Code, res.Stderr)
	}
	if code := l.Wait(t); code != 0 {
		t.Fatalf("launch exit %d after the answer\n%s", code, l.Console())
	}
	b, err := os.ReadFile(filepath.Join(r.Root, "src", "a1.txt"))
	if err != nil {
		t.Fatalf("the answered run did not copy its answers file: %v", err)
	}
	var got []questions.Question
	if err := json.Unmarshal(b, &got); err != nil || len(got) != 1 || got[0].ID != q.ID || got[0].Answer != "8443" || got[0].Text != "Which port?" {
		t.Fatalf("answers file: %v\n%s", err, b)
	}
}
