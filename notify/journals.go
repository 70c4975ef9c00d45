package notify

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// Record actions, spelt as the lane log spells them.
const (
	followingMarker = state.NotifyFollowing
	stoppedMarker   = state.NotifyStopped
	intentAction    = state.NotifyIntent
	deliveredAction = state.NotifyDelivered
	failedAction    = state.NotifyFailed
)

// FollowLane starts the follower of a lane's events.jsonl, run inside
// the launcher holding the lane (one at a time). It returns nil, nil when
// no sink is configured.
func FollowLane(l lanes.Layout, lane *config.Lane, o Options) (*Follower, error) {
	sinks := Sinks(lane.Notify, lane.RepoRoot, nil)
	if len(sinks) == 0 {
		return nil, nil
	}
	f := newFollower(&laneJournal{file: l.EventsPath(), lane: lane.Name, project: lane.Project}, sinks, o)
	if err := f.start(); err != nil {
		return nil, fmt.Errorf("notify: lane %s: %w", lane.Name, err)
	}
	f.checkSinks(lane.Notify)
	return f, nil
}

// FollowRun starts the follower of a backlog run's own log (runDir's
// events.jsonl), run inside the supervisor driving that run. It returns
// nil, nil when no sink is configured.
func FollowRun(runDir string, lane *config.Lane, o Options) (*Follower, error) {
	sinks := Sinks(lane.Notify, lane.RepoRoot, nil)
	if len(sinks) == 0 {
		return nil, nil
	}
	f := newFollower(&runJournal{file: filepath.Join(runDir, "events.jsonl"), lane: lane.Name, project: lane.Project, run: filepath.Base(runDir)}, sinks, o)
	if err := f.start(); err != nil {
		return nil, fmt.Errorf("notify: backlog run %s: %w", runDir, err)
	}
	f.checkSinks(lane.Notify)
	return f, nil
}

// checkSinks says at the start which sinks cannot deliver (doctor's
// check: a webhook's variable unset, a command not on PATH), rather than
// leave it to the first failed delivery.
func (f *Follower) checkSinks(cfg []config.NotifySink) {
	for _, s := range cfg {
		if why := Check(s, os.LookupEnv); why != "" {
			f.say("notify: sink %s (%s) cannot deliver: %s", s.Name, s.Kind, why)
		}
	}
}

// laneJournal is the lane's events.jsonl: notification events.
type laneJournal struct {
	file, lane, project string
}

func (j *laneJournal) path() string   { return j.file }
func (j *laneJournal) rotates() bool  { return true }
func (j *laneJournal) scopeAll() bool { return false }

func (j *laneJournal) decode(line []byte) entry {
	var ev state.Event
	if json.Unmarshal(line, &ev) != nil {
		return entry{} // a torn line: state reports it
	}
	if ev.EntityType == state.EntityNotification {
		switch ev.Action {
		case followingMarker, stoppedMarker:
			return entry{marker: ev.Action}
		}
		var d state.NotificationData
		b, _ := json.Marshal(ev.Data)
		_ = json.Unmarshal(b, &d)
		return entry{rec: &record{Action: ev.Action, Notice: Notice{ID: d.NoticeID, Event: d.Event}, Sink: d.Sink, Tries: d.Tries, Err: d.Error}}
	}
	if n, ok := FromLane(j.project, ev); ok {
		return entry{notice: &n}
	}
	return entry{}
}

func (j *laneJournal) record(r record) error {
	wave := 0
	if r.Notice.Wave != nil {
		wave = *r.Notice.Wave
	}
	return j.append(wave, r.key(), r.Action, state.NotificationData{NoticeID: r.Notice.ID, Event: r.Notice.Event,
		Sink: r.Sink, Tries: r.Tries, Error: r.Err})
}

func (j *laneJournal) marker(action string) error {
	return j.append(0, "notify", action, nil)
}

func (j *laneJournal) append(wave int, id, action string, data any) error {
	var m map[string]any
	if data != nil {
		m = state.Data(data)
	}
	ev := state.NewEvent(j.lane, wave, state.EntityNotification, id, action, 0, m)
	ev.Source, ev.Actor = "notify", "notify"
	return state.Append(j.file, ev)
}

// runJournal is a backlog run's events.jsonl: notify_* events.
type runJournal struct {
	file, lane, project, run string
}

func (j *runJournal) path() string   { return j.file }
func (j *runJournal) rotates() bool  { return false }
func (j *runJournal) scopeAll() bool { return true }

func (j *runJournal) decode(line []byte) entry {
	var ev backlog.Event
	if json.Unmarshal(line, &ev) != nil {
		return entry{}
	}
	switch ev.Kind {
	case backlog.EvNotifyIntent, backlog.EvNotified:
		if ev.Notice == nil {
			return entry{}
		}
		action := intentAction
		if ev.Kind == backlog.EvNotified {
			action = deliveredAction
			if ev.Outcome == backlog.NotifyFailed {
				action = failedAction
			}
		}
		return entry{rec: &record{Action: action, Notice: Notice{ID: ev.Notice.ID, Event: ev.Notice.Event},
			Sink: ev.Notice.Sink, Tries: ev.Notice.Tries, Err: ev.Notice.Error}}
	}
	if n, ok := FromBacklog(j.project, j.lane, j.run, ev); ok {
		return entry{notice: &n}
	}
	return entry{}
}

func (j *runJournal) record(r record) error {
	// Issue stays 0 (the notice names it): the run's reducer then passes
	// over these events without touching the state.
	ev := backlog.Event{At: timeNow(), Kind: backlog.EvNotifyIntent,
		Notice: &backlog.NoticeRecord{ID: r.Notice.ID, Event: r.Notice.Event, Sink: r.Sink, Tries: r.Tries, Error: r.Err}}
	switch r.Action {
	case deliveredAction:
		ev.Kind, ev.Outcome = backlog.EvNotified, backlog.NotifyDelivered
	case failedAction:
		ev.Kind, ev.Outcome = backlog.EvNotified, backlog.NotifyFailed
	}
	return jsonfile.Append(j.file, ev)
}

func (j *runJournal) marker(string) error { return nil }
