package state

import (
	"slices"
	"time"
)

// EntityNotification is the notifier's own record in the lane's log
// (package notify): a delivery intent before a sink is told about an
// event, its outcome after, and the markers of a follower's life. The
// wave reducer skips these events: they are about telling people, not
// about any wave.
const EntityNotification = "notification"

// Actions of notification events.
const (
	NotifyFollowing = "following" // a follower started; its scope begins here
	NotifyStopped   = "stopped"   // it stopped with every delivery of its scope confirmed
	NotifyIntent    = "intent"    // about to tell sink data.sink about data.noticeId
	NotifyDelivered = "delivered"
	NotifyFailed    = "failed" // every try failed; data.error says why
)

// NotificationData is the data of intent, delivered and failed events.
type NotificationData struct {
	NoticeID string `json:"noticeId"`
	Event    string `json:"event"`
	Sink     string `json:"sink"`
	Tries    int    `json:"tries,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Notifications is what `status --json` says of the lane's notifications:
// how many deliveries were confirmed, failed, or are intended and not yet
// confirmed, and the latest failures.
type Notifications struct {
	Delivered int                   `json:"delivered"`
	Failed    int                   `json:"failed"`
	Pending   int                   `json:"pending"`
	Failures  []NotificationFailure `json:"failures"`
}

// NotificationFailure is one delivery that failed every try.
type NotificationFailure struct {
	At       time.Time `json:"at"`
	NoticeID string    `json:"noticeId"`
	Event    string    `json:"event"`
	Sink     string    `json:"sink"`
	Tries    int       `json:"tries"`
	Error    string    `json:"error"`
}

// failuresKept bounds Notifications.Failures to the latest ones.
const failuresKept = 5

// ReduceNotifications tallies the notification events of a log; nil when
// there are none (nothing configured, or nothing happened yet).
func ReduceNotifications(evs []Event) *Notifications {
	var f Fold
	for _, ev := range evs {
		if ev.EntityType == EntityNotification {
			f.applyNotice(ev)
		}
	}
	return f.Notifications()
}

// applyNotice takes a notification event.
func (f *Fold) applyNotice(ev Event) {
	if f.notices == nil {
		f.notices = &noticeFold{State: map[string]string{}, Failures: []NotificationFailure{}}
	}
	n := f.notices
	switch ev.Action {
	case NotifyIntent, NotifyDelivered, NotifyFailed:
		if n.State[ev.EntityID] == NotifyDelivered || n.State[ev.EntityID] == NotifyFailed {
			return // an outcome is final
		}
		n.State[ev.EntityID] = ev.Action
	}
	if ev.Action == NotifyFailed {
		var d NotificationData
		decode(ev.Data, &d)
		n.Failures = append(n.Failures, NotificationFailure{At: ev.RecordedAt, NoticeID: d.NoticeID,
			Event: d.Event, Sink: d.Sink, Tries: d.Tries, Error: d.Error})
		if len(n.Failures) > failuresKept {
			n.Failures = n.Failures[1:]
		}
	}
}

// Notifications is the tally of the notification events folded; nil when
// there were none.
func (f *Fold) Notifications() *Notifications {
	if f.notices == nil {
		return nil
	}
	out := &Notifications{Failures: slices.Clone(f.notices.Failures)}
	for _, s := range f.notices.State {
		switch s {
		case NotifyDelivered:
			out.Delivered++
		case NotifyFailed:
			out.Failed++
		case NotifyIntent:
			out.Pending++
		}
	}
	return out
}
