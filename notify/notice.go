package notify

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

// Event names people subscribe to (config.NotifyEvents).
const (
	QuestionAsked    = "question-asked"
	QuestionAnswered = "question-answered"
	WaveCompleted    = "wave-completed"
	WaveFailed       = "wave-failed"
	WaveBlocked      = "wave-blocked"
	AgentStalled     = "agent-stalled"
	IssueMerged      = "issue-merged"
	IssueNeedsInput  = "issue-needs-input"
	IssueParked      = "issue-parked"
	FinalPROpened    = "final-pr-opened"
	// ForeignCommit: a backlog run found a commit it did not make on its
	// wave branch and stopped merging.
	ForeignCommit = "foreign-commit"
	// FinalPRChecks: the final PR's required checks concluded (passed,
	// failed) or did not within backlog.checksTimeoutMinutes.
	FinalPRChecks = "final-pr-checks"
	// UsageLimited: an executor's account is out; its runs wait for the
	// reset (once per pause, backlog and wave mode).
	UsageLimited = "usage-limited"
)

// Notice is one event people are told about: the JSON a command reads on
// stdin and the body of a webhook POST (with text and content added). ID
// is stable across restarts, so a receiver can drop a repeat delivered in
// the crash window.
type Notice struct {
	ID    string `json:"id"`
	Event string `json:"event"`
	// Project is the lane's project (projectName, else the repository's
	// directory name): which repository the event is about.
	Project    string    `json:"project"`
	Lane       string    `json:"lane"`
	Mode       string    `json:"mode"` // wave | backlog
	Wave       *int      `json:"wave,omitempty"`
	RunID      string    `json:"runId,omitempty"`
	Issue      int       `json:"issue,omitempty"`
	AgentID    string    `json:"agentId,omitempty"`
	QuestionID string    `json:"questionId,omitempty"`
	Question   string    `json:"question,omitempty"` // untrusted: the agent's words
	Context    string    `json:"context,omitempty"`  // untrusted: what the asker gave with the question
	Answer     string    `json:"answer,omitempty"`   // untrusted
	Operator   string    `json:"operator,omitempty"`
	Title      string    `json:"title,omitempty"` // untrusted: an issue title
	URL        string    `json:"url,omitempty"`   // the final PR
	Detail     string    `json:"detail,omitempty"`
	At         time.Time `json:"at"`
	// Summary is the one line a person reads ("lane main: wave 2 completed").
	Summary string `json:"summary"`
}

// JSON is the notice as a command reads it, its text made safe (Safe).
func (n Notice) JSON() []byte {
	b, _ := json.Marshal(n.Safe())
	return b
}

// Safe is the notice with every text field an agent, a worker or an
// issue's author could have written passed through the terminal rule
// (internal/termtext): no control character, bidirectional override or
// isolate, or other invisible format character reaches a chat, a command
// or a desktop raw; each is written as a visible escape (\u202e), so
// what people read is what the text holds. One-line fields also lose
// colour sequences and line breaks.
func (n Notice) Safe() Notice {
	for _, f := range []*string{&n.AgentID, &n.QuestionID, &n.Operator, &n.Title, &n.URL, &n.RunID, &n.Lane, &n.Project, &n.Summary} {
		*f = termtext.Line(*f)
	}
	for _, f := range []*string{&n.Question, &n.Context, &n.Answer, &n.Detail} {
		*f = termtext.EscapeLines(*f)
	}
	return n
}

// webhookBody is the notice with the fields chat webhooks read: text
// (Slack, Discord's /slack endpoint, Mattermost) and content (Discord),
// with mentions turned off so an agent's words cannot page a channel.
func (n Notice) webhookBody() []byte {
	type body struct {
		Notice
		Text            string         `json:"text"`
		Content         string         `json:"content"`
		AllowedMentions map[string]any `json:"allowed_mentions"`
	}
	n = n.Safe()
	t := chatText(n.Summary)
	b, _ := json.Marshal(body{Notice: n, Text: t, Content: t, AllowedMentions: map[string]any{"parse": []string{}}})
	return b
}

// chatText escapes what chat services read as markup (<!channel>, links).
var chatText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace

// clip shortens untrusted text for a one-line summary.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func timeNow() time.Time { return time.Now().UTC() }
