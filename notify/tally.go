package notify

import (
	"os/exec"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// RunNotifications tallies the notification events of a backlog run's
// log as state.ReduceNotifications does the lane's; nil when none.
func RunNotifications(evs []backlog.Event) *state.Notifications {
	var lane []state.Event
	for _, ev := range evs {
		if (ev.Kind != backlog.EvNotifyIntent && ev.Kind != backlog.EvNotified) || ev.Notice == nil {
			continue
		}
		action := state.NotifyIntent
		if ev.Kind == backlog.EvNotified {
			action = state.NotifyDelivered
			if ev.Outcome == backlog.NotifyFailed {
				action = state.NotifyFailed
			}
		}
		n := ev.Notice
		lane = append(lane, state.Event{EntityType: state.EntityNotification, EntityID: n.ID + "/" + n.Sink, Action: action,
			RecordedAt: ev.At, Data: state.Data(state.NotificationData{NoticeID: n.ID, Event: n.Event, Sink: n.Sink, Tries: n.Tries, Error: n.Error})})
	}
	return state.ReduceNotifications(lane)
}

// Check is one sink's readiness, for doctor: "" when it can deliver, else
// why not. It reads the webhook's variable for presence only.
func Check(s config.NotifySink, env Env) string {
	switch s.Kind {
	case config.SinkWebhook:
		if v, ok := env(s.URLEnv); !ok || v == "" {
			return "$" + s.URLEnv + " is not set: the webhook cannot be reached"
		}
	case config.SinkDesktop:
		if _, err := exec.LookPath("notify-send"); err != nil {
			return "notify-send is not on PATH: desktop notifications are not shown"
		}
	case config.SinkCommand:
		if _, err := exec.LookPath(s.Argv[0]); err != nil {
			return s.Argv[0] + " is not on PATH"
		}
	}
	return ""
}
