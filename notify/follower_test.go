package notify

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

const secretPath = "/hooks/SECRET-token-123"

// receiver is a webhook endpoint recording notice ids; hang makes it
// answer only when the request is given up.
type receiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	ids  []string
	code int
	hang bool
}

func newReceiver(t *testing.T, code int) *receiver {
	rc := &receiver{code: code}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n Notice
		_ = json.NewDecoder(r.Body).Decode(&n)
		rc.mu.Lock()
		rc.ids = append(rc.ids, n.ID)
		hang := rc.hang
		rc.mu.Unlock()
		if hang {
			<-r.Context().Done()
			return
		}
		w.WriteHeader(rc.code)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) got() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.ids...)
}

type laneFixture struct {
	t      *testing.T
	layout lanes.Layout
	lane   *config.Lane
}

func newLane(t *testing.T, rc *receiver) *laneFixture {
	root := t.TempDir()
	t.Setenv("NOTIFY_UNIT_HOOK", rc.srv.URL+secretPath)
	return &laneFixture{t: t, layout: lanes.New(root, ".wave", "", "main"),
		lane: &config.Lane{Name: "main", RepoRoot: root, Notify: []config.NotifySink{{Name: "hook", Kind: config.SinkWebhook, URLEnv: "NOTIFY_UNIT_HOOK"}}}}
}

func (f *laneFixture) append(entity, action string) string {
	ev := state.NewEvent("main", 1, entity, "e", action, 1, map[string]any{"agentId": "A1", "text": "q"})
	if err := state.Append(f.layout.EventsPath(), ev); err != nil {
		f.t.Fatal(err)
	}
	return "lane-main-" + ev.ID
}

func (f *laneFixture) follow() *Follower {
	fl, err := FollowLane(f.layout, f.lane, Options{Backoff: func(int) time.Duration { return time.Millisecond }})
	if err != nil || fl == nil {
		f.t.Fatalf("FollowLane: %v", err)
	}
	return fl
}

func (f *laneFixture) actions() []string {
	evs, _, _ := state.ReadEvents(f.layout.EventsPath())
	var out []string
	for _, ev := range evs {
		if ev.EntityType == state.EntityNotification {
			out = append(out, ev.Action)
		}
	}
	return out
}

// waitAction waits until the lane log holds a notification record of action.
func (f *laneFixture) waitAction(action string) {
	f.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Contains(f.actions(), action) {
		if time.Now().After(deadline) {
			f.t.Fatalf("no %s record within 30s: %v", action, f.actions())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLaneFollowerTellsOnlyWhatHappensWhileItFollows(t *testing.T) {
	rc := newReceiver(t, 200)
	f := newLane(t, rc)
	old := f.append(EntityQuestion, "asked")
	fl := f.follow()
	fresh := f.append(EntityQuestion, "asked")
	f.append(state.EntityAgentRun, "started") // not news
	fl.Stop(DefaultFlush)
	if got := rc.got(); len(got) != 1 || got[0] != fresh {
		t.Fatalf("delivered %v, want only %s (not %s, from before)", got, fresh, old)
	}
	if a := strings.Join(f.actions(), " "); a != "following intent delivered stopped" {
		t.Errorf("notification records %q", a)
	}
	// A clean stop owes nothing: the next follower starts at the end.
	fl = f.follow()
	fl.Stop(DefaultFlush)
	if got := rc.got(); len(got) != 1 {
		t.Errorf("a second follower delivered again: %v", got)
	}
}

func TestDeliveryCutOffAtExitIsOwedToTheNextFollower(t *testing.T) {
	rc := newReceiver(t, 200)
	rc.hang = true
	f := newLane(t, rc)
	fl := f.follow()
	id := f.append(EntityQuestion, "asked")
	fl.Stop(100 * time.Millisecond)
	if a := strings.Join(f.actions(), " "); a != "following intent" {
		t.Fatalf("records after a cut-off flush: %q; want the intent open and no clean stop", a)
	}
	rc.mu.Lock()
	rc.hang = false
	rc.mu.Unlock()
	fl = f.follow()
	fl.Stop(DefaultFlush)
	if got := rc.got(); len(got) != 2 || got[0] != id || got[1] != id {
		t.Fatalf("deliveries %v: want the cut-off one sent again, same id", got)
	}
	if a := strings.Join(f.actions(), " "); a != "following intent following delivered stopped" {
		t.Errorf("records %q", a)
	}
}

func TestWebhookFailuresNeverCarryTheURL(t *testing.T) {
	rc := newReceiver(t, 500)
	s := Sinks([]config.NotifySink{{Name: "h", Kind: config.SinkWebhook, URLEnv: "X"}}, "", func(string) (string, bool) {
		return rc.srv.URL + secretPath + "?token=SECRET", true
	})[0]
	err := s.Send(context.Background(), Notice{ID: "n1", Event: WaveCompleted})
	if err == nil || !strings.Contains(err.Error(), "500") || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("500: %v", err)
	}
	rc.srv.Close() // connection refused now
	err = s.Send(context.Background(), Notice{ID: "n1"})
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("refused: %v", err)
	}
	unset := Sinks([]config.NotifySink{{Name: "h", Kind: config.SinkWebhook, URLEnv: "X"}}, "", func(string) (string, bool) { return "", false })[0]
	if err := unset.Send(context.Background(), Notice{}); err == nil || !strings.Contains(err.Error(), "X is not set") {
		t.Errorf("unset: %v", err)
	}
}

func TestCommandSinkReadsTheNoticeOnStdin(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "got.json")
	script := filepath.Join(dir, "sink.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat > \"$1\"\necho \"$WAVE_NOTIFY_EVENT\" >> \"$1.event\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := Sinks([]config.NotifySink{{Name: "c", Kind: config.SinkCommand, Argv: []string{script, out}}}, dir, nil)[0]
	if err := s.Send(context.Background(), Notice{ID: "n1", Event: IssueMerged, Summary: "merged; $(rm -rf /)"}); err != nil {
		t.Fatal(err)
	}
	var n Notice
	b, _ := os.ReadFile(out)
	if err := json.Unmarshal(b, &n); err != nil || n.ID != "n1" || n.Summary != "merged; $(rm -rf /)" {
		t.Fatalf("stdin %q: %v", b, err)
	}
	if ev, _ := os.ReadFile(out + ".event"); strings.TrimSpace(string(ev)) != IssueMerged {
		t.Errorf("WAVE_NOTIFY_EVENT = %q", ev)
	}
	failing := Sinks([]config.NotifySink{{Name: "c", Kind: config.SinkCommand, Argv: []string{"sh", "-c", "echo broken >&2; exit 3"}}}, dir, nil)[0]
	if err := failing.Send(context.Background(), Notice{}); err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("failing command: %v", err)
	}
}

func TestAFailingSinkIsTriedFourTimesThenRecordedFailed(t *testing.T) {
	rc := newReceiver(t, 503)
	f := newLane(t, rc)
	fl := f.follow()
	id := f.append(state.EntityWaveRun, state.WaveFailed)
	f.waitAction(state.NotifyFailed) // the retries happen while the process runs
	fl.Stop(DefaultFlush)
	if got := rc.got(); len(got) != 4 {
		t.Fatalf("%d tries, want 4 (1 + 3 retries)", len(got))
	}
	evs, _, _ := state.ReadEvents(f.layout.EventsPath())
	n := state.ReduceNotifications(evs)
	if n == nil || n.Failed != 1 || n.Failures[0].NoticeID != id || n.Failures[0].Tries != 4 || !strings.Contains(n.Failures[0].Error, "503") {
		t.Fatalf("tally %+v", n)
	}
}

func TestDoctorCheckSaysWhyASinkCannotDeliver(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no notify-send, no commands
	env := func(k string) (string, bool) {
		return map[string]string{"SET": "https://hooks.example/SECRET"}[k], k == "SET"
	}
	for _, tc := range []struct {
		sink config.NotifySink
		want string
	}{
		{config.NotifySink{Kind: config.SinkDesktop}, "notify-send is not on PATH"},
		{config.NotifySink{Kind: config.SinkWebhook, URLEnv: "UNSET"}, "$UNSET is not set"},
		{config.NotifySink{Kind: config.SinkWebhook, URLEnv: "SET"}, ""},
		{config.NotifySink{Kind: config.SinkCommand, Argv: []string{"no-such-notifier"}}, "no-such-notifier is not on PATH"},
	} {
		got := Check(tc.sink, env)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) || strings.Contains(got, "SECRET") {
			t.Errorf("%s sink: %q, want %q", tc.sink.Kind, got, tc.want)
		}
	}
}

func TestARotatedLaneLogLosesNoEventAndRepeatsNone(t *testing.T) {
	rc := newReceiver(t, 200)
	f := newLane(t, rc)
	fl := f.follow()
	before := f.append(EntityQuestion, "asked")
	// state.Append rotates the log at a wave run's start past 8 MiB.
	if err := os.Rename(f.layout.EventsPath(), f.layout.EventsPath()+".1"); err != nil {
		t.Fatal(err)
	}
	after := f.append(EntityQuestion, "asked")
	fl.Stop(DefaultFlush)
	got := rc.got()
	if len(got) != 2 || !slices.Contains(got, before) || !slices.Contains(got, after) {
		t.Fatalf("delivered %v, want %s and %s once each", got, before, after)
	}
}
