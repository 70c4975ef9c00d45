package human

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// A backlog run on the local source tells the webhook of each merged
// issue and of its final pull request, once each.
func TestBacklogRunNotifiesEachMergeAndTheFinalPROnce(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	hook := newHookReceiver(t, http.StatusOK)
	r.Issue(1, "Add a greeting", "Files: src/greet/**")
	r.Issue(2, "Add a farewell", "Files: src/bye/**")
	env := r.WithNotify(hook)
	run := r.RunWith(e2etest.Context(t), env, "backlog", "run", "--issues", "1,2", "--no-dashboard")
	if run.Code != 0 {
		t.Fatalf("run: %d\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	for _, n := range []int{1, 2} {
		id := fmt.Sprintf("backlog-%s-issue-merged-%d", r.RunID(), n)
		if c := hook.Count("issue-merged", id); c != 1 {
			t.Errorf("issue-merged #%d delivered %d times, want once", n, c)
		}
	}
	if c := hook.Count("final-pr-opened", ""); c != 1 {
		t.Errorf("final-pr-opened delivered %d times, want once", c)
	}
	delivered := 0
	for _, ev := range r.RunEvents() {
		if ev.Kind == backlog.EvNotified && ev.Outcome == backlog.NotifyDelivered {
			delivered++
		}
	}
	if delivered != 3 {
		t.Errorf("%d deliveries recorded in the run's log, want 3", delivered)
	}
	st := r.RunWith(e2etest.Context(t), env, "backlog", "status", "--json")
	var v struct {
		State         string               `json:"state"`
		Notifications *state.Notifications `json:"notifications"`
	}
	if err := json.Unmarshal([]byte(st.Stdout), &v); err != nil || v.State != "finished" || v.Notifications == nil || v.Notifications.Delivered != 3 {
		t.Errorf("backlog status --json: %+v %v\n%s", v, err, st.Stdout)
	}
	noSecretUnder(t, r.Root, run.Stdout, run.Stderr, st.Stdout)
}

// A supervisor killed with SIGKILL after its first merge was told resumes
// the run; the webhook hears each merge and the final PR once.
func TestKilledSupervisorNotifiesNothingTwice(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	hook := newHookReceiver(t, http.StatusOK)
	r.Issue(1, "Add a greeting", "Files: src/greet/**")
	r.Issue(2, "Add a farewell", "Files: src/bye/**\n\nlocal-agent: delay=8000ms")
	env := r.WithNotify(hook)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"backlog", "run", "--issues", "1,2", "--no-dashboard"}
	first := r.Command(ctx, args...)
	first.Env = append(first.Env, env...)
	first.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	// Killed once the delivery is recorded: a kill between the POST and
	// its record is the one window a receiver dedupes by the notice's id.
	e2etest.WaitFor(t, "issue #1's merge told and recorded", 60*time.Second, func() bool {
		if hook.Count("issue-merged", "") != 1 {
			return false
		}
		for _, ev := range r.RunEvents() {
			if ev.Kind == backlog.EvNotified && ev.Outcome == backlog.NotifyDelivered && ev.Notice != nil && ev.Notice.Event == "issue-merged" {
				return true
			}
		}
		return false
	})
	_ = syscall.Kill(first.Process.Pid, syscall.SIGKILL)
	_ = first.Wait()
	second := r.RunWith(ctx, env, args...)
	if second.Code != 0 || !strings.Contains(second.Stdout, "resuming run") {
		t.Fatalf("rerun: %d\n%s\n%s", second.Code, second.Stdout, second.Stderr)
	}
	for _, n := range []int{1, 2} {
		id := fmt.Sprintf("backlog-%s-issue-merged-%d", r.RunID(), n)
		if c := hook.Count("issue-merged", id); c != 1 {
			t.Errorf("issue-merged #%d delivered %d times, want once", n, c)
		}
	}
	if c := hook.Count("final-pr-opened", ""); c != 1 {
		t.Errorf("final-pr-opened delivered %d times, want once", c)
	}
}

// The backlog human loop, told: a worker's question reaches the webhook
// once as issue-needs-input, the answer once as question-answered (with
// its text), then the merge and the final PR.
func TestBacklogQuestionAndAnswerAreEachToldOnce(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	hook := newHookReceiver(t, http.StatusOK)
	r.Issue(1, "Asks", "Files: backlog-work/**\n\nlocal-agent: result=needs-input question=\"Which API?\"")
	r.CommitIssues(t)
	env := append(r.WithNotify(hook), waitFor5Minutes...)
	cmd := r.Command(context.Background(), "backlog", "run", "--issues", "1", "--no-dashboard")
	cmd.Env = append(cmd.Env, env...)
	out := &e2etest.SyncBuf{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	run := e2etest.StartLife(cmd)
	run.WaitFor(t, "issue-needs-input told", time.Minute, func() bool { return hook.Count("issue-needs-input", "") == 1 })
	if ans := r.RunWith(e2etest.Context(t), env, "backlog", "answer", "1", "Use the v2 API"); ans.Code != 0 {
		t.Fatalf("answer: %d\n%s\n%s", ans.Code, ans.Stdout, ans.Stderr)
	}
	select {
	case <-run.Done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the run did not end after the answer")
	}
	if run.Err != nil {
		t.Fatalf("run: %v\n%s", run.Err, out.String())
	}
	for _, c := range []string{"issue-needs-input", "question-answered", "issue-merged", "final-pr-opened"} {
		if n := hook.Count(c, ""); n != 1 {
			t.Errorf("%s told %d times, want once", c, n)
		}
	}
	hook.Mu.Lock()
	defer hook.Mu.Unlock()
	for _, b := range hook.Bodies {
		if b["event"] == "question-answered" && b["answer"] != "Use the v2 API" {
			t.Errorf("question-answered carries answer %v", b["answer"])
		}
	}
}
