// Package questions is the lane's questions to people: an agent asks
// (a question record in its wave's coordination log, or a backlog
// worker's needs-input result), a person lists and answers them from the
// terminal, the dashboard or the browser, and the launcher or supervisor
// gives the answer to the agent that asked. The coordination logs and the
// backlog run logs stay the truth; this package only reads them, appends
// answers, and renders the answers for prompts.
package questions

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/coord"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// States of a question.
const (
	Pending    = "pending"
	Answered   = "answered"
	Unanswered = "unanswered" // the launcher gave up waiting (runtime.inputTimeoutMinutes)
)

// Kind is the coordination record kind `ask` writes.
const Kind = "human-feedback"

// Kinds are the coordination record kinds that are questions to people
// (the ones coord.WaitsOnPerson holds for).
var Kinds = []string{"human-feedback", "human-escalation", "clarification-request"}

// Question is one question of the lane to a person: a wave agent's
// (Wave set, ID the coordination record id) or a backlog worker's (Issue
// and RunID set). Text, Context and Answer are untrusted text: escape them
// for a terminal, fence them in a prompt.
type Question struct {
	ID         string     `json:"id"`
	Lane       string     `json:"lane"`
	Wave       *int       `json:"wave"`
	AgentID    string     `json:"agentId"`
	Attempt    int        `json:"attempt"`
	Issue      *int       `json:"issue"`
	RunID      string     `json:"runId"`
	Kind       string     `json:"kind"`
	Text       string     `json:"text"`
	Context    string     `json:"context"`
	Blocking   bool       `json:"blocking"`
	State      string     `json:"state"`
	Answer     string     `json:"answer"`
	Operator   string     `json:"operator"`
	AskedAt    time.Time  `json:"askedAt"`
	AnsweredAt *time.Time `json:"answeredAt"`
}

// Where says where a question was asked: "wave 3 / A1" or "issue #12".
func (q Question) Where() string {
	if q.Issue != nil {
		return fmt.Sprintf("issue #%d", *q.Issue)
	}
	if q.Wave != nil {
		return fmt.Sprintf("wave %d / %s", *q.Wave, q.AgentID)
	}
	return q.AgentID
}

// IsQuestion reports whether a coordination record is a question to a
// person.
func IsQuestion(r coord.Record) bool { return slices.Contains(Kinds, r.Kind) }

// FromRecord is the question a materialised coordination record of lane
// is. unanswered says the launcher recorded that it gave up waiting.
func FromRecord(lane string, r coord.Record, unanswered bool) Question {
	n := r.Wave
	q := Question{ID: r.ID, Lane: cmp.Or(r.Lane, lane), Wave: &n, AgentID: r.AgentID, Kind: r.Kind,
		Text: r.Summary, Context: r.Detail, Blocking: r.Blocking, State: Pending, AskedAt: r.CreatedAt,
		Answer: r.Answer, Operator: r.Operator, AnsweredAt: r.AnsweredAt}
	if r.Attempt != nil {
		q.Attempt = *r.Attempt
	}
	switch r.Status {
	case "open", "acknowledged", "in_progress":
		if unanswered {
			q.State = Unanswered
		}
	default:
		// Resolved by `answer` (Answer set) or by hand with `coord post
		// --status resolved --detail …`: answered either way.
		q.State = Answered
		if q.AnsweredAt == nil {
			at := r.UpdatedAt
			q.AnsweredAt = &at
		}
	}
	return q
}

// WaveQuestions are the questions of wave n's coordination log, oldest
// first, with bad lines reported (never fatal). unanswered holds the ids
// the launcher gave up on (UnansweredIDs).
func WaveQuestions(layout lanes.Layout, n int, unanswered map[string]bool) ([]Question, []string, error) {
	recs, bad, err := coord.Read(layout.CoordinationPath(n))
	if err != nil {
		return nil, bad, err
	}
	var out []Question
	for _, r := range coord.Materialize(recs) {
		if IsQuestion(r) && r.Source != "launcher" {
			out = append(out, FromRecord(layout.Lane, r, unanswered[r.ID]))
		}
	}
	sortOldestFirst(out)
	return out, bad, nil
}

// List is every question of the lane (layout.Lane): its waves'
// coordination logs and its backlog runs, oldest first. A corrupt line
// or run is skipped and reported in problems; only an unreadable state
// directory is an error.
func List(layout lanes.Layout) (qs []Question, problems []string, err error) {
	waves, err := layout.Waves()
	if err != nil {
		return nil, nil, err
	}
	un := UnansweredIDs(layout)
	for _, n := range waves {
		wq, bad, err := WaveQuestions(layout, n, un)
		for _, b := range bad {
			problems = append(problems, fmt.Sprintf("%s: unreadable line: %s", layout.CoordinationPath(n), b))
		}
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		qs = append(qs, wq...)
	}
	bq, bp := backlogQuestions(layout)
	qs = append(qs, bq...)
	problems = append(problems, bp...)
	sortOldestFirst(qs)
	return qs, problems, nil
}

// PendingOf filters qs to the questions still waiting (pending or
// unanswered: both can still be answered).
func PendingOf(qs []Question) []Question {
	var out []Question
	for _, q := range qs {
		if q.State != Answered {
			out = append(out, q)
		}
	}
	return out
}

func sortOldestFirst(qs []Question) {
	slices.SortStableFunc(qs, func(a, b Question) int {
		if c := a.AskedAt.Compare(b.AskedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// UnansweredIDs are the questions the launcher recorded as unanswered in
// the lane's event log (a later answered event clears one).
func UnansweredIDs(layout lanes.Layout) map[string]bool {
	evs, _, _ := state.ReadEvents(layout.EventsPath())
	return state.UnansweredQuestions(evs)
}

// NewID is a fresh question id ("q-" and 8 hex digits).
func NewID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "q-" + hex.EncodeToString(b[:])
}
