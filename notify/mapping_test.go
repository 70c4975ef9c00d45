package notify

import (
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
		n, ok := FromLane(ev)
		if got := map[bool]string{true: n.Event}[ok]; got != tc.want {
			t.Errorf("%s %s → %q, want %q", tc.entity, tc.action, got, tc.want)
			continue
		}
		if ok && (n.ID != "lane-main-"+ev.ID || n.Summary == "" || n.Wave == nil || *n.Wave != 3) {
			t.Errorf("%s %s: notice %+v", tc.entity, tc.action, n)
		}
	}
	fail, _ := FromLane(state.NewEvent("main", 1, state.EntityWaveRun, "wave-1", state.WaveFailed, 2,
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
		{backlog.Event{Kind: backlog.EvPR, Issue: 4, URL: "https://x/pull/8", At: at}, "", ""},
		{backlog.Event{Kind: backlog.EvNeedsInput, Issue: 5, Question: "which db?", At: at}, IssueNeedsInput, ""},
		{backlog.Event{Kind: backlog.EvParked, Issue: 6, Detail: "verify failed", At: at}, IssueParked, ""},
		{backlog.Event{Kind: backlog.EvClaimed, Issue: 6, At: at}, "", ""},
		{backlog.Event{Kind: backlog.EvForeignCommit, Commit: "abc123", Ref: "def456", At: at}, ForeignCommit, "backlog-r1-foreign-commit-0"},
		{backlog.Event{Kind: backlog.EvUsageLimit, Outcome: backlog.UsagePaused, Executor: "claude", Issue: 3, Until: &at, At: at}, UsageLimited, ""},
		{backlog.Event{Kind: backlog.EvUsageLimit, Outcome: backlog.UsageExtended, Executor: "claude", Issue: 5, Until: &at, At: at}, "", ""},
		{backlog.Event{Kind: backlog.EvUsageLimit, Outcome: backlog.UsageResumed, Executor: "claude", At: at}, "", ""},
	} {
		n, ok := FromBacklog("main", "r1", tc.ev)
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
	a, _ := FromBacklog("main", "r1", backlog.Event{Kind: backlog.EvNeedsInput, Issue: 5, At: at})
	b, _ := FromBacklog("main", "r1", backlog.Event{Kind: backlog.EvNeedsInput, Issue: 5, At: at.Add(time.Second)})
	if a.ID == b.ID {
		t.Errorf("two needs-input events of one issue share id %q", a.ID)
	}
}
