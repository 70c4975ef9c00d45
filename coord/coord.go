// Package coord owns a wave's coordination log (waves/<N>/coordination.jsonl):
// the records agents and the launcher append (claims, evidence, requests,
// decisions, blockers, handoffs), their defaults and validation, and the
// materialised view that says which records block closure.
package coord

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// Record is one coordination record, in the shape wave files and agents
// written for the reference npm package use (docs/wave-files.md).
type Record struct {
	RecordVersion   int       `json:"recordVersion"`
	ID              string    `json:"id"`
	Kind            string    `json:"kind"`
	Wave            int       `json:"wave"`
	Lane            string    `json:"lane"`
	AgentID         string    `json:"agentId"`
	Targets         []string  `json:"targets"`
	Status          string    `json:"status"`
	Priority        string    `json:"priority"`
	Blocking        bool      `json:"blocking"`
	BlockerSeverity string    `json:"blockerSeverity"`
	ArtifactRefs    []string  `json:"artifactRefs"`
	DependsOn       []string  `json:"dependsOn"`
	CreatedAt       time.Time `json:"createdAt"`
	UpdatedAt       time.Time `json:"updatedAt"`
	Confidence      string    `json:"confidence"`
	Summary         string    `json:"summary"`
	Detail          string    `json:"detail"`
	Attempt         *int      `json:"attempt"`
	Source          string    `json:"source"`
	// Answer, Operator and AnsweredAt are a person's answer to a question
	// record (package questions), set on the update that resolves it.
	Answer     string     `json:"answer,omitempty"`
	Operator   string     `json:"operator,omitempty"`
	AnsweredAt *time.Time `json:"answeredAt,omitempty"`
}

// The values each enumerated field of a Record accepts.
var (
	Kinds = []string{"request", "ack", "claim", "evidence", "decision", "blocker", "handoff",
		"clarification-request", "orchestrator-guidance", "resolved-by-policy", "human-escalation",
		"human-feedback", "integration-summary"}
	Statuses   = []string{"open", "acknowledged", "in_progress", "resolved", "closed", "superseded", "cancelled"}
	Priorities = []string{"low", "normal", "high", "urgent"}
	Severities = []string{"hard", "soft", "stale", "advisory", "proof-critical", "closure-critical"}
)

// Post fills defaults, validates, and appends rec to the log at path.
// Blocking defaults to true for request, blocker, clarification-request
// and human-* kinds; pass blocking to override.
func Post(path string, rec Record, blocking *bool, now time.Time) (Record, error) {
	if err := fill(&rec, blocking, now); err != nil {
		return rec, err
	}
	if err := jsonfile.Append(path, rec); err != nil {
		return rec, fmt.Errorf("coordination log: %w", err)
	}
	return rec, nil
}

func fill(rec *Record, blocking *bool, now time.Time) error {
	rec.RecordVersion = 1
	if !slices.Contains(Kinds, rec.Kind) {
		return fmt.Errorf("coordination record: kind %q: want one of %v", rec.Kind, Kinds)
	}
	if rec.AgentID == "" || rec.Summary == "" {
		return fmt.Errorf("coordination record: agent and summary are required")
	}
	if rec.Status == "" {
		rec.Status = "open"
		if rec.Kind == "resolved-by-policy" {
			rec.Status = "resolved"
		}
	}
	if rec.Priority == "" {
		rec.Priority = "normal"
	}
	if rec.Confidence == "" {
		rec.Confidence = "medium"
	}
	if rec.Source == "" {
		rec.Source = "agent"
	}
	for name, pair := range map[string][2]any{
		"status": {rec.Status, Statuses}, "priority": {rec.Priority, Priorities},
		"confidence": {rec.Confidence, []string{"low", "medium", "high"}},
	} {
		if !slices.Contains(pair[1].([]string), pair[0].(string)) {
			return fmt.Errorf("coordination record: %s %q: want one of %v", name, pair[0], pair[1])
		}
	}
	switch rec.Kind {
	case "request", "blocker", "clarification-request", "human-escalation", "human-feedback":
		rec.Blocking = true
	}
	if blocking != nil {
		rec.Blocking = *blocking
	}
	if rec.BlockerSeverity == "" {
		rec.BlockerSeverity = defaultSeverity(rec)
	} else if !slices.Contains(Severities, rec.BlockerSeverity) {
		return fmt.Errorf("coordination record: severity %q: want one of %v", rec.BlockerSeverity, Severities)
	}
	if rec.ID == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		rec.ID = "coord-" + rec.Kind + "-" + hex.EncodeToString(b[:])
	}
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = now.UTC()
	}
	rec.UpdatedAt = now.UTC()
	if rec.Targets == nil {
		rec.Targets = []string{}
	}
	if rec.ArtifactRefs == nil {
		rec.ArtifactRefs = []string{}
	}
	if rec.DependsOn == nil {
		rec.DependsOn = []string{}
	}
	return nil
}

func defaultSeverity(r *Record) string {
	switch {
	case !r.Blocking:
		return "advisory"
	case r.Kind == "human-escalation" || r.Kind == "human-feedback":
		return "hard"
	case r.Kind == "request" || r.Kind == "clarification-request":
		return "closure-critical"
	case r.Kind == "blocker" && (r.Priority == "high" || r.Priority == "urgent"):
		return "hard"
	case r.Kind == "blocker":
		return "soft"
	}
	return "advisory"
}

// Update returns old with the fields set in change applied: an update
// posted with only an id and a status keeps the record's kind, author,
// summary, targets and creation time.
func Update(old, change Record) Record {
	out := old
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&out.Kind, change.Kind)
	set(&out.Status, change.Status)
	set(&out.Priority, change.Priority)
	set(&out.Summary, change.Summary)
	set(&out.Detail, change.Detail)
	set(&out.BlockerSeverity, change.BlockerSeverity)
	if len(change.Targets) > 0 {
		out.Targets = change.Targets
	}
	if len(change.ArtifactRefs) > 0 {
		out.ArtifactRefs = change.ArtifactRefs
	}
	if change.Attempt != nil {
		out.Attempt = change.Attempt
	}
	return out
}

// Read reads the log; corrupt lines are reported, not fatal.
func Read(path string) (recs []Record, bad []string, err error) {
	return jsonfile.ReadLines[Record](path)
}

// Materialize orders records by updatedAt then id and lets a later record
// with the same id replace an earlier one (keeping the first createdAt).
func Materialize(recs []Record) []Record {
	sorted := slices.Clone(recs)
	sort.SliceStable(sorted, func(i, j int) bool {
		if !sorted[i].UpdatedAt.Equal(sorted[j].UpdatedAt) {
			return sorted[i].UpdatedAt.Before(sorted[j].UpdatedAt)
		}
		return sorted[i].ID < sorted[j].ID
	})
	idx := map[string]int{}
	var out []Record
	for _, r := range sorted {
		if i, ok := idx[r.ID]; ok {
			r.CreatedAt = out[i].CreatedAt
			out[i] = r
			continue
		}
		idx[r.ID] = len(out)
		out = append(out, r)
	}
	return out
}

// Blocks reports whether a materialised record holds closure: a blocker,
// clarification request or human escalation/feedback that is open,
// acknowledged or in progress, blocking, and not stale/advisory. Plain
// requests between agents do not hold closure (as in the reference, where
// the launcher's own opening requests never block completion).
func Blocks(r Record) bool {
	switch r.Kind {
	case "blocker", "clarification-request", "human-escalation", "human-feedback":
	default:
		return false
	}
	switch r.Status {
	case "open", "acknowledged", "in_progress":
	default:
		return false
	}
	return r.Blocking && r.BlockerSeverity != "stale" && r.BlockerSeverity != "advisory" && r.Source != "launcher"
}

// WaitsOnPerson reports whether an open blocking record can only be
// answered by a person, so rerunning an agent cannot clear it: a human
// escalation or feedback request, or a clarification request.
func WaitsOnPerson(r Record) bool {
	switch r.Kind {
	case "human-escalation", "human-feedback", "clarification-request":
		return Blocks(r)
	}
	return false
}

// Targets reports whether r is addressed to agent id ("agent:<id>", or
// the bare id).
func Targets(r Record, id string) bool {
	return slices.Contains(r.Targets, "agent:"+id) || slices.Contains(r.Targets, id)
}

// Open returns the materialised records that block closure.
func Open(recs []Record) []Record {
	var out []Record
	for _, r := range Materialize(recs) {
		if Blocks(r) {
			out = append(out, r)
		}
	}
	return out
}
