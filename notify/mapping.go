package notify

import (
	"fmt"
	"strconv"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// Modes of a notice.
const (
	ModeWave    = "wave"
	ModeBacklog = "backlog"
)

// EntityQuestion is the lane log's question events (the launcher appends
// one per question and transition; docs/state.md).
const EntityQuestion = "question"

// scope names the project and lane a notice is about, the start of every
// summary: "shop, lane main".
func scope(project, lane string) string {
	if project == "" {
		return "lane " + lane
	}
	return clip(project, 60) + ", lane " + lane
}

// FromLane maps one event of the lane's log to the notice people get, if
// any; project is the lane's project. Pure: the notice id is derived from
// the event's own id.
func FromLane(project string, ev state.Event) (Notice, bool) {
	wave := ev.Wave
	n := Notice{ID: "lane-" + ev.Lane + "-" + ev.ID, Project: project, Lane: ev.Lane, Mode: ModeWave, Wave: &wave, RunID: ev.RunID, At: ev.RecordedAt}
	str := func(k string) string { s, _ := ev.Data[k].(string); return s }
	where := fmt.Sprintf("%s: wave %d", scope(project, ev.Lane), ev.Wave)
	switch ev.EntityType {
	case EntityQuestion:
		n.QuestionID, n.AgentID, n.Question = ev.EntityID, str("agentId"), str("text")
		switch ev.Action {
		case "asked":
			n.Event, n.Context = QuestionAsked, str("context")
			kind := "asks"
			if b, _ := ev.Data["blocking"].(bool); b {
				kind = "asks (blocking)"
			}
			about := ""
			if n.Context != "" {
				about = " (context: " + clip(n.Context, 200) + ")"
			}
			n.Summary = fmt.Sprintf("%s: agent %s %s: %s%s [answer %s]", where, clip(n.AgentID, 40), kind, clip(n.Question, 300), about, n.QuestionID)
		case "answered":
			n.Event = QuestionAnswered
			n.Answer, n.Operator = str("answer"), str("operator")
			n.Summary = fmt.Sprintf("%s: question %s of agent %s answered", where, n.QuestionID, clip(n.AgentID, 40))
			if n.Operator != "" {
				n.Summary += " by " + clip(n.Operator, 40)
			}
		default:
			return Notice{}, false
		}
	case state.EntityWaveRun:
		switch ev.Action {
		case state.WaveCompleted:
			n.Event = WaveCompleted
		case state.WaveFailed:
			n.Event = WaveFailed
		case state.WaveBlocked:
			n.Event = WaveBlocked
		default:
			return Notice{}, false
		}
		n.Detail = failuresLine(ev.Data)
		n.Summary = fmt.Sprintf("%s %s", where, ev.Action)
		if n.Detail != "" {
			n.Summary += ": " + n.Detail
		}
	case state.EntityUsageLimit:
		if opened, _ := ev.Data["opened"].(bool); ev.Action != state.UsagePaused || !opened {
			return Notice{}, false // an extension or the end: told once, at the start
		}
		until, _ := time.Parse(time.RFC3339, str("until"))
		n.Event, n.AgentID, n.Detail = UsageLimited, str("agentId"), str("detail")
		n.Summary = fmt.Sprintf("%s: paused: %s usage limit%s (agent %s hit it): %s", where, clip(str("executor"), 40),
			untilText(&until), clip(n.AgentID, 40), clip(n.Detail, 300))
	case state.EntityAgentRun:
		if ev.Action != state.AgentStalled && ev.Action != state.AgentTimedOut && ev.Action != state.AgentNoProgress {
			return Notice{}, false
		}
		n.Event, n.AgentID, n.Detail = AgentStalled, str("agentId"), ev.Action
		n.Summary = fmt.Sprintf("%s: agent %s %s (attempt %d)", where, clip(n.AgentID, 40), ev.Action, ev.Attempt)
	default:
		return Notice{}, false
	}
	return n, true
}

// untilText is " until <time>" for a pause's end, "" when unknown.
func untilText(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return " until " + t.UTC().Format(time.RFC3339)
}

// failuresLine names a finished wave's failures in one line.
func failuresLine(data map[string]any) string {
	fs, _ := data["failures"].([]any)
	out := ""
	for i, f := range fs {
		m, _ := f.(map[string]any)
		who, _ := m["agentId"].(string)
		if who == "" {
			who, _ = m["gate"].(string)
		}
		code, _ := m["statusCode"].(string)
		if i == 3 {
			out += fmt.Sprintf(", and %d more", len(fs)-3)
			break
		}
		if out != "" {
			out += ", "
		}
		out += clip(who, 40) + " " + clip(code, 60)
	}
	return out
}

// FromBacklog maps one event of a backlog run's log to a notice, if any.
// run is the run's id, lane its lane, project the lane's project. An
// issue is merged once per run and the run has one final PR, so those ids
// name the issue (a repeated event is the same notice); the others carry
// the event's time.
func FromBacklog(project, lane, run string, ev backlog.Event) (Notice, bool) {
	n := Notice{Project: project, Lane: lane, Mode: ModeBacklog, RunID: run, Issue: ev.Issue, At: ev.At}
	where := fmt.Sprintf("%s: backlog run %s", scope(project, lane), run)
	issue := "#" + strconv.Itoa(ev.Issue)
	switch ev.Kind {
	case backlog.EvMerged:
		n.Event = IssueMerged
		n.Summary = fmt.Sprintf("%s: issue %s merged into the wave branch", where, issue)
	case backlog.EvNeedsInput:
		n.Event, n.Question = IssueNeedsInput, ev.Question
		n.Summary = fmt.Sprintf("%s: issue %s needs input: %s", where, issue, clip(ev.Question, 300))
	case backlog.EvParked:
		n.Event, n.Detail, n.Question = IssueParked, ev.Detail, ev.Question
		n.Summary = fmt.Sprintf("%s: issue %s parked: %s", where, issue, clip(ev.Detail, 300))
	case backlog.EvPR:
		if ev.Issue != 0 {
			return Notice{}, false // a worker PR: not news to anyone
		}
		n.Event, n.URL = FinalPROpened, ev.URL
		n.Summary = fmt.Sprintf("%s: final pull request #%d opened: %s", where, ev.Number, ev.URL)
	case backlog.EvForeignCommit:
		n.Event, n.Detail = ForeignCommit, ev.Detail
		n.Summary = fmt.Sprintf("%s: a commit it did not make is on its wave branch (%s); merges stopped", where, clip(ev.Commit, 12))
	case backlog.EvChecks:
		if ev.Issue != 0 || ev.Outcome == backlog.ChecksPending || ev.Outcome == backlog.ChecksMissing {
			return Notice{}, false // a worker's head, or not concluded yet
		}
		n.Event, n.Detail, n.URL = FinalPRChecks, ev.Detail, ev.URL
		n.Summary = fmt.Sprintf("%s: final pull request checks %s on %s", where, ev.Outcome, clip(ev.Commit, 12))
		if ev.Outcome != backlog.ChecksPassed {
			n.Summary += ": " + clip(ev.Detail, 300)
		}
	case backlog.EvUsageLimit:
		if ev.Outcome != backlog.UsagePaused {
			return Notice{}, false // an extension or the end: told once, at the start
		}
		n.Event, n.Detail = UsageLimited, ev.Detail
		n.Summary = fmt.Sprintf("%s: paused: %s usage limit%s (issue %s hit it): %s", where, clip(ev.Executor, 40), untilText(ev.Until), issue, clip(ev.Detail, 300))
	case backlog.EvAnswered:
		n.Event, n.Question, n.Answer, n.Operator = QuestionAnswered, ev.Question, ev.Answer, ev.By
		n.Summary = fmt.Sprintf("%s: issue %s answered", where, issue)
		if ev.By != "" {
			n.Summary += " by " + clip(ev.By, 40)
		}
	default:
		return Notice{}, false
	}
	n.ID = fmt.Sprintf("backlog-%s-%s-%d", run, n.Event, ev.Issue)
	if n.Event != IssueMerged && n.Event != FinalPROpened && n.Event != FinalPRChecks && n.Event != ForeignCommit {
		n.ID += "-" + strconv.FormatInt(ev.At.UnixNano(), 36)
	}
	return n, true
}
