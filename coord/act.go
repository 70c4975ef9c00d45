package coord

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Actions of `coord act` on a record.
const (
	ActResolve = "resolve"
	ActDismiss = "dismiss"
	ActReroute = "reroute"
)

// ErrClosed: the record is already resolved, closed, superseded or
// cancelled, so acting on it would change nothing.
var ErrClosed = errors.New("already closed")

// UnknownError is an id the log does not have; Open are the records that
// are, for the message.
type UnknownError struct {
	ID   string
	Wave int
	Open []string
}

func (e *UnknownError) Error() string {
	if len(e.Open) == 0 {
		return fmt.Sprintf("wave %d has no coordination record %q, and none is open", e.Wave, e.ID)
	}
	return fmt.Sprintf("wave %d has no coordination record %q; open: %s", e.Wave, e.ID, strings.Join(e.Open, ", "))
}

// Find returns the materialised record id of recs and every line with
// that id, oldest first.
func Find(recs []Record, wave int, id string) (Record, []Record, error) {
	var history []Record
	for _, r := range recs {
		if r.ID == id {
			history = append(history, r)
		}
	}
	var open []string
	for _, r := range Materialize(recs) {
		if r.ID == id {
			return r, history, nil
		}
		if IsOpen(r) {
			open = append(open, r.ID)
		}
	}
	return Record{}, nil, &UnknownError{ID: id, Wave: wave, Open: open}
}

// IsOpen reports whether a record still waits: open, acknowledged or in
// progress.
func IsOpen(r Record) bool {
	switch r.Status {
	case "open", "acknowledged", "in_progress":
		return true
	}
	return false
}

// Act returns the records to append for action on record id: a resolve
// or dismiss updates it (status resolved or cancelled) and every open
// record that depends on it (dependsOn names it); a reroute supersedes
// it and opens a request for agent `to`, depending on the old record.
// by is who acts (the updates' agentId stays the author's; a reroute's
// new request is posted by by).
func Act(recs []Record, wave int, action, id, detail, by, to string, now time.Time) ([]Record, error) {
	rec, _, err := Find(recs, wave, id)
	if err != nil {
		return nil, err
	}
	if !IsOpen(rec) {
		return nil, fmt.Errorf("record %s is %s: %w", id, rec.Status, ErrClosed)
	}
	now = now.UTC()
	update := func(r Record, status, why string) Record {
		r.Status, r.UpdatedAt = status, now
		if why != "" {
			r.Detail = why
		}
		return r
	}
	switch action {
	case ActResolve, ActDismiss:
		status := "resolved"
		if action == ActDismiss {
			status = "cancelled"
		}
		out := []Record{update(rec, status, detail)}
		for _, r := range Materialize(recs) {
			if r.ID != id && IsOpen(r) && slices.Contains(r.DependsOn, id) {
				out = append(out, update(r, status, ""))
			}
		}
		return out, nil
	case ActReroute:
		if to == "" {
			return nil, errors.New("reroute needs --to AGENT")
		}
		if by == "" {
			by = rec.AgentID
		}
		why := detail
		if why == "" {
			why = fmt.Sprintf("rerouted to %s", to)
		}
		n := Record{Kind: "request", Wave: rec.Wave, Lane: rec.Lane, AgentID: by, Targets: []string{"agent:" + to},
			Priority: rec.Priority, Summary: rec.Summary, Detail: rec.Detail, DependsOn: []string{id},
			ArtifactRefs: rec.ArtifactRefs, Attempt: rec.Attempt, Source: "operator"}
		if err := fill(&n, nil, now); err != nil {
			return nil, err
		}
		return []Record{update(rec, "superseded", why), n}, nil
	}
	return nil, fmt.Errorf("unknown action %q: want %s, %s or %s", action, ActResolve, ActDismiss, ActReroute)
}

// Inbox is what waits on agent: open records that target it, oldest
// first. With agent "" it is what waits on a person: open question and
// escalation records (human-feedback, human-escalation,
// clarification-request).
func Inbox(recs []Record, agent string) []Record {
	var out []Record
	for _, r := range Materialize(recs) {
		if !IsOpen(r) {
			continue
		}
		if agent == "" && slices.Contains([]string{"human-feedback", "human-escalation", "clarification-request"}, r.Kind) ||
			agent != "" && Targets(r, agent) {
			out = append(out, r)
		}
	}
	return out
}

// Append appends already-filled records (updates from Act) to the log.
func Append(path string, recs []Record, now time.Time) error {
	for _, r := range recs {
		b := r.Blocking
		if _, err := Post(path, r, &b, now); err != nil {
			return err
		}
	}
	return nil
}
