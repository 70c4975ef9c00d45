package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/notify"
	"github.com/wave-orchestrator/wave-orchestrator/preflight"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// notifyLine is status's line about notifications: shown only when some
// failed or are owed (intended, not confirmed), "" otherwise.
func notifyLine(n *state.Notifications) string {
	if n == nil || n.Failed == 0 && n.Pending == 0 {
		return ""
	}
	s := fmt.Sprintf("notifications: %d failed, %d delivered, %d owed", n.Failed, n.Delivered, n.Pending)
	if k := len(n.Failures); k > 0 {
		f := n.Failures[k-1]
		s += fmt.Sprintf("; latest failure: sink %s, %s, after %d tries: %s", f.Sink, f.Event, f.Tries, f.Error)
	}
	return termtext.EscapeLines(s) + "\n"
}

// notifyFindings is doctor's word on the notify sinks: each one's
// readiness, and the deliveries that failed on the lane and in its newest
// backlog run.
func notifyFindings(e *laneEnv) []preflight.Finding {
	var fs []preflight.Finding
	for _, s := range e.lane.Notify {
		what := "every event"
		if len(s.Events) > 0 {
			what = strings.Join(s.Events, ", ")
		}
		if why := notify.Check(s, os.LookupEnv); why != "" {
			fs = append(fs, preflight.Finding{Level: preflight.LevelWarn, Check: "notify", Msg: fmt.Sprintf("notify: sink %s (%s): %s", s.Name, s.Kind, why)})
		} else {
			fs = append(fs, preflight.Finding{Level: preflight.LevelOK, Check: "notify", Msg: fmt.Sprintf("notify: sink %s (%s): %s", s.Name, s.Kind, what)})
		}
	}
	configured := map[string]bool{}
	for _, s := range e.lane.Notify {
		configured[s.Name] = true
	}
	if evs, _, err := state.ReadEvents(e.layout.EventsPath()); err == nil {
		fs = append(fs, failureFinding("lane "+e.lane.Name, state.ReduceNotifications(evs), configured)...)
	}
	if dirs, err := runlog.List(e.layout.StateDir); err == nil && len(dirs) > 0 {
		dir := dirs[len(dirs)-1]
		fs = append(fs, failureFinding("backlog run "+filepath.Base(dir), runNotifications(dir), configured)...)
	}
	return fs
}

// failureFinding warns about the deliveries that failed since each sink
// still configured last delivered: a sink that delivers again (or that is
// removed from notify) clears its earlier failures (docs/state.md).
func failureFinding(where string, n *state.Notifications, configured map[string]bool) []preflight.Finding {
	if n == nil {
		return nil
	}
	failed, sinks := 0, []string{}
	for _, s := range n.Sinks {
		if configured[s.Sink] && s.FailedSinceDelivered > 0 {
			failed += s.FailedSinceDelivered
			sinks = append(sinks, s.Sink)
		}
	}
	if failed == 0 {
		return nil
	}
	msg := fmt.Sprintf("notify: %d deliveries failed (%s) since sink %s last delivered", failed, where, strings.Join(sinks, ", "))
	for i := len(n.Failures) - 1; i >= 0; i-- {
		if f := n.Failures[i]; slices.Contains(sinks, f.Sink) {
			msg += fmt.Sprintf("; latest: sink %s, %s, after %d tries: %s", f.Sink, f.Event, f.Tries, f.Error)
			break
		}
	}
	return []preflight.Finding{{Level: preflight.LevelWarn, Check: "notify", Msg: msg,
		Fix: "fix the sink (its check above says what it lacks); this warning clears once it delivers again, or when it is removed from notify"}}
}

// withNotifications is `backlog status --json`: the run's snapshot and
// the tally of its notifications (null when none).
type withNotifications struct {
	backlog.StatusView
	Notifications *state.Notifications `json:"notifications"`
}

// runNotifications tallies a backlog run's notification events.
func runNotifications(dir string) *state.Notifications {
	evs, _, err := jsonfile.ReadLines[backlog.Event](filepath.Join(dir, runlog.EventsFile))
	if err != nil {
		return nil
	}
	return notify.RunNotifications(evs)
}
