package state

import (
	"testing"
	"time"
)

// Each sink's failures count from its last delivery: a sink that
// delivers again clears what failed before (what doctor warns about),
// while the totals keep every outcome once.
func TestASinkThatDeliversAgainClearsItsEarlierFailures(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var evs []Event
	out := func(notice, sink, action string) {
		ev := NewEvent("main", 0, EntityNotification, notice+"/"+sink, action, 0,
			Data(NotificationData{NoticeID: notice, Event: "wave-completed", Sink: sink, Tries: 4, Error: "503"}))
		ev.RecordedAt = at
		at = at.Add(time.Second)
		evs = append(evs, ev)
	}
	out("n1", "chat", NotifyFailed)
	out("n2", "chat", NotifyFailed)
	out("n1", "mail", NotifyFailed)
	out("n3", "chat", NotifyDelivered)
	out("n3", "chat", NotifyFailed) // an outcome is final: not counted
	out("n4", "chat", NotifyFailed)
	n := ReduceNotifications(evs)
	if n.Failed != 4 || n.Delivered != 1 || len(n.Sinks) != 2 {
		t.Fatalf("tally %+v", n)
	}
	want := []SinkNotifications{
		{Sink: "chat", Delivered: 1, Failed: 3, FailedSinceDelivered: 1},
		{Sink: "mail", Failed: 1, FailedSinceDelivered: 1},
	}
	for i, s := range n.Sinks {
		if s != want[i] {
			t.Errorf("sink %d: %+v, want %+v", i, s, want[i])
		}
	}
}
