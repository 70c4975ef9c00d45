package notify

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// lines collects what a follower says, as the launch prints it.
type lines struct {
	mu  sync.Mutex
	got []string
}

func (l *lines) say(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, s)
}

func (l *lines) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.got, "\n")
}

func (l *lines) waitFor(t *testing.T, part string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(l.all(), part) {
		if time.Now().After(deadline) {
			t.Fatalf("the follower never said %q; it said:\n%s", part, l.all())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A sink that cannot deliver is said at the start, a failed try as it
// fails (in the process's own lines, not the logger's), and the end waits
// out no backoff: Stop records the failure so far and returns.
func TestAFailingSinkShowsAtOnceAndTheEndWaitsOutNoBackoff(t *testing.T) {
	rc := newReceiver(t, 503)
	f := newLane(t, rc)
	f.lane.Notify = append(f.lane.Notify, config.NotifySink{Name: "chat", Kind: config.SinkWebhook, URLEnv: "NOTIFY_UNIT_UNSET_HOOK"})
	said := &lines{}
	// A retry would wait an hour: an end that waited for it would never come.
	fl, err := FollowLane(f.layout, f.lane, Options{Say: said.say, Backoff: func(int) time.Duration { return time.Hour }})
	if err != nil {
		t.Fatal(err)
	}
	said.waitFor(t, "notify: sink chat (webhook) cannot deliver: $NOTIFY_UNIT_UNSET_HOOK is not set")
	f.append(state.EntityWaveRun, state.WaveCompleted)
	said.waitFor(t, "notify: sink hook could not deliver wave-completed")
	if !strings.Contains(said.all(), "503") {
		t.Errorf("the failure line does not say why:\n%s", said.all())
	}
	stopped := make(chan struct{})
	go func() { fl.Stop(time.Hour); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("Stop waits out the failing sink's backoff")
	}
	evs, _, _ := state.ReadEvents(f.layout.EventsPath())
	n := state.ReduceNotifications(evs)
	if n == nil || n.Pending != 0 || n.Failed != 2 {
		t.Fatalf("tally %+v: want both sinks' deliveries recorded failed, none owed", n)
	}
	for _, fail := range n.Failures {
		if fail.Sink == "hook" && (fail.Tries != 1 || !strings.Contains(fail.Error, "503")) {
			t.Errorf("hook's failure %+v: want 1 try, the 503", fail)
		}
	}
	if !strings.Contains(said.all(), "notify: sink hook did not get wave-completed (1 try)") {
		t.Errorf("the final failure is not said:\n%s", said.all())
	}
}

// At exit a sink whose last delivery failed every try is not tried again:
// the notice is recorded as not sent, so status and doctor show it, and
// nothing waits on the sink.
func TestAtExitASinkThatIsDownIsNotTriedAgain(t *testing.T) {
	rc := newReceiver(t, 503)
	f := newLane(t, rc)
	said := &lines{}
	fl, err := FollowLane(f.layout, f.lane, Options{Say: said.say, Backoff: func(int) time.Duration { return time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	f.append(state.EntityWaveRun, state.WaveFailed)
	f.waitAction(state.NotifyFailed)
	tried := len(rc.got())
	fl.mu.Lock()
	_, down := fl.down["hook"]
	fl.mu.Unlock()
	if !down || tried != 4 {
		t.Fatalf("after 4 failed tries the sink is down=%v (tries %d)", down, tried)
	}
	close(fl.flushing) // as Stop does first
	fl.deliver(fl.sinks[0], record{Notice: Notice{ID: "late", Event: WaveCompleted}, Sink: "hook"})
	if got := len(rc.got()); got != tried {
		t.Fatalf("the down sink was tried %d more times at exit", got-tried)
	}
	evs, _, _ := state.ReadEvents(f.layout.EventsPath())
	n := state.ReduceNotifications(evs)
	if n.Failed != 2 || !slices.ContainsFunc(n.Failures, func(x state.NotificationFailure) bool {
		return x.NoticeID == "late" && x.Tries == 0 && strings.Contains(x.Error, "not sent at exit")
	}) {
		t.Fatalf("tally %+v: want the late notice recorded not sent", n)
	}
	if !strings.Contains(said.all(), "wave-completed not sent at exit") {
		t.Errorf("not said:\n%s", said.all())
	}
	fl.flushing = make(chan struct{}) // Stop closes it
	fl.Stop(DefaultFlush)
}
