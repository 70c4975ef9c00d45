package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

func (r *backlogRepo) withNotify(hook *hookReceiver) []string {
	cfg, err := os.ReadFile(filepath.Join(r.root, "wave.config.yaml"))
	if err != nil {
		r.t.Fatal(err)
	}
	r.write("wave.config.yaml", string(cfg)+fmt.Sprintf("notify:\n  - kind: webhook\n    urlEnv: %s\n", hookEnv))
	return append(r.env(), hookEnv+"="+hook.url())
}

// runEvents reads the lane's only backlog run's log.
func (r *backlogRepo) runEvents() []backlog.Event {
	r.t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(r.root, ".wave", "lanes", "main", "backlog", "*", "events.jsonl"))
	if len(dirs) != 1 {
		r.t.Fatalf("%d backlog runs, want 1", len(dirs))
	}
	evs, _, err := jsonfile.ReadLines[backlog.Event](dirs[0])
	if err != nil {
		r.t.Fatal(err)
	}
	return evs
}

// A backlog run on the local source tells the webhook of each merged
// issue and of its final pull request, once each.
func TestBacklogRunNotifiesEachMergeAndTheFinalPROnce(t *testing.T) {
	r := newBacklogRepo(t)
	hook := newHookReceiver(t, http.StatusOK)
	r.issue(1, "Add a greeting", "Files: src/greet/**")
	r.issue(2, "Add a farewell", "Files: src/bye/**")
	env := r.withNotify(hook)
	run := r.runWith(ctxFor(t), env, "backlog", "run", "--issues", "1,2", "--no-dashboard")
	if run.code != 0 {
		t.Fatalf("run: %d\n%s\n%s", run.code, run.stdout, run.stderr)
	}
	for _, n := range []int{1, 2} {
		id := fmt.Sprintf("backlog-%s-issue-merged-%d", r.runID(), n)
		if c := hook.count("issue-merged", id); c != 1 {
			t.Errorf("issue-merged #%d delivered %d times, want once", n, c)
		}
	}
	if c := hook.count("final-pr-opened", ""); c != 1 {
		t.Errorf("final-pr-opened delivered %d times, want once", c)
	}
	delivered := 0
	for _, ev := range r.runEvents() {
		if ev.Kind == backlog.EvNotified && ev.Outcome == backlog.NotifyDelivered {
			delivered++
		}
	}
	if delivered != 3 {
		t.Errorf("%d deliveries recorded in the run's log, want 3", delivered)
	}
	st := r.runWith(ctxFor(t), env, "backlog", "status", "--json")
	var v struct {
		State         string               `json:"state"`
		Notifications *state.Notifications `json:"notifications"`
	}
	if err := json.Unmarshal([]byte(st.stdout), &v); err != nil || v.State != "finished" || v.Notifications == nil || v.Notifications.Delivered != 3 {
		t.Errorf("backlog status --json: %+v %v\n%s", v, err, st.stdout)
	}
	noSecretUnder(t, r.root, run.stdout, run.stderr, st.stdout)
}

// A supervisor killed with SIGKILL after its first merge was told resumes
// the run; the webhook hears each merge and the final PR once.
func TestKilledSupervisorNotifiesNothingTwice(t *testing.T) {
	r := newBacklogRepo(t)
	hook := newHookReceiver(t, http.StatusOK)
	r.issue(1, "Add a greeting", "Files: src/greet/**")
	r.issue(2, "Add a farewell", "Files: src/bye/**\n\nlocal-agent: delay=8000ms")
	env := r.withNotify(hook)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"backlog", "run", "--issues", "1,2", "--no-dashboard"}
	first := r.command(ctx, args...)
	first.Env = append(first.Env, env...)
	first.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "issue #1's merge told", 60*time.Second, func() bool { return hook.count("issue-merged", "") == 1 })
	_ = syscall.Kill(first.Process.Pid, syscall.SIGKILL)
	_ = first.Wait()
	second := r.runWith(ctx, env, args...)
	if second.code != 0 || !strings.Contains(second.stdout, "resuming run") {
		t.Fatalf("rerun: %d\n%s\n%s", second.code, second.stdout, second.stderr)
	}
	for _, n := range []int{1, 2} {
		id := fmt.Sprintf("backlog-%s-issue-merged-%d", r.runID(), n)
		if c := hook.count("issue-merged", id); c != 1 {
			t.Errorf("issue-merged #%d delivered %d times, want once", n, c)
		}
	}
	if c := hook.count("final-pr-opened", ""); c != 1 {
		t.Errorf("final-pr-opened delivered %d times, want once", c)
	}
}

func (r *backlogRepo) runID() string {
	r.t.Helper()
	for _, ev := range r.runEvents() {
		if ev.Kind == backlog.EvRunStarted && ev.Run != nil {
			return ev.Run.ID
		}
	}
	r.t.Fatal("no run_started event")
	return ""
}

// The backlog human loop, told: a worker's question reaches the webhook
// once as issue-needs-input, the answer once as question-answered (with
// its text), then the merge and the final PR.
func TestBacklogQuestionAndAnswerAreEachToldOnce(t *testing.T) {
	r := newBacklogRepo(t)
	hook := newHookReceiver(t, http.StatusOK)
	r.issue(1, "Asks", "Files: backlog-work/**\n\nlocal-agent: result=needs-input question=\"Which API?\"")
	r.commitIssues(t)
	env := append(r.withNotify(hook), waitFor5Minutes...)
	cmd := r.command(context.Background(), "backlog", "run", "--issues", "1", "--no-dashboard")
	cmd.Env = append(cmd.Env, env...)
	out := &syncBuf{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	run := startLife(cmd)
	run.waitFor(t, "issue-needs-input told", time.Minute, func() bool { return hook.count("issue-needs-input", "") == 1 })
	if ans := r.runWith(ctxFor(t), env, "backlog", "answer", "1", "Use the v2 API"); ans.code != 0 {
		t.Fatalf("answer: %d\n%s\n%s", ans.code, ans.stdout, ans.stderr)
	}
	select {
	case <-run.done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the run did not end after the answer")
	}
	if run.err != nil {
		t.Fatalf("run: %v\n%s", run.err, out.String())
	}
	for _, c := range []string{"issue-needs-input", "question-answered", "issue-merged", "final-pr-opened"} {
		if n := hook.count(c, ""); n != 1 {
			t.Errorf("%s told %d times, want once", c, n)
		}
	}
	hook.mu.Lock()
	defer hook.mu.Unlock()
	for _, b := range hook.bodies {
		if b["event"] == "question-answered" && b["answer"] != "Use the v2 API" {
			t.Errorf("question-answered carries answer %v", b["answer"])
		}
	}
}
