// Package state owns the lane's lifecycle record and its reduction: the
// append-only events.jsonl, the one reducer that turns events plus runtime
// records into the lane and wave state that `status`, `status --json` and
// the dashboard all read, and the completed-wave ledger.
package state

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// Entity types of events, in the reference npm package's control-plane
// shape (docs/state.md).
const (
	EntityWaveRun  = "wave_run"
	EntityAttempt  = "attempt"
	EntityAgentRun = "agent_run"
	EntityGate     = "gate"
	EntityClosure  = "closure"
	EntityRetry    = "retry"
	// EntityBudget events: a spending cap passed its warning threshold
	// (warning) or was reached (exceeded); data.detail names cap and spend.
	EntityBudget = "budget"
	// EntityQuestion events are a question to a person (package
	// questions): asked, answered, unanswered, once each.
	EntityQuestion = "question"
	// EntityUsageLimit events: an executor's account is out (paused:
	// data.executor, data.until, data.detail, data.agentId; its agents
	// relaunch at until) or the pause ended (resumed).
	EntityUsageLimit = "usage_limit"
)

// Actions of usage-limit events.
const (
	UsagePaused  = "paused"
	UsageResumed = "resumed"
)

// Actions of question events.
const (
	QuestionAsked      = "asked"
	QuestionAnswered   = "answered"
	QuestionUnanswered = "unanswered"
)

// Event is one line of events.jsonl.
type Event struct {
	RecordVersion int            `json:"recordVersion"`
	ID            string         `json:"id"`
	Lane          string         `json:"lane"`
	Wave          int            `json:"wave"`
	RunKind       string         `json:"runKind"`
	RunID         string         `json:"runId,omitempty"`
	EntityType    string         `json:"entityType"`
	EntityID      string         `json:"entityId"`
	Action        string         `json:"action"`
	Source        string         `json:"source"`
	Actor         string         `json:"actor"`
	RecordedAt    time.Time      `json:"recordedAt"`
	Attempt       int            `json:"attempt,omitempty"`
	Data          map[string]any `json:"data,omitempty"`
}

// NewEvent fills the fixed fields of an event.
func NewEvent(lane string, wave int, entity, entityID, action string, attempt int, data map[string]any) Event {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return Event{
		RecordVersion: 1,
		ID:            "ctrl-" + entity + "-" + hex.EncodeToString(b[:]),
		Lane:          lane,
		Wave:          wave,
		RunKind:       "roadmap",
		EntityType:    entity,
		EntityID:      entityID,
		Action:        action,
		Source:        "launcher",
		Actor:         "launcher",
		RecordedAt:    time.Now().UTC(),
		Attempt:       attempt,
		Data:          data,
	}
}

// MaxEventsBytes bounds events.jsonl: a wave run that starts past it
// rotates the log to events.jsonl.1 (one generation kept), so the log
// never grows without limit across runs (the reference's run state reached
// 500 MB). Rotation happens only at a wave run's start, so the run in
// progress always reads from the current file.
const MaxEventsBytes = 8 << 20

// Append writes one event as a JSON line.
func Append(path string, ev Event) error {
	if ev.EntityType == EntityWaveRun && ev.Action == "started" {
		if fi, err := os.Stat(path); err == nil && fi.Size() > MaxEventsBytes {
			if err := os.Rename(path, path+".1"); err != nil {
				return fmt.Errorf("rotate %s: %w", path, err)
			}
		}
	}
	return jsonfile.Append(path, ev)
}

// ReadEvents reads the rotated generation and then events.jsonl. A corrupt
// line (e.g. a torn final line after a crash) is skipped and reported in
// bad as "path:line"; it never makes the whole log unreadable.
func ReadEvents(path string) (evs []Event, bad []string, err error) {
	old, badOld, err := jsonfile.ReadLines[Event](path + ".1")
	if err != nil {
		return nil, nil, err
	}
	cur, badCur, err := jsonfile.ReadLines[Event](path)
	return append(old, cur...), append(badOld, badCur...), err
}
