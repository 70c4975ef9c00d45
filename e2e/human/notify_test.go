package human

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

func newHookReceiver(t *testing.T, status int) *e2etest.HookReceiver {
	h := &e2etest.HookReceiver{Status: status}
	h.Srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/services/"+e2etest.HookSecret {
			http.Error(w, "wrong hook", http.StatusNotFound)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			http.Error(w, "not json", http.StatusBadRequest)
			return
		}
		h.Mu.Lock()
		h.Bodies = append(h.Bodies, m)
		status := h.Status
		h.Mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(h.Srv.Close)
	return h
}

// noSecretUnder fails when the webhook's secret is in any file under dir
// or in outs.
func noSecretUnder(t *testing.T, dir string, outs ...string) {
	t.Helper()
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || fi.Mode()&os.ModeType != 0 {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), "SECRET") {
			t.Errorf("the webhook URL is in %s", p)
		}
		return nil
	})
	for i, o := range outs {
		if strings.Contains(o, "SECRET") {
			t.Errorf("the webhook URL is in output %d:\n%s", i, o)
		}
	}
}

// A person's webhook (and command) is told once that an agent asked, and
// once that the wave completed; history from before the launch is not
// replayed, and the webhook's URL is nowhere to be read.
func TestWebhookHearsOneQuestionAndOneWaveCompleted(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	hook := newHookReceiver(t, http.StatusOK)
	got := filepath.Join(t.TempDir(), "command-sink.jsonl")
	r.Write("sink.sh", "#!/bin/sh\ncat >> \"$1\"\n")
	r.WithNotify(fmt.Sprintf("  - kind: webhook\n    urlEnv: %s\n  - kind: command\n    argv: [sh, sink.sh, %s]\n", e2etest.HookEnv, got))
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 3s")}, e2etest.ClosureAgents()...)...)
	old := r.AskQuestion(0, "q-last-week", "A1", "asked before this launch, by nobody's launcher")

	ctx := e2etest.Context(t)
	cmd := r.LaunchEnv(ctx, e2etest.HookEnv+"="+hook.URL())
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.WaitFollowing(1)
	q := r.AskQuestion(0, "q-1", "A1", "Which <!channel> port should the API use?")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("launch: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if n := hook.Count("question-asked", q); n != 1 {
		t.Errorf("webhook got question-asked %d times, want once", n)
	}
	if n := hook.Count("wave-completed", ""); n != 1 {
		t.Errorf("webhook got wave-completed %d times, want once", n)
	}
	if n := hook.Count("question-asked", old); n != 0 {
		t.Errorf("a question asked before the launch was replayed")
	}
	hook.Mu.Lock()
	for _, b := range hook.Bodies {
		if text, _ := b["text"].(string); text == "" || strings.Contains(text, "<!channel>") {
			t.Errorf("webhook body text %q: want a summary with chat markup escaped", text)
		}
	}
	hook.Mu.Unlock()
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatalf("command sink wrote nothing: %v", err)
	}
	var events []string
	for _, l := range e2etest.Lines(string(b)) {
		var n struct{ ID, Event string }
		if err := json.Unmarshal([]byte(l), &n); err != nil {
			t.Fatalf("command sink stdin line %q: %v", l, err)
		}
		events = append(events, n.Event+" "+n.ID)
	}
	if len(events) != 2 || events[0] != "question-asked "+q || !strings.HasPrefix(events[1], "wave-completed ") {
		t.Errorf("command sink got %q, want the question then the completed wave", events)
	}
	st := r.RunWith(ctx, []string{e2etest.HookEnv + "=" + hook.URL()}, "status", "--lane", "main", "--json")
	doc := r.RunWith(ctx, []string{e2etest.HookEnv + "=" + hook.URL()}, "doctor")
	noSecretUnder(t, r.Root, stdout.String(), stderr.String(), st.Stdout, st.Stderr, doc.Stdout, doc.Stderr)
	var lane state.Lane
	if err := json.Unmarshal([]byte(st.Stdout), &lane); err != nil || lane.Notifications == nil ||
		lane.Notifications.Delivered != 4 || lane.Notifications.Failed != 0 {
		t.Errorf("status --json notifications = %+v (%v), want 4 delivered", lane.Notifications, err)
	}
}

// A sink that fails shows at once in the launch's own lines (no logger
// lines), its deliveries are retried beside the wave and recorded failed,
// status and doctor show the failures, and the end waits out no retry.
// Once the sink delivers again, doctor's warning is gone.
func TestFailingSinkShowsAtOnceAndDoctorsWarningClearsOnceItDelivers(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	hook := newHookReceiver(t, http.StatusInternalServerError)
	r.WithNotify(fmt.Sprintf("  - kind: webhook\n    name: team-chat\n    urlEnv: %s\n  - kind: webhook\n    name: ops\n    urlEnv: NOTIFY_TEST_UNSET_HOOK\n", e2etest.HookEnv))
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 2s")}, e2etest.ClosureAgents()...)...)
	ctx := e2etest.Context(t)
	env := e2etest.HookEnv + "=" + hook.URL()
	cmd := r.LaunchEnv(ctx, env)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.WaitFollowing(1)
	q := r.AskQuestion(0, "q-1", "A1", "Is the schema frozen?")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("launch with a failing sink: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if n := hook.Count("question-asked", q); n < 1 {
		t.Errorf("question-asked POSTed %d times, want at least once", n)
	}
	out := stdout.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\[\d\d:\d\d:\d\d\] notify: sink ops \(webhook\) cannot deliver: \$NOTIFY_TEST_UNSET_HOOK is not set`),
		regexp.MustCompile(`(?m)^\[\d\d:\d\d:\d\d\] notify: sink team-chat could not deliver question-asked: .*500`),
		regexp.MustCompile(`(?m)^\[\d\d:\d\d:\d\d\] notify: sink team-chat did not get question-asked`),
	} {
		if !want.MatchString(out) {
			t.Errorf("the launch's output lacks %s:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "notify: sink team-chat could not deliver question-asked"); n != 1 {
		t.Errorf("the first failed try of question-asked is said %d times, want once:\n%s", n, out)
	}
	if strings.Contains(stdout.String()+stderr.String(), "level=") {
		t.Errorf("logger lines among the launch's own:\n%s\n%s", out, stderr.String())
	}
	// The loop went on while the question's delivery was being retried:
	// the wave's own events fall between its intent and its failure.
	evs := r.Events()
	intent, failed, between := -1, -1, 0
	for i, ev := range evs {
		if ev.EntityType == state.EntityNotification && ev.EntityID == q+"/team-chat" {
			switch ev.Action {
			case state.NotifyIntent:
				intent = i
			case state.NotifyFailed:
				failed = i
			}
		} else if intent >= 0 && failed < 0 && ev.EntityType != state.EntityNotification {
			between++
		}
	}
	if intent < 0 || failed < 0 || between == 0 {
		t.Errorf("intent at %d, failure at %d, %d wave events between: want the wave to go on during the retries", intent, failed, between)
	}
	st := r.RunWith(ctx, []string{env}, "status", "--lane", "main", "--json")
	var lane state.Lane
	if err := json.Unmarshal([]byte(st.Stdout), &lane); err != nil || lane.Notifications == nil || lane.Notifications.Failed != 4 ||
		lane.Notifications.Pending != 0 {
		t.Errorf("status --json notifications = %+v (%v), want 4 failures (2 events × 2 sinks), none owed", lane.Notifications, err)
	}
	text := r.RunWith(ctx, []string{env}, "status", "--lane", "main")
	if !strings.Contains(text.Stdout, "notifications: 4 failed") {
		t.Errorf("status has no notification failure line:\n%s", text.Stdout)
	}
	doc := r.RunWith(ctx, []string{env}, "doctor")
	if !strings.Contains(doc.Stdout, "warn  notify: 4 deliveries failed (lane main) since sink ops, team-chat last delivered") {
		t.Errorf("doctor does not show the failures:\n%s", doc.Stdout)
	}
	noSecretUnder(t, r.Root, stdout.String(), stderr.String(), st.Stdout, text.Stdout, doc.Stdout, doc.Stderr)

	// The hook is fixed and the broken sink removed: the next launch's
	// deliveries clear doctor's warning.
	hook.Mu.Lock()
	hook.Status = http.StatusOK
	hook.Mu.Unlock()
	r.WithNotify(fmt.Sprintf("  - kind: webhook\n    name: team-chat\n    urlEnv: %s\n", e2etest.HookEnv))
	r.WriteWave(1, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	if res := r.RunWith(ctx, []string{env}, "launch", "--lane", "main", "--no-dashboard"); res.Code != 0 || strings.Contains(res.Stdout, "notify:") {
		t.Fatalf("launch after the fix: %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if doc := r.RunWith(ctx, []string{env}, "doctor"); strings.Contains(doc.Stdout, "deliveries failed") {
		t.Errorf("doctor still warns after the sink delivered again:\n%s", doc.Stdout)
	}
}

// A launcher killed with SIGKILL leaves its deliveries in the log: the
// next launch sends what was intended and not confirmed, never what was
// confirmed, and everything once.
func TestKilledLauncherNotifiesNothingTwice(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	hook := newHookReceiver(t, http.StatusOK)
	r.WithNotify(fmt.Sprintf("  - kind: webhook\n    urlEnv: %s\n", e2etest.HookEnv))
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.delay: 6s")}, e2etest.ClosureAgents()...)...)
	env := e2etest.HookEnv + "=" + hook.URL()
	first := r.LaunchEnv(e2etest.Context(t), env)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	r.WaitFollowing(1)
	q1 := r.AskQuestion(0, "q-1", "A1", "first question")
	e2etest.WaitFor(t, "q-1 delivered and recorded", 30*time.Second, func() bool {
		for _, ev := range r.Events() {
			if ev.EntityType == state.EntityNotification && ev.Action == state.NotifyDelivered && strings.HasPrefix(ev.EntityID, q1+"/") {
				return true
			}
		}
		return false
	})
	_ = first.Process.Signal(syscall.SIGKILL)
	_ = first.Wait()
	// The dead notifier's last moments, as a kill -9 leaves them: q-2's
	// intent recorded but never sent; q-3 sent and confirmed.
	q2 := r.AskQuestion(0, "q-2", "A1", "second question")
	q3 := r.AskQuestion(0, "q-3", "A1", "third question")
	for _, rec := range []struct{ id, action string }{{q2, state.NotifyIntent}, {q3, state.NotifyIntent}, {q3, state.NotifyDelivered}} {
		ev := state.NewEvent("main", 0, state.EntityNotification, rec.id+"/webhook-0", rec.action, 0,
			state.Data(state.NotificationData{NoticeID: rec.id, Event: "question-asked", Sink: "webhook-0"}))
		if err := state.Append(r.Layout().EventsPath(), ev); err != nil {
			t.Fatal(err)
		}
	}
	second := r.LaunchEnv(e2etest.Context(t), env)
	var out strings.Builder
	second.Stdout, second.Stderr = &out, &out
	if err := second.Run(); err != nil {
		t.Fatalf("relaunch: %v\n%s", err, out.String())
	}
	for _, c := range []struct {
		event, id string
		want      int
	}{{"question-asked", q1, 1}, {"question-asked", q2, 1}, {"question-asked", q3, 0}, {"wave-completed", "", 1}} {
		if n := hook.Count(c.event, c.id); n != c.want {
			t.Errorf("%s %s delivered %d times, want %d", c.event, c.id, n, c.want)
		}
	}
}
