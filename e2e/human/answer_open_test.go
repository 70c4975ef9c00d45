package human

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// An open `backlog run` takes an answer given with `backlog answer`
// while it runs: the asking worker goes on in its worktree with the
// answer in its prompt, the issue merges and the run exits 0, with no
// other command typed — across a kill -9 of the supervisor too.

// waitFor5Minutes lets the run wait for answers (the tests' default is 0).
var waitFor5Minutes = []string{"WAVE_BACKLOG_INPUT_WAIT_MINUTES=5"}

func isKind(k string) func(backlog.Event) bool {
	return func(ev backlog.Event) bool { return ev.Kind == k }
}

func TestBacklogAnswerWhileTheRunIsOpenMergesTheIssueAndTheRunExitsZero(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Asks", "Files: backlog-work/**\n\nlocal-agent: result=needs-input question=\"Which API?\"")
	r.CommitIssues(t)
	ctx := context.Background()
	cmd := r.Command(ctx, "backlog", "run", "--issues", "1", "--no-dashboard")
	cmd.Env = append(append(cmd.Env, r.Env()...), waitFor5Minutes...)
	out := &e2etest.SyncBuf{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	run := e2etest.StartLife(cmd)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("backlog run:\n%s", out.String())
		}
	})
	run.WaitFor(t, "the run to wait for the answer", time.Minute, func() bool { return r.HasEvent(isKind(backlog.EvInputWait)) })
	st := r.RunEnv(ctx, "backlog", "status")
	if !strings.Contains(st.Stdout, "waiting for answers to #1 since ") {
		t.Errorf("backlog status does not say the run waits for an answer:\n%s", st.Stdout)
	}
	js := r.RunEnv(ctx, "backlog", "status", "--json")
	var v struct {
		WaitingForAnswers *struct {
			Issues []int `json:"issues"`
		} `json:"waitingForAnswers"`
	}
	if err := json.Unmarshal([]byte(js.Stdout), &v); err != nil || v.WaitingForAnswers == nil || len(v.WaitingForAnswers.Issues) != 1 {
		t.Errorf("status --json waitingForAnswers: %+v (%v)\n%s", v.WaitingForAnswers, err, js.Stdout)
	}
	ans := r.RunEnv(ctx, "backlog", "answer", "1", "Use the v2 API")
	if ans.Code != 0 || !strings.Contains(ans.Stdout, "the open backlog run") {
		t.Fatalf("answer: exit %d\n%s\n%s", ans.Code, ans.Stdout, ans.Stderr)
	}
	select {
	case <-run.Done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the run did not end after the answer")
	}
	if run.Err != nil || !strings.Contains(out.String(), "#1 merged into") {
		t.Fatalf("the run after the answer: %v (want exit 0 and #1 merged)", run.Err)
	}
	if n := r.CountEvents(isKind(backlog.EvAnswered)); n != 1 {
		t.Errorf("%d answered events, want 1", n)
	}
	if len(r.BacklogRuns()) != 1 {
		t.Errorf("runs %v, want the one", r.BacklogRuns())
	}
	v2 := r.SurfaceStatus(t)
	if len(v2.Issues) != 1 || v2.Issues[0].State != "merged" {
		t.Fatalf("status: %+v", v2.Issues)
	}
	b, err := os.ReadFile(filepath.Join(v2.Issues[0].RunDir, "prompt.md"))
	if err != nil {
		t.Fatal(err)
	}
	if p := string(b); !strings.Contains(p, backlog.AnswersSection) || !strings.Contains(p, "```text\nUse the v2 API\n```") {
		t.Errorf("the answered worker's prompt lacks the fenced answer:\n%s", p)
	}
}

// TestBacklogKill9AfterTheAnswerIsSeenRecordsItOnceAndMergesOnce: the
// supervisor dies the moment its answered event is on disk (the worker
// it sends back held at a gate); `backlog run` resumes, records nothing
// twice and merges the issue once.
func TestBacklogKill9AfterTheAnswerIsSeenRecordsItOnceAndMergesOnce(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	gate := filepath.Join(t.TempDir(), "gate")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r.Issue(1, "Asks", "Files: backlog-work/**\n\nlocal-agent: result=needs-input question=\"Which API?\" wait="+gate)
	r.CommitIssues(t)
	ctx := context.Background()
	l := &e2etest.Lives{R: r, Args: []string{"backlog", "run", "--issues", "1", "--no-dashboard"}, Env: waitFor5Minutes}
	defer l.Dump(t)
	first := e2etest.StartLife(l.Start(ctx, ""))
	first.WaitFor(t, "the question", time.Minute, func() bool { return r.HasEvent(isKind(backlog.EvNeedsInput)) })
	// The answered worker waits at the gate until the supervisor is dead.
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	if ans := r.RunEnv(ctx, "backlog", "answer", "1", "Use the v2 API"); ans.Code != 0 {
		t.Fatalf("answer: exit %d %s", ans.Code, ans.Stderr)
	}
	first.WaitFor(t, "the answer to be recorded", time.Minute, func() bool { return r.HasEvent(isKind(backlog.EvAnswered)) })
	first.Kill(t)
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	second := r.RunWith(ctx, append(r.Env(), waitFor5Minutes...), "backlog", "run", "--no-dashboard")
	if second.Code != 0 || !strings.Contains(second.Stdout, "#1 merged into") {
		t.Fatalf("the resumed run: exit %d\n%s\n%s", second.Code, second.Stdout, second.Stderr)
	}
	if n := r.CountEvents(isKind(backlog.EvAnswered)); n != 1 {
		t.Errorf("%d answered events, want 1", n)
	}
	if n := r.CountEvents(e2etest.Merged(1)); n != 1 {
		t.Errorf("#1 merged %d times, want once", n)
	}
	run, _ := e2etest.BacklogEvents(t, r)
	if is := run.Issues[1]; is.State != backlog.StateMerged || is.Answer == nil || is.Answer.Text != "Use the v2 API" {
		t.Errorf("#1 after the resume: %+v, answer %+v", is, is.Answer)
	}
}
