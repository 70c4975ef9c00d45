package notify

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

func TestLaneEventsMapToTheEventsPeopleSubscribeTo(t *testing.T) {
	for _, tc := range []struct {
		entity, action string
		data           map[string]any
		want           string // "" = no notice
	}{
		{EntityQuestion, "asked", map[string]any{"agentId": "A1", "text": "port?", "blocking": true}, QuestionAsked},
		{EntityQuestion, "answered", map[string]any{"agentId": "A1", "answer": "8080", "operator": "kim"}, QuestionAnswered},
		{EntityQuestion, "unanswered", nil, ""},
		{state.EntityWaveRun, state.WaveCompleted, nil, WaveCompleted},
		{state.EntityWaveRun, state.WaveFailed, map[string]any{"failures": []any{map[string]any{"agentId": "A1", "statusCode": "1"}}}, WaveFailed},
		{state.EntityWaveRun, state.WaveBlocked, nil, WaveBlocked},
		{state.EntityWaveRun, "started", nil, ""},
		{state.EntityWaveRun, state.WaveStopped, nil, ""},
		{state.EntityAgentRun, state.AgentStalled, map[string]any{"agentId": "A2"}, AgentStalled},
		{state.EntityAgentRun, state.AgentTimedOut, map[string]any{"agentId": "A2"}, AgentStalled},
		{state.EntityAgentRun, state.AgentCompleted, nil, ""},
		{state.EntityNotification, state.NotifyDelivered, nil, ""},
		// A usage limit is told once, when its pause opens.
		{state.EntityUsageLimit, state.UsagePaused, map[string]any{"executor": "claude", "until": "2026-12-06T15:00:00Z", "agentId": "A1", "opened": true}, UsageLimited},
		{state.EntityUsageLimit, state.UsagePaused, map[string]any{"executor": "claude", "agentId": "A2", "opened": false}, ""},
		{state.EntityUsageLimit, state.UsageResumed, map[string]any{"executor": "claude"}, ""},
	} {
		ev := state.NewEvent("main", 3, tc.entity, "x-1", tc.action, 1, tc.data)
		n, ok := FromLane("shop", ev)
		if got := map[bool]string{true: n.Event}[ok]; got != tc.want {
			t.Errorf("%s %s → %q, want %q", tc.entity, tc.action, got, tc.want)
			continue
		}
		if ok && (n.ID != "lane-main-"+ev.ID || n.Summary == "" || n.Wave == nil || *n.Wave != 3) {
			t.Errorf("%s %s: notice %+v", tc.entity, tc.action, n)
		}
	}
	fail, _ := FromLane("shop", state.NewEvent("main", 1, state.EntityWaveRun, "wave-1", state.WaveFailed, 2,
		map[string]any{"failures": []any{map[string]any{"agentId": "A1", "statusCode": "stalled"}}}))
	if fail.Detail != "A1 stalled" {
		t.Errorf("failed wave detail %q", fail.Detail)
	}
}

func TestBacklogEventsMapToNoticesWithStableIDs(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, tc := range []struct {
		ev     backlog.Event
		want   string
		wantID string
	}{
		{backlog.Event{Kind: backlog.EvMerged, Issue: 4, At: at}, IssueMerged, "backlog-r1-issue-merged-4"},
		{backlog.Event{Kind: backlog.EvMerged, Issue: 4, At: at.Add(time.Hour)}, IssueMerged, "backlog-r1-issue-merged-4"},
		{backlog.Event{Kind: backlog.EvPR, URL: "https://x/pull/9", Number: 9, At: at}, FinalPROpened, "backlog-r1-final-pr-opened-0"},
		{backlog.Event{Kind: backlog.EvChecks, Commit: "abc123", Outcome: backlog.ChecksFailed, Detail: "failed: ci (failure)", At: at}, FinalPRChecks, "backlog-r1-final-pr-checks-0"},
		{backlog.Event{Kind: backlog.EvChecks, Commit: "abc123", Outcome: backlog.ChecksPending, At: at}, "", ""},
		{backlog.Event{Kind: backlog.EvChecks, Issue: 3, Commit: "abc123", Outcome: backlog.ChecksFailed, At: at}, "", ""},
		{backlog.Event{Kind: backlog.EvPR, Issue: 4, URL: "https://x/pull/8", At: at}, "", ""},
		{backlog.Event{Kind: backlog.EvNeedsInput, Issue: 5, Question: "which db?", At: at}, IssueNeedsInput, ""},
		{backlog.Event{Kind: backlog.EvParked, Issue: 6, Detail: "verify failed", At: at}, IssueParked, ""},
		{backlog.Event{Kind: backlog.EvClaimed, Issue: 6, At: at}, "", ""},
		{backlog.Event{Kind: backlog.EvForeignCommit, Commit: "abc123", Ref: "def456", At: at}, ForeignCommit, "backlog-r1-foreign-commit-0"},
		{backlog.Event{Kind: backlog.EvUsageLimit, Outcome: backlog.UsagePaused, Executor: "claude", Issue: 3, Until: &at, At: at}, UsageLimited, ""},
		{backlog.Event{Kind: backlog.EvUsageLimit, Outcome: backlog.UsageExtended, Executor: "claude", Issue: 5, Until: &at, At: at}, "", ""},
		{backlog.Event{Kind: backlog.EvUsageLimit, Outcome: backlog.UsageResumed, Executor: "claude", At: at}, "", ""},
	} {
		n, ok := FromBacklog("shop", "main", "r1", tc.ev)
		if got := map[bool]string{true: n.Event}[ok]; got != tc.want {
			t.Errorf("%s → %q, want %q", tc.ev.Kind, got, tc.want)
		}
		if tc.wantID != "" && n.ID != tc.wantID {
			t.Errorf("%s id %q, want %q", tc.ev.Kind, n.ID, tc.wantID)
		}
	}
	j := &runJournal{lane: "main", run: "r1"}
	e := j.decode([]byte(`{"at":"2026-01-02T03:04:05Z","kind":"answered","issue":5,"question":"which db?","answer":"postgres","by":"kim"}`))
	if e.notice == nil || e.notice.Event != QuestionAnswered || e.notice.Answer != "postgres" || e.notice.Operator != "kim" || e.notice.Issue != 5 {
		t.Errorf("answered → %+v", e.notice)
	}
	a, _ := FromBacklog("shop", "main", "r1", backlog.Event{Kind: backlog.EvNeedsInput, Issue: 5, At: at})
	b, _ := FromBacklog("shop", "main", "r1", backlog.Event{Kind: backlog.EvNeedsInput, Issue: 5, At: at.Add(time.Second)})
	if a.ID == b.ID {
		t.Errorf("two needs-input events of one issue share id %q", a.ID)
	}
}

// A notice names the project it is about, in its JSON and in the line a
// person reads, and a question carries the context its asker gave.
func TestNoticesNameTheProjectAndCarryTheQuestionsContext(t *testing.T) {
	ev := state.NewEvent("main", 2, EntityQuestion, "q-7", "asked", 1, state.Data(state.QuestionData{
		AgentID: "A1", Text: "Which database?", Context: "The service has two:\nPostgres and SQLite.", Blocking: true}))
	n, ok := FromLane("shop", ev)
	if !ok || n.Project != "shop" || n.Context != "The service has two:\nPostgres and SQLite." {
		t.Fatalf("question-asked notice %+v", n)
	}
	for _, want := range []string{"shop, lane main: wave 2", "Which database?", "context: The service has two: Postgres and SQLite.", "[answer q-7]"} {
		if !strings.Contains(n.Summary, want) {
			t.Errorf("summary %q lacks %q", n.Summary, want)
		}
	}
	var body map[string]any
	if err := json.Unmarshal(n.webhookBody(), &body); err != nil || body["project"] != "shop" || body["context"] != n.Context ||
		!strings.Contains(body["text"].(string), "shop, lane main") {
		t.Errorf("webhook body %v (%v)", body, err)
	}
	b, _ := FromBacklog("shop", "main", "r1", backlog.Event{Kind: backlog.EvMerged, Issue: 4})
	if b.Project != "shop" || !strings.HasPrefix(b.Summary, "shop, lane main: backlog run r1") {
		t.Errorf("issue-merged notice %+v", b)
	}
}

// A question's context reaches sinks as safe as its text: a bidi
// override or an escape in it is written as a visible escape.
func TestAQuestionsContextIsMadeSafeForSinks(t *testing.T) {
	ev := state.NewEvent("main", 2, EntityQuestion, "q-7", "asked", 1, state.Data(state.QuestionData{
		AgentID: "A1", Text: "Which?", Context: "use v1 \u202eon\u202c\x1b[2J", Blocking: true}))
	n, _ := FromLane("shop\u202e", ev)
	var body map[string]any
	if err := json.Unmarshal(n.webhookBody(), &body); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"context", "project", "text"} {
		if s, _ := body[k].(string); strings.ContainsAny(s, "\u202e\u202c\x1b") {
			t.Errorf("%s reaches the webhook raw: %q", k, s)
		}
	}
}
