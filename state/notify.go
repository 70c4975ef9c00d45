package state

import (
	"slices"
	"strings"
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
	// Sinks is each sink's record, by name: what doctor warns about.
	Sinks []SinkNotifications `json:"sinks"`
}

// SinkNotifications is one sink's deliveries: FailedSinceDelivered counts
// the failures after its last confirmed delivery (all of them when it
// never delivered), so a sink that delivers again clears what failed
// before.
type SinkNotifications struct {
	Sink                 string `json:"sink"`
	Delivered            int    `json:"delivered"`
	Failed               int    `json:"failed"`
	FailedSinceDelivered int    `json:"failedSinceDelivered"`
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
	if ev.Action == NotifyDelivered || ev.Action == NotifyFailed {
		n.sinkOutcome(ev)
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

// sinkOutcome counts a delivery's outcome for its sink: a delivery
// clears the failures before it.
func (n *noticeFold) sinkOutcome(ev Event) {
	sink, _ := ev.Data["sink"].(string)
	if n.Sinks == nil {
		n.Sinks = map[string]*SinkNotifications{}
	}
	s := n.Sinks[sink]
	if s == nil {
		s = &SinkNotifications{Sink: sink}
		n.Sinks[sink] = s
	}
	if ev.Action == NotifyDelivered {
		s.Delivered++
		s.FailedSinceDelivered = 0
		return
	}
	s.Failed++
	s.FailedSinceDelivered++
}

// Notifications is the tally of the notification events folded; nil when
// there were none.
func (f *Fold) Notifications() *Notifications {
	if f.notices == nil {
		return nil
	}
	out := &Notifications{Failures: slices.Clone(f.notices.Failures), Sinks: []SinkNotifications{}}
	for _, s := range f.notices.Sinks {
		out.Sinks = append(out.Sinks, *s)
	}
	slices.SortFunc(out.Sinks, func(a, b SinkNotifications) int { return strings.Compare(a.Sink, b.Sink) })
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
