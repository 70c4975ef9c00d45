// Package state owns the lane's lifecycle record and its reduction: the
// append-only events.jsonl, the one reducer that turns events plus runtime
// records into the lane and wave state that `status`, `status --json` and
// the dashboard all read, and the completed-wave ledger.
package state

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Entity types of events (reference control-plane shape, §4.4).
const (
	EntityWaveRun  = "wave_run"
	EntityAttempt  = "attempt"
	EntityAgentRun = "agent_run"
	EntityGate     = "gate"
	EntityClosure  = "closure"
	EntityRetry    = "retry"
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

// MaxEventsBytes bounds events.jsonl: past it the file is rotated to
// events.jsonl.1 (one generation kept), so the log never grows without
// limit across runs (the reference's run state reached 500 MB).
const MaxEventsBytes = 8 << 20

// Append writes one event as a JSON line (O_APPEND, one write per event,
// so concurrent appenders never interleave within a line).
func Append(path string, ev Event) error {
	line, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("event %s: %w", ev.EntityID, err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Size()+int64(len(line)) > MaxEventsBytes {
		if err := os.Rename(path, path+".1"); err != nil {
			return fmt.Errorf("rotate %s: %w", path, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("append %s: %w", path, err)
	}
	_, werr := f.Write(append(line, '\n'))
	cerr := f.Close()
	if werr != nil {
		return fmt.Errorf("append %s: %w", path, werr)
	}
	return cerr
}

// ReadEvents reads events.jsonl. A corrupt line (e.g. a torn final line
// after a crash) is skipped and reported in bad as "path:line"; it never
// makes the whole log unreadable.
func ReadEvents(path string) (evs []Event, bad []string, err error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ev Event
		if err := json.Unmarshal(line, &ev); err != nil {
			bad = append(bad, fmt.Sprintf("%s:%d", path, n))
			continue
		}
		evs = append(evs, ev)
	}
	return evs, bad, sc.Err()
}

// WriteJSON writes v atomically (temp file, fsync, rename) with a trailing
// newline, so readers never see a partial file.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	serr := tmp.Sync()
	cerr := tmp.Close()
	if werr != nil || serr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, firstErr(werr, serr, cerr))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
