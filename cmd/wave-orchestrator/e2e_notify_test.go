package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// hookSecret is the secret part of the fake chat webhook's URL: it must
// appear in no log, record or output.
const hookSecret = "T0SECRET/B0SECRET/xoxSECRETxox"

// hookEnv names the variable the test webhook's URL is passed in.
const hookEnv = "NOTIFY_TEST_HOOK_URL"

// hookReceiver is a chat incoming webhook: it keeps every POST it gets
// (status answers with that code: 200 unless set).
type hookReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
	status int
}

func newHookReceiver(t *testing.T, status int) *hookReceiver {
	h := &hookReceiver{status: status}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/services/"+hookSecret {
			http.Error(w, "wrong hook", http.StatusNotFound)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			http.Error(w, "not json", http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.bodies = append(h.bodies, m)
		h.mu.Unlock()
		w.WriteHeader(h.status)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) url() string { return h.srv.URL + "/services/" + hookSecret }

// count is how many POSTs carried event (and, when id is set, that id).
func (h *hookReceiver) count(event, id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, b := range h.bodies {
		if b["event"] == event && (id == "" || b["id"] == id) {
			n++
		}
	}
	return n
}

// withNotify writes the test config with a notify section.
func (r *testRepo) withNotify(sinks string) {
	r.write("wave.config.yaml", testConfig+"notify:\n"+sinks)
}

// askQuestion appends a question-asked event to the lane's log, as the
// launcher does when an agent asks (contracts §2), and returns its id.
func (r *testRepo) askQuestion(wave int, id, agent, text string) string {
	r.t.Helper()
	ev := state.NewEvent("main", wave, "question", id, "asked", 1,
		map[string]any{"agentId": agent, "attempt": 1, "text": text, "blocking": true})
	if err := state.Append(r.layout().EventsPath(), ev); err != nil {
		r.t.Fatal(err)
	}
	return "lane-main-" + ev.ID
}

// waitFollowing waits until a launcher's notifier follows the lane log.
func (r *testRepo) waitFollowing(n int) {
	r.t.Helper()
	waitFor(r.t, fmt.Sprintf("notifier start #%d", n), 30*time.Second, func() bool {
		evs, _, _ := state.ReadEvents(r.layout().EventsPath())
		seen := 0
		for _, ev := range evs {
			if ev.EntityType == state.EntityNotification && ev.Action == state.NotifyFollowing {
				seen++
			}
		}
		return seen >= n
	})
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

func (r *testRepo) launchEnv(ctx context.Context, env ...string) *exec.Cmd {
	cmd := r.command(ctx, "launch", "--lane", "main", "--no-dashboard")
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// A person's webhook (and command) is told once that an agent asked, and
// once that the wave completed; history from before the launch is not
// replayed, and the webhook's URL is nowhere to be read.
func TestWebhookHearsOneQuestionAndOneWaveCompleted(t *testing.T) {
	r := newRepo(t)
	hook := newHookReceiver(t, http.StatusOK)
	got := filepath.Join(t.TempDir(), "command-sink.jsonl")
	r.write("sink.sh", "#!/bin/sh\ncat >> \"$1\"\n")
	r.withNotify(fmt.Sprintf("  - kind: webhook\n    urlEnv: %s\n  - kind: command\n    argv: [sh, sink.sh, %s]\n", hookEnv, got))
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.delay: 3s")}, closureAgents()...)...)
	old := r.askQuestion(0, "q-last-week", "A1", "asked before this launch, by nobody's launcher")

	ctx := ctxFor(t)
	cmd := r.launchEnv(ctx, hookEnv+"="+hook.url())
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.waitFollowing(1)
	q := r.askQuestion(0, "q-1", "A1", "Which <!channel> port should the API use?")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("launch: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if n := hook.count("question-asked", q); n != 1 {
		t.Errorf("webhook got question-asked %d times, want once", n)
	}
	if n := hook.count("wave-completed", ""); n != 1 {
		t.Errorf("webhook got wave-completed %d times, want once", n)
	}
	if n := hook.count("question-asked", old); n != 0 {
		t.Errorf("a question asked before the launch was replayed")
	}
	hook.mu.Lock()
	for _, b := range hook.bodies {
		if text, _ := b["text"].(string); text == "" || strings.Contains(text, "<!channel>") {
			t.Errorf("webhook body text %q: want a summary with chat markup escaped", text)
		}
	}
	hook.mu.Unlock()
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatalf("command sink wrote nothing: %v", err)
	}
	var events []string
	for _, l := range lines(string(b)) {
		var n struct{ ID, Event string }
		if err := json.Unmarshal([]byte(l), &n); err != nil {
			t.Fatalf("command sink stdin line %q: %v", l, err)
		}
		events = append(events, n.Event+" "+n.ID)
	}
	if len(events) != 2 || events[0] != "question-asked "+q || !strings.HasPrefix(events[1], "wave-completed ") {
		t.Errorf("command sink got %q, want the question then the completed wave", events)
	}
	st := r.runWith(ctx, []string{hookEnv + "=" + hook.url()}, "status", "--lane", "main", "--json")
	doc := r.runWith(ctx, []string{hookEnv + "=" + hook.url()}, "doctor")
	noSecretUnder(t, r.root, stdout.String(), stderr.String(), st.stdout, st.stderr, doc.stdout, doc.stderr)
	var lane state.Lane
	if err := json.Unmarshal([]byte(st.stdout), &lane); err != nil || lane.Notifications == nil ||
		lane.Notifications.Delivered != 4 || lane.Notifications.Failed != 0 {
		t.Errorf("status --json notifications = %+v (%v), want 4 delivered", lane.Notifications, err)
	}
}

// A sink that fails is tried once and retried 3 times, the failure is
// recorded and shown by status and doctor, and the wave goes on meanwhile:
// launch still exits 0.
func TestFailingSinkIsRetriedRecordedAndShownWhileTheWaveGoesOn(t *testing.T) {
	r := newRepo(t)
	hook := newHookReceiver(t, http.StatusInternalServerError)
	r.withNotify(fmt.Sprintf("  - kind: webhook\n    name: team-chat\n    urlEnv: %s\n", hookEnv))
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.delay: 2s")}, closureAgents()...)...)
	ctx := ctxFor(t)
	env := hookEnv + "=" + hook.url()
	cmd := r.launchEnv(ctx, env)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.waitFollowing(1)
	q := r.askQuestion(0, "q-1", "A1", "Is the schema frozen?")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("launch with a failing sink: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if n := hook.count("question-asked", q); n != 4 {
		t.Errorf("question-asked POSTed %d times, want 4 (a try and 3 retries)", n)
	}
	if n := hook.count("wave-completed", ""); n != 4 {
		t.Errorf("wave-completed POSTed %d times, want 4", n)
	}
	// The loop went on while the question's delivery was being retried:
	// the wave's own events fall between its intent and its failure.
	evs := r.events()
	intent, failed, between := -1, -1, 0
	for i, ev := range evs {
		if ev.EntityType == state.EntityNotification && strings.HasPrefix(ev.EntityID, q+"/") {
			switch ev.Action {
			case state.NotifyIntent:
				intent = i
			case state.NotifyFailed:
				failed = i
				if tries, _ := ev.Data["tries"].(float64); tries != 4 {
					t.Errorf("failure records %v tries, want 4", ev.Data["tries"])
				}
			}
		} else if intent >= 0 && failed < 0 && ev.EntityType != state.EntityNotification {
			between++
		}
	}
	if intent < 0 || failed < 0 || between == 0 {
		t.Errorf("intent at %d, failure at %d, %d wave events between: want the wave to go on during the retries", intent, failed, between)
	}
	st := r.runWith(ctx, []string{env}, "status", "--lane", "main", "--json")
	var lane state.Lane
	if err := json.Unmarshal([]byte(st.stdout), &lane); err != nil || lane.Notifications == nil || lane.Notifications.Failed != 2 ||
		len(lane.Notifications.Failures) != 2 || lane.Notifications.Failures[0].Sink != "team-chat" ||
		!strings.Contains(lane.Notifications.Failures[0].Error, "500") {
		t.Errorf("status --json notifications = %+v (%v), want 2 failures of team-chat naming the 500", lane.Notifications, err)
	}
	text := r.runWith(ctx, []string{env}, "status", "--lane", "main")
	if !strings.Contains(text.stdout, "notifications: 2 failed") {
		t.Errorf("status has no notification failure line:\n%s", text.stdout)
	}
	doc := r.runWith(ctx, []string{env}, "doctor")
	if !strings.Contains(doc.stdout, "warn  notify: 2 deliveries failed") || !strings.Contains(doc.stdout, "team-chat") {
		t.Errorf("doctor does not show the failures:\n%s", doc.stdout)
	}
	noSecretUnder(t, r.root, stdout.String(), stderr.String(), st.stdout, text.stdout, doc.stdout, doc.stderr)
}

// A launcher killed with SIGKILL leaves its deliveries in the log: the
// next launch sends what was intended and not confirmed, never what was
// confirmed, and everything once.
func TestKilledLauncherNotifiesNothingTwice(t *testing.T) {
	r := newRepo(t)
	hook := newHookReceiver(t, http.StatusOK)
	r.withNotify(fmt.Sprintf("  - kind: webhook\n    urlEnv: %s\n", hookEnv))
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.delay: 6s")}, closureAgents()...)...)
	env := hookEnv + "=" + hook.url()
	first := r.launchEnv(ctxFor(t), env)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	r.waitFollowing(1)
	q1 := r.askQuestion(0, "q-1", "A1", "first question")
	waitFor(t, "q-1 delivered and recorded", 30*time.Second, func() bool {
		for _, ev := range r.events() {
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
	q2 := r.askQuestion(0, "q-2", "A1", "second question")
	q3 := r.askQuestion(0, "q-3", "A1", "third question")
	for _, rec := range []struct{ id, action string }{{q2, state.NotifyIntent}, {q3, state.NotifyIntent}, {q3, state.NotifyDelivered}} {
		ev := state.NewEvent("main", 0, state.EntityNotification, rec.id+"/webhook-0", rec.action, 0,
			state.Data(state.NotificationData{NoticeID: rec.id, Event: "question-asked", Sink: "webhook-0"}))
		if err := state.Append(r.layout().EventsPath(), ev); err != nil {
			t.Fatal(err)
		}
	}
	second := r.launchEnv(ctxFor(t), env)
	var out strings.Builder
	second.Stdout, second.Stderr = &out, &out
	if err := second.Run(); err != nil {
		t.Fatalf("relaunch: %v\n%s", err, out.String())
	}
	for _, c := range []struct {
		event, id string
		want      int
	}{{"question-asked", q1, 1}, {"question-asked", q2, 1}, {"question-asked", q3, 0}, {"wave-completed", "", 1}} {
		if n := hook.count(c.event, c.id); n != c.want {
			t.Errorf("%s %s delivered %d times, want %d", c.event, c.id, n, c.want)
		}
	}
}
