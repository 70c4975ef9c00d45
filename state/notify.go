package state

import "time"

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
	var out *Notifications
	state := map[string]string{}
	for _, ev := range evs {
		if ev.EntityType != EntityNotification {
			continue
		}
		if out == nil {
			out = &Notifications{Failures: []NotificationFailure{}}
		}
		switch ev.Action {
		case NotifyIntent, NotifyDelivered, NotifyFailed:
			if state[ev.EntityID] == NotifyDelivered || state[ev.EntityID] == NotifyFailed {
				continue // an outcome is final
			}
			state[ev.EntityID] = ev.Action
		}
		if ev.Action == NotifyFailed {
			var d NotificationData
			decode(ev.Data, &d)
			out.Failures = append(out.Failures, NotificationFailure{At: ev.RecordedAt, NoticeID: d.NoticeID,
				Event: d.Event, Sink: d.Sink, Tries: d.Tries, Error: d.Error})
			if len(out.Failures) > failuresKept {
				out.Failures = out.Failures[1:]
			}
		}
	}
	for _, s := range state {
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
